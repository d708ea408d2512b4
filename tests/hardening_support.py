"""The servers of the hardening tests (DESIGN §23), each a real process on 127.0.0.1.

``served(project, protocol, *flags)`` runs ``silo-async serve --transport http`` (any protocol)
and ``scripted_model(script, *flags)`` runs ``silo-async scripted-model``; both read the startup
line, stop the process with SIGINT on the way out and check that its stderr holds no traceback.
"""

from __future__ import annotations

import contextlib
import json
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .serve_support import ENV_NAME, make_project, serve_command

#: A tool whose output holds a lone surrogate (half of an emoji), which UTF-8 cannot encode.
GHOST_TOOL = '''"""Tool ghost: answers with a lone surrogate, as text or inside an object."""

from typing import Any

import silo_async as silo


@silo.tool(
    name="ghost",
    description="Answer with half an emoji.",
    input_schema={
        "type": "object",
        "properties": {"structured": {"type": "boolean"}},
        "additionalProperties": False,
    },
)
def ghost(state: Any, input: dict[str, Any]) -> Any:
    half = "\\ud83d"
    return {"half": half, half: 1} if input.get("structured") else f"a{half}b"
'''

#: Seconds any one wait on a server may take before the test fails (a loaded 2-core machine).
WAIT_S = 60


def make_hardening_project(root: Path) -> Path:
    """The serve tests' ``sales`` project (crm, ``nap``, ``jot``) plus the ``ghost`` tool."""
    make_project(root)
    done = subprocess.run(
        [sys.executable, "-m", "silo_async", "tool", "add", "ghost", "--env", ENV_NAME],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    tool = root / ".silo" / "environments" / ENV_NAME / "tools" / "ghost.py"
    tool.write_text(GHOST_TOOL, encoding="utf-8")
    return root


class Served:
    """A server process: its startup information, its process and its stderr so far."""

    def __init__(self, proc: subprocess.Popen[str], info: dict[str, Any], log: Path) -> None:
        self.proc, self.info, self.log = proc, info, log
        self.url: str = info["url"]
        self.host, port = self.url.removeprefix("http://").split("/")[0].rsplit(":", 1)
        self.port = int(port)

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> int:
        """SIGINT, then its exit status."""
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=WAIT_S)


def _limit_files(files: int | None) -> Callable[[], None] | None:
    """Run the child under ``ulimit -n FILES`` (soft and hard: it cannot raise it)."""
    if files is None:
        return None

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    return limit


@contextlib.contextmanager
def _process(
    command: list[str], cwd: Path, log: Path, files: int | None = None
) -> Iterator[Served]:
    with (
        log.open("w", encoding="utf-8") as stderr,
        subprocess.Popen(
            command,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            preexec_fn=_limit_files(files),  # only setrlimit between fork and exec
        ) as proc,
    ):
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line, log.read_text(encoding="utf-8")
            info = json.loads(line) if line.startswith("{") else {"url": line.strip()}
            yield Served(proc, info, log)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=WAIT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    assert "Traceback" not in log.read_text(encoding="utf-8", errors="replace")


@contextlib.contextmanager
def served(project: Path, protocol: str, *flags: str, files: int | None = None) -> Iterator[Served]:
    """``silo-async serve --protocol P --transport http --port 0 --json FLAGS`` in ``project``.

    ``files``: the child's ``ulimit -n`` (None: this process's).
    """
    task = ("--task", "TASK-001") if protocol == "mcp" else ()
    command = serve_command(*task, "--protocol", protocol, "--transport", "http")
    log = project / f"serve-{protocol}-{len(list(project.glob('serve-*.err')))}.err"
    with _process([*command, "--port", "0", "--json", *flags], project, log, files) as server:
        yield server


@contextlib.contextmanager
def scripted_model(script: Path, *flags: str, files: int | None = None) -> Iterator[Served]:
    """``silo-async scripted-model SCRIPT --json FLAGS``, run in the script's directory."""
    command = [sys.executable, "-m", "silo_async", "scripted-model", str(script), "--json"]
    log = script.parent / f"model-{len(list(script.parent.glob('model-*.err')))}.err"
    with _process([*command, *flags], script.parent, log, files) as server:
        yield server
