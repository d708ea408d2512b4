"""A crm project on disk for the serve tests, and the server processes they drive."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

#: A tool that sleeps and, when cancelled, leaves a marker file (so a test sees the interruption).
NAP_TOOL = '''"""Tool nap: sleeps; a cancelled nap writes "cancelled" to the marker file given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.types import TextContent

import anyio

import silo_async as silo


@silo.tool(
    name="nap",
    description="Sleep for a while.",
    input_schema={
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "marker": {"type": "string"}},
        "required": ["seconds"],
        "additionalProperties": False,
    },
)
async def nap(state: Any, input: dict[str, Any]) -> Any:
    try:
        await anyio.sleep(input["seconds"])
    except anyio.get_cancelled_exc_class():
        if "marker" in input:
            Path(input["marker"]).write_text("cancelled", encoding="utf-8")
        raise
    return "rested"
'''

#: A tool that writes to the world and returns every note this world holds (a leak shows).
JOT_TOOL = '''"""Tool jot: adds a note to the world and returns every note the world holds."""

from __future__ import annotations

from typing import Any

import silo_async as silo


@silo.tool(
    name="jot",
    description="Add a note; returns every note so far.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
)
def jot(state: Any, input: dict[str, Any]) -> Any:
    notes = state.setdefault("notes", {})
    note_id = f"NOTE-{len(notes) + 1:03d}"
    notes[note_id] = {"id": note_id, "text": input["text"]}
    return {"notes": [n["text"] for n in notes.values()]}
'''

ENV_NAME = "sales"


def text_of(result: Any) -> str:
    """The text of a tool result (every silo result has one text block)."""
    from mcp.types import TextContent  # the mcp extra: only its tests read results

    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def silo_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -m silo_async ARGS`` in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "silo_async", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def make_project(root: Path) -> Path:
    """A project with the crm template as environment ``sales``, plus ``nap`` and ``jot``."""
    root.mkdir(parents=True, exist_ok=True)
    done = silo_cli("init", ENV_NAME, "--template", "crm", cwd=root)
    assert done.returncode == 0, done.stderr
    for name, source in (("nap", NAP_TOOL), ("jot", JOT_TOOL)):
        done = silo_cli("tool", "add", name, "--env", ENV_NAME, cwd=root)
        assert done.returncode == 0, done.stderr
        tool = root / ".silo" / "environments" / ENV_NAME / "tools" / f"{name}.py"
        tool.write_text(source, encoding="utf-8")
    return root


def serve_command(*args: str) -> list[str]:
    """The ``serve`` command line for the ``sales`` environment."""
    return [sys.executable, "-m", "silo_async", "serve", "--env", ENV_NAME, *args]


def child_env() -> dict[str, str]:
    """The environment a server child needs (the stdio client passes almost nothing else)."""
    return dict(os.environ)


def run_files(project: Path, run_id: str) -> dict[str, Any]:
    """A served episode's run directory, read back."""
    run_dir = project / ".silo" / "runs" / run_id
    return {
        "result": json.loads((run_dir / "result.json").read_text(encoding="utf-8")),
        "result_bytes": (run_dir / "result.json").read_bytes(),
        "diff_bytes": (run_dir / "state-diff.json").read_bytes(),
        "trace": [
            json.loads(line)
            for line in (run_dir / "trace.jsonl").read_text(encoding="utf-8").splitlines()
        ],
    }


async def until_called(project: Path, tool: str, needle: str = "") -> None:
    """Return once a served episode of ``project`` has started a call of ``tool``.

    The trace gets the ``tool_call`` line before the tool runs, so a call seen there is in
    flight on the server (a fixed sleep would only guess, and loses on a loaded machine).
    ``needle``: a text the call's line must hold too (its input, say).
    """
    runs = project / ".silo" / "runs"
    while True:
        for trace in runs.glob("*/trace.jsonl"):
            for line in trace.read_text(encoding="utf-8").splitlines():
                if needle in line and _is_call(line, tool):
                    return
        await anyio.sleep(0.02)


def _is_call(line: str, tool: str) -> bool:
    try:
        event = json.loads(line)
    except ValueError:  # the line being written
        return False
    return bool(event.get("type") == "tool_call" and event.get("tool") == tool)


def only_run(project: Path) -> str:
    """The id of the one run the project holds."""
    runs = sorted(p.name for p in (project / ".silo" / "runs").iterdir())
    assert len(runs) == 1, runs
    return runs[0]
