"""Small things the CLI said that were not so: ``env validate --solver`` says what the solver
did; a model user without a key names its own flag; ``--user-model`` on tasks without a user
says once that it is not used.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import silo_async as silo
from silo_async.cli._models import note_unused_user_model

from .cli_support import cli
from .peers import require_module

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


def test_validate_with_a_solver_says_what_the_solver_did(project: Path) -> None:
    plain = cli("env", "validate", "--env", "crm")
    assert plain.stdout.splitlines()[-1].endswith("verifiers=11")
    assert json.loads(cli("env", "validate", "--env", "crm", "--json").stdout)["solver"] is None
    solved = cli("env", "validate", "--env", "crm", "--solver", SOLVER)
    assert solved.exit_code == 0, solved.output
    assert solved.stdout.splitlines()[-1].endswith("verifiers=11\tsolver passed 11/11")
    report = json.loads(cli("env", "validate", "--env", "crm", "--solver", SOLVER, "--json").stdout)
    assert report["solver"] == {"passed": 11, "tasks": 11}


def test_a_solver_that_fails_is_counted(project: Path) -> None:
    noop = str(ROOT / "examples" / "agents" / "noop.py")
    failed = cli("env", "validate", "--env", "crm", "--solver", noop)
    assert failed.exit_code == 1
    assert failed.stdout.splitlines()[-1].endswith("\tsolver passed 0/11")


def test_a_model_user_without_a_key_names_its_own_flag(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_module("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = ["run", "--env", "crm", "--task", "TASK-001", "--agent", SOLVER]
    result = cli(*args, "--user-model", "openai/gpt-4.1-mini")
    assert result.exit_code == 1
    assert "error: model_invalid: No API key for openai" in result.stderr
    assert "(--user-base-url, or --base-url)" in result.stderr


def test_a_user_model_on_tasks_without_a_user_says_so_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_module("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-used")  # no task here has a user to play
    args = ["--agent", SOLVER, "--user-model", "openai/gpt-4.1-mini"]
    ran = cli("run", "--env", "crm", "--task", "TASK-002", *args)
    assert ran.exit_code == 0, ran.output
    assert ran.stderr == (
        "note: --user-model is not used: task TASK-002 has no user (it plays the user of tasks "
        "that declare one).\n"
    )
    evaluated = cli("eval", "--env", "crm", "--tasks", "TASK-001,TASK-002", *args)
    assert evaluated.exit_code == 0, evaluated.output
    assert evaluated.stderr.count("note: --user-model is not used: no task here has a user") == 1


def test_the_note_counts_the_tasks_it_plays(capsys: pytest.CaptureFixture[str]) -> None:
    user = {"opening": "Hi.", "script": [{"when": [], "say": "Yes."}]}
    tasks = [silo.Task("A", "a", "a", "V"), silo.Task("B", "b", "b", "V", user=user)]
    note_unused_user_model("openai/m", tasks)
    assert capsys.readouterr().err == (
        "note: --user-model plays the user of 1 of 2 tasks; the others have no user (A).\n"
    )
    note_unused_user_model("openai/m", tasks[1:])
    note_unused_user_model(None, tasks)
    assert capsys.readouterr().err == ""
