"""One broken task file blocks nothing but itself.

``task list`` and ``run``/``eval`` of other tasks work beside it (naming it on stderr); its own
task is its own error; ``env validate`` reports it as one finding with every problem it has
(and the unregistered verifier it names), with no ``verifier_orphan`` for its verifier.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import silo_async as silo

from .cli_support import cli
from .peers import require_module

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
BROKEN = {"id": "TASK-001", "title": 5, "verifierId": "VER-404"}
NOTE = (
    "note: tasks/TASK-001.json is left out: it cannot be read (silo-async env validate --env "
    "crm lists its problems).\n"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


def _break(project: Path, text: str) -> None:
    (project / ".silo" / "environments" / "crm" / "tasks" / "TASK-001.json").write_text(text)


def test_every_problem_of_a_task_is_named_at_once() -> None:
    with pytest.raises(silo.SiloError) as caught:
        silo.Task.from_dict({**BROKEN, "difficulty": 3}, source="Task T")
    error = caught.value
    assert error.code == "task_invalid" and error.details["field"] == "title"
    assert error.message == (
        'Task T has 3 problems: (1) it has "title" as a number; it must be a non-empty string. '
        '(2) it is missing a non-empty "instruction". (3) it has "difficulty" as a number; it '
        'must be a string such as "easy", "medium" or "hard" (leave it out for "unspecified").'
    )
    assert [p["field"] for p in error.details["problems"]] == ["title", "instruction", "difficulty"]
    with pytest.raises(silo.SiloError, match=r'^Task T is missing a non-empty "title"\.$'):
        silo.Task.from_dict({"id": "T", "instruction": "x", "verifierId": "V"}, source="Task T")


def test_task_list_and_show_work_beside_a_broken_file(project: Path) -> None:
    _break(project, json.dumps(BROKEN))
    listed = cli("task", "list", "--env", "crm")
    assert listed.exit_code == 0
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()][:2] == [
        "TASK-002",
        "TASK-003",
    ]
    assert len(listed.stdout.splitlines()) == 10 and listed.stderr == NOTE
    assert cli("task", "show", "TASK-002", "--env", "crm").exit_code == 0
    shown = cli("task", "show", "TASK-001", "--env", "crm")
    assert shown.exit_code == 1 and "has 2 problems" in shown.stderr


def test_run_and_eval_of_other_tasks_work_beside_a_broken_file(project: Path) -> None:
    _break(project, json.dumps(BROKEN))
    ran = cli("run", "--env", "crm", "--task", "TASK-002", "--agent", SOLVER)
    assert ran.exit_code == 0, ran.output
    assert "Result      PASS" in ran.stdout and ran.stderr == NOTE
    evaluated = cli("eval", "--env", "crm", "--agent", SOLVER, "--tasks", "TASK-002,TASK-003")
    assert evaluated.exit_code == 0, evaluated.output
    own = cli("run", "--env", "crm", "--task", "TASK-001", "--agent", SOLVER)
    assert own.exit_code == 1
    assert own.stderr.startswith(
        'error: task_invalid: Task file "tasks/TASK-001.json" in environment "crm" has 2 problems'
    )
    every = cli("eval", "--env", "crm", "--agent", SOLVER)  # every task: this one too
    assert every.exit_code == 1 and "error: task_invalid:" in every.stderr


def test_validate_reports_a_broken_task_as_one_finding(project: Path) -> None:
    _break(project, json.dumps(BROKEN))
    report = json.loads(cli("env", "validate", "--env", "crm", "--json").stdout)
    assert report["ok"] is False and report["counts"]["tasks"] == 11
    assert [f["code"] for f in report["findings"]] == ["task_invalid"]  # no verifier_orphan
    (finding,) = report["findings"]
    assert finding["message"] == (
        'Task file "tasks/TASK-001.json" in environment "crm" has 2 problems: (1) it has "title" '
        'as a number; it must be a non-empty string. (2) it is missing a non-empty "instruction". '
        'It also names verifier "VER-404", which is not registered.'
    )


def test_a_file_that_is_not_json_is_one_finding_too(project: Path) -> None:
    _break(project, '{"id": "TASK-001", ')
    report = json.loads(cli("env", "validate", "--env", "crm", "--json").stdout)
    assert [f["code"] for f in report["findings"]] == ["invalid_json"]
    ran = cli("run", "--env", "crm", "--task", "TASK-004", "--agent", SOLVER)
    assert ran.exit_code == 0 and ran.stderr == NOTE
    own = cli("run", "--env", "crm", "--task", "TASK-001", "--agent", SOLVER)
    assert own.exit_code == 1 and own.stderr.startswith("error: invalid_json:")


def test_the_library_raises_unless_asked_to_collect(project: Path) -> None:
    _break(project, json.dumps(BROKEN))
    with pytest.raises(silo.SiloError, match="has 2 problems"):
        silo.load_environment("crm")
    broken: list[silo.SiloError] = []
    env = silo.load_environment("crm", broken_tasks=broken)
    assert [t.id for t in env.tasks][:1] == ["TASK-002"] and len(env.tasks) == 10
    ((problem),) = broken
    assert problem.details["file"] == "tasks/TASK-001.json" and problem.details["id"] == "TASK-001"
    assert problem.details["verifierId"] == "VER-404"


def test_serve_of_another_task_works_beside_a_broken_file(project: Path) -> None:
    require_module("mcp")
    _break(project, json.dumps(BROKEN))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def serve(task: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "silo_async", "serve", "--env", "crm", "--task", task]
        return subprocess.run(
            command, cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=60, check=False,
        )  # fmt: skip

    other = serve("TASK-002")  # stdio: no client, so the episode ends at once
    assert other.returncode == 0, other.stderr
    assert other.stderr.startswith(NOTE) and "Task        TASK-002" in other.stderr
    own = serve("TASK-001")
    assert own.returncode == 1 and "error: task_invalid:" in own.stderr
