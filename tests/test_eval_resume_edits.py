"""A resume sees edits: what the plan ran is what a resume runs, or it refuses.

``eval.json`` holds digests of every task, verifier source and the environment's data as the
plan ran them. Edit a task file (TASK-004 graded by VER-011 instead of VER-004, as the hostile
trial did), a verifier's module or a data file between a kill and its resume, and the resume is
``resume_conflict`` naming what changed, writing nothing; put it back and it resumes to the
uninterrupted eval. A run directory removed (or torn) after the eval finished is run again on
resume, not waved through as "Nothing to resume".
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .cli_support import cli
from .resume_support import same_eval

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")
PLAN = [
    "eval", "--env", "crm", "--task", "TASK-001", "--task", "TASK-004", "--agent",
    f"solver={SOLVER}", "--agent", NOOP, "--runs", "2", "--concurrency", "2",
]  # fmt: skip
ENV = Path(".silo") / "environments" / "crm"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    assert cli(*PLAN, "--out", "reference").exit_code == 0
    yield tmp_path


def _files(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()
    }


def _interrupted(project: Path) -> Path:
    """An eval whose last three rollouts and summary are gone, as a kill leaves it."""
    assert cli(*PLAN, "--out", "ev").exit_code == 0
    index = project / "ev" / "runs" / "index.jsonl"
    lines = index.read_text().splitlines()
    index.write_text("".join(line + "\n" for line in lines[:5]))
    for line in lines[5:]:
        shutil.rmtree(project / "ev" / json.loads(line)["runDir"])
    (project / "ev" / "summary.json").unlink()
    return project / "ev"


def _replace(path: Path, old: str, new: str) -> Callable[[], None]:
    """Edit ``path``; the function that puts it back."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))

    def put_back() -> None:
        path.write_text(text)

    return put_back


EDITS = {
    "task": (
        lambda p: _replace(p / ENV / "tasks" / "TASK-004.json", '"VER-004"', '"VER-011"'),
        'task "TASK-004"',
    ),
    "verifier": (
        lambda p: _replace(p / ENV / "verifiers" / "book_won_deal.py", "121500", "121400"),
        'verifier "VER-004"',
    ),
    "data": (
        lambda p: _replace(p / ENV / "data" / "clock.json", "2026-09-14", "2026-09-15"),
        'the data of environment "crm"',
    ),
    # The task names a verifier that is gone: the verifier is what changed, not the task.
    "verifier renamed": (
        lambda p: _replace(p / ENV / "verifiers" / "book_won_deal.py", '"VER-004"', '"VER-099"'),
        'verifier "VER-004"',
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_resume_refuses_what_changed_since_the_plan_ran_it(project: Path, edit: str) -> None:
    out = _interrupted(project)
    before = _files(out)
    make, named = EDITS[edit]
    put_back = make(project)
    refused = cli("eval", "--resume", "ev")
    assert refused.exit_code == 1
    assert refused.stderr.startswith(f"error: resume_conflict: {named} changed since eval "), (
        refused.stderr
    )
    assert len(refused.stderr.splitlines()) == 1
    assert _files(out) == before  # nothing written
    put_back()
    resumed = cli("eval", "--resume", "ev", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] == {"kept": 5, "rerun": 3}
    same_eval(project / "reference", out)


def test_a_run_directory_gone_or_torn_after_the_eval_finished_is_run_again(project: Path) -> None:
    assert cli(*PLAN, "--out", "ev").exit_code == 0
    text = (project / "ev" / "runs" / "index.jsonl").read_text()
    index = [json.loads(line) for line in text.splitlines()]
    shutil.rmtree(project / "ev" / index[2]["runDir"])  # gone
    (project / "ev" / index[6]["runDir"] / "run.json").write_text('{"formatVers')  # torn
    resumed = cli("eval", "--resume", "ev", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] == {"kept": 6, "rerun": 2}
    same_eval(project / "reference", project / "ev")
    again = cli("eval", "--resume", "ev")
    assert again.exit_code == 0 and again.stdout.startswith("Nothing to resume")


def test_a_run_file_nested_too_deeply_is_run_again_not_a_crash(project: Path) -> None:
    out = _interrupted(project)  # five rollouts kept, three to run
    kept = json.loads((out / "runs" / "index.jsonl").read_text().splitlines()[1])
    deep = "[" * 100_000 + "]" * 100_000  # Python's decoder gives up (it was internal_error)
    (out / kept["runDir"] / "result.json").write_text(deep)
    resumed = cli("eval", "--resume", "ev", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] == {"kept": 4, "rerun": 4}
    same_eval(project / "reference", out)


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    yield tmp_path


@pytest.mark.parametrize("edited", ["families/hand_over_account.py", "variation.py"])
def test_a_resume_refuses_a_task_family_whose_code_changed(bare: Path, edited: str) -> None:
    # An instance is graded by silo_async's gold grading, by what its family's module says
    # (gold calls, answer, checks) on the world vary made: that code is what must not change.
    family = ["eval", "--env", "crm", "--family", "hand-over-account", "--count", "2"]
    assert cli(*family, "--agent", NOOP, "--out", "fam").exit_code == 0
    (bare / "fam" / "summary.json").unlink()
    path = bare / ENV / edited
    text = path.read_text()
    path.write_text(text + "\n# edited after the eval ran\n")
    refused = cli("eval", "--resume", "fam")
    assert refused.exit_code == 1
    assert refused.stderr.startswith(
        """error: resume_conflict: task family "hand-over-account" (its code, or vary's) """
        "changed since eval "
    ), refused.stderr
    path.write_text(text)
    resumed = cli("eval", "--resume", "fam", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] == {"kept": 2, "rerun": 0}
