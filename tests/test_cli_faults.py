"""Faults speak plainly: one coded line for broken registries and manifests, unwrapped groups,
a full disk, Ctrl-C; every code the CLI can print is in the table of docs/errors.md.
"""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

import silo_async as silo
from silo_async.cli._errors import CLI_ERROR_CODES, error_line, unexpected_line

from .cli_support import cli
from .docs_support import page

ROOT = Path(__file__).resolve().parent.parent
NOOP = str(ROOT / "examples" / "agents" / "noop.py")


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "demo").exit_code == 0
    return tmp_path / ".silo" / "environments" / "demo"


def one_error_line(result: Result, code: str) -> str:
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error: {code}: "), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


@pytest.mark.parametrize("registry", ["tools = 5", "tools = [5]", "tools = None"])
@pytest.mark.parametrize("command", [["tool", "list"], ["run", "--task", "TASK-1"]])
def test_a_broken_tool_registry_is_definition_invalid(
    demo: Path, registry: str, command: list[str]
) -> None:
    init = demo / "tools" / "__init__.py"
    init.write_text(re.sub(r"(?m)^tools\b.*$", registry, init.read_text()))
    (demo / "tasks" / "TASK-1.json").write_text(
        json.dumps({"id": "TASK-1", "title": "t", "instruction": "i", "verifierId": "VER-1"})
    )
    assert cli("verifier", "add", "VER-1", "--task", "TASK-1", "--env", "demo").exit_code == 0
    agent = ["--agent", NOOP] if command[0] == "run" else []
    line = one_error_line(cli(*command, "--env", "demo", *agent), "definition_invalid")
    assert "list of tools made with @silo.tool" in line or "expected tools made with" in line


@pytest.mark.parametrize("entrypoint", ["__init__\u0000.py", "x" * 5000 + ".py"])
def test_an_entrypoint_no_file_can_have_is_runtime_contract_invalid(
    demo: Path, entrypoint: str
) -> None:
    manifest = json.loads((demo / "silo.environment.json").read_text())
    manifest["entrypoint"] = entrypoint
    (demo / "silo.environment.json").write_text(json.dumps(manifest))
    line = one_error_line(cli("tool", "list", "--env", "demo"), "runtime_contract_invalid")
    assert "not a usable file name" in line and "silo.environment.json" in line


def test_tool_add_with_an_unknown_state_type_writes_nothing(demo: Path) -> None:
    before = {p: p.read_bytes() for p in demo.rglob("*") if p.is_file()}
    result = cli("tool", "add", "refund", "--env", "demo", "--state", "NoSuchState")
    line = one_error_line(result, "state_type_not_found")
    assert 'defines no "NoSuchState"' in line and "--state State" in line
    after = {p: p.read_bytes() for p in demo.rglob("*") if p.is_file()}
    assert after == before
    assert cli("tool", "list", "--env", "demo").exit_code == 0  # the environment still loads


def test_groups_of_failures_are_unwrapped_into_one_coded_line() -> None:
    full = [OSError(errno.ENOSPC, "No space left on device", "/x/runs/r0/result.json")]
    group = ExceptionGroup("unhandled errors in a TaskGroup", [*full, RuntimeError("x")] * 2)
    assert error_line(group) == (
        "error: disk_full: No space left on device while writing in /x/runs/r0; free some "
        "space there (or write elsewhere, e.g. eval --out DIR on another disk) and run again."
    )
    inner = ExceptionGroup("inner", [silo.SiloError("task_not_found", "T")])
    nested = ExceptionGroup("outer", [RuntimeError("first"), inner])  # the coded one wins
    assert error_line(nested) == "error: task_not_found: T"
    bugs = ExceptionGroup("g", [KeyError("a"), ValueError("b"), ValueError("c")])
    assert error_line(bugs) is None
    assert unexpected_line(bugs).startswith(
        "error: internal_error: unexpected KeyError: 'a' (and 2 more errors)"
    )


def _codes_the_cli_can_print() -> set[str]:
    """Codes named in the source where an error line is made: SiloError, fail(), CliError."""
    pattern = re.compile(r"""\b(?:SiloError|CliError|fail|AgentLoadError)\(\s*["']([a-z_]+)["']""")
    found: set[str] = set(silo.ERROR_CODES) | set(CLI_ERROR_CODES) | {"definition_invalid"}
    for path in (ROOT / "silo_async").rglob("*.py"):
        if "templates" in path.parts or "world" in path.parts:
            continue  # worlds' tool errors are values for agents, not CLI error lines
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            found.add(match.group(1))
    return found


def test_every_code_the_cli_can_print_is_in_the_errors_page() -> None:
    first_cells = re.findall(r"(?m)^\| (`[a-z_]+`(?: / `[a-z_]+`)*) \|", page("errors"))
    table = {code for cell in first_cells for code in re.findall(r"`([a-z_]+)`", cell)}
    missing = sorted(_codes_the_cli_can_print() - table)
    assert missing == [], f"add these codes to the table of docs/errors.md: {missing}"


# -- a full disk -----------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, almost full; skipped where it cannot be mounted (not root, no mount)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        (mount / "filler").write_bytes(b"\0" * 60_000)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--task", "TASK-001", "--runs", "3"],
        ["run", "--task", "TASK-001"],
        ["eval", "--task", "TASK-001", "--runs", "3", "--out", "{disk}/ev"],
    ],
)
def test_a_full_disk_is_one_disk_full_line_naming_the_directory(
    small_disk: Path, tmp_path: Path, command: list[str]
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    silo_cli = [sys.executable, "-m", "silo_async"]
    subprocess.run(
        [*silo_cli, "init", "crm", "--template", "crm"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
    )
    runs = tmp_path / ".silo" / "runs"
    runs.symlink_to(small_disk, target_is_directory=True)  # .silo/runs lives on the full disk
    args = [a.replace("{disk}", str(small_disk)) for a in command]
    done = subprocess.run(
        [*silo_cli, *args, "--env", "crm", "--agent", NOOP],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert err.startswith("error: disk_full: No space left on device while writing in "), err
    assert err.count("\n") == 1, err
    assert "ExceptionGroup" not in err and "internal_error" not in err
