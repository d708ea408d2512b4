"""Where runs are written is a file, or read-only: one ``not_writable`` line, not a bug report."""

from __future__ import annotations

import errno
import json
import sys
from pathlib import Path

import pytest
from click.testing import Result

from silo_async.cli._errors import error_line

from .cli_support import cli

NOOP = str(Path(__file__).resolve().parent.parent / "examples" / "agents" / "noop.py")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "demo").exit_code == 0
    env = tmp_path / ".silo" / "environments" / "demo"
    task = {"id": "TASK-1", "title": "t", "instruction": "i", "verifierId": "VER-1"}
    (env / "tasks" / "TASK-1.json").write_text(json.dumps(task))
    assert cli("verifier", "add", "VER-1", "--task", "TASK-1", "--env", "demo").exit_code == 0
    return tmp_path


def not_writable(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: not_writable: "), result.stderr
    assert result.stderr.count("\n") == 1
    return result.stderr


@pytest.mark.parametrize("runs", ["1", "3"])
def test_runs_dir_that_is_a_file(project: Path, runs: str) -> None:
    (project / ".silo" / "runs").write_text("")
    result = cli("run", "--env", "demo", "--task", "TASK-1", "--agent", NOOP, "--runs", runs)
    assert ".silo/runs is a file, not a directory" in not_writable(result)


def test_eval_out_under_a_file(project: Path) -> None:
    (project / "taken").write_text("")
    result = cli("eval", "--env", "demo", "--agent", NOOP, "--out", "taken/eval")
    assert "taken is a file, not a directory" in not_writable(result)


def test_read_only_or_forbidden_places_name_the_path() -> None:
    denied = PermissionError(errno.EACCES, "Permission denied", "/srv/evals/e1")
    assert error_line(denied) == (
        "error: not_writable: Permission denied: /srv/evals/e1; make it a directory you can "
        "write (or write elsewhere, e.g. eval --out DIR) and run again."
    )
    assert error_line(OSError(errno.EROFS, "Read-only file system", "/ro/x")) is not None
    assert error_line(OSError(errno.EIO, "I/O error", "/x")) is None  # not the user's setup
