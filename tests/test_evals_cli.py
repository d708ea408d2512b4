"""Finding an eval again: ``evals list``, ``report EVAL`` (``--open``), and ``runs show`` of a
run in any eval the project knows, ``--out`` ones included; an eval read back from its files
is the eval that wrote them.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import silo_async as silo
from silo_async.eval import evaluate, read_summary
from silo_async.eval._loaded import load_summary
from silo_async.runs import EvalDir

from .cli_support import cli
from .test_eval_partial import cancelled_eval
from .test_eval_support import bad_agent, faulty_agent, good_agent, make_env

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "project"
    home.mkdir()
    monkeypatch.chdir(home)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return home


def _eval(*extra: str) -> tuple[str, str]:
    """Run a small crm eval; its id and what it printed."""
    args = ["eval", "--env", "crm", "--agent", f"solver={SOLVER}", "--agent", NOOP]
    result = cli(*args, "--tasks", "TASK-001,TASK-004", "--runs", "2", *extra)
    assert result.exit_code == 0, result.output
    first = result.stdout.split()[1]
    return first, result.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="a file name that is not UTF-8")
def test_an_out_directory_whose_name_is_not_utf8_is_remembered_and_found(
    project: Path, tmp_path: Path
) -> None:
    out = os.fsdecode(os.fsencode(tmp_path) + b"/ev\xffx")  # the byte 0xff: U+DCFF in Python
    eval_id, _ = _eval("--out", out)  # it was internal_error: UnicodeEncodeError
    listed = json.loads(cli("evals", "list", "--json").stdout)
    assert [e["evalId"] for e in listed] == [eval_id]
    assert cli("runs", "list", "--eval", eval_id).stdout.count("\n") == 8
    done = cli("eval", "--resume", out)
    assert done.exit_code == 0 and done.stdout.startswith("Nothing to resume")


def test_evals_list_shows_every_eval_the_project_knows(project: Path, tmp_path: Path) -> None:
    assert cli("evals", "list").stdout.startswith("No evals yet")
    here, _ = _eval()
    elsewhere, _ = _eval("--out", str(tmp_path / "elsewhere"))
    unfinished, _ = _eval()
    (project / ".silo" / "evals" / unfinished / "summary.json").unlink()  # killed before it
    listed = json.loads(cli("evals", "list", "--json").stdout)
    assert [e["evalId"] for e in listed] == [here, elsewhere, unfinished]
    assert [e["state"] for e in listed] == ["complete", "complete", "stopped"]
    assert listed[0]["agents"] == ["solver", "noop"]
    assert [(e["finished"], e["planned"]) for e in listed] == [(8, 8)] * 3
    assert listed[1]["path"] == str(tmp_path / "elsewhere")
    text = cli("evals", "list").stdout.splitlines()
    assert text[0].split() == ["eval", "started", "env", "agents", "rollouts", "state", "directory"]
    assert here in text[1] and "../elsewhere" in text[2] and "stopped" in text[3]


def test_report_prints_what_eval_printed(project: Path, tmp_path: Path) -> None:
    eval_id, printed = _eval()
    assert cli("report", eval_id).stdout == printed
    out = tmp_path / "elsewhere"
    other_id, other = _eval("--out", str(out))
    assert cli("report", other_id).stdout == other  # found by id, written with --out
    assert cli("report", str(out)).stdout == other  # or by its directory
    data = json.loads(cli("report", other_id, "--json").stdout)
    assert data["evalId"] == other_id and data["report"] == str(out / "report.html")


def test_report_without_an_eval_shows_the_latest(project: Path, tmp_path: Path) -> None:
    none = cli("report")
    assert none.exit_code == 1 and "No eval of this project has a summary yet" in none.stderr
    _eval()
    _, latest = _eval("--out", str(tmp_path / "elsewhere"))
    stopped, _ = _eval()
    (project / ".silo" / "evals" / stopped / "summary.json").unlink()  # no summary: skipped
    assert cli("report").stdout == latest


def test_report_of_an_unknown_or_unfinished_eval_says_what_to_do(project: Path) -> None:
    missing = cli("report", "eval_nope")
    assert missing.exit_code == 1
    assert "error: eval_not_found:" in missing.stderr and "evals list" in missing.stderr
    eval_id, _ = _eval()
    (project / ".silo" / "evals" / eval_id / "summary.json").unlink()
    unfinished = cli("report", eval_id)
    assert unfinished.exit_code == 1 and "has no summary yet: it stopped" in unfinished.stderr
    assert f"eval --resume .silo/evals/{eval_id}" in unfinished.stderr


def test_report_open_opens_the_report_in_a_browser(project: Path, tmp_path: Path) -> None:
    eval_id, _ = _eval()
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(browser.stat().st_mode | stat.S_IEXEC)
    done = subprocess.run(
        [sys.executable, "-m", "silo_async", "report", eval_id, "--open"],
        cwd=project,
        env={**os.environ, "BROWSER": str(browser), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = project / ".silo" / "evals" / eval_id / "report.html"
    assert opened.read_text().strip() == report.as_uri()


def test_runs_show_finds_a_run_of_an_eval_written_elsewhere(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere"
    eval_id, _ = _eval("--out", str(out))
    run_id = json.loads((out / "runs" / "index.jsonl").read_text().splitlines()[0])["runId"]
    shown = cli("runs", "show", run_id)
    assert shown.exit_code == 0, shown.output
    assert "Task        TASK-001" in shown.stdout
    assert cli("runs", "show", run_id[-10:]).exit_code == 0  # the end of its id
    assert cli("runs", "list", "--eval", eval_id).stdout.count("run_") == 8
    missing = cli("runs", "show", "run_20990101T000000000_000001_abcdef0123")
    assert missing.exit_code == 1
    assert "Give the run directory's path instead: EVAL_DIR/runs/RUN_ID" in missing.stderr


def test_an_eval_moved_away_is_forgotten_not_an_error(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere"
    _eval("--out", str(out))
    out.rename(tmp_path / "moved")
    assert cli("evals", "list").stdout.startswith("No evals yet")


@pytest.mark.anyio
async def test_an_eval_read_back_is_the_eval_that_wrote_it(tmp_path: Path) -> None:
    agents: dict[str, silo.Agent] = {"good": good_agent, "bad": bad_agent, "faulty": faulty_agent}
    plain = tmp_path / "plain"
    await evaluate(make_env(), None, agents, runs=3, out_dir=plain)
    faulted = tmp_path / "faulted"
    prices = {"*": {"input": 1.0, "output": 2.0}}
    await evaluate(
        make_env(), None, agents, runs=2, out_dir=faulted, faults="unavailable@0.3",
        baseline=True, prices=prices,
    )  # fmt: skip
    cancelled = tmp_path / "cancelled"
    await cancelled_eval(cancelled)
    for eval_dir in (plain, faulted, cancelled):
        assert load_summary(eval_dir).to_dict() == read_summary(eval_dir), eval_dir


def test_an_eval_still_running_is_listed_as_running(project: Path) -> None:
    eval_id, _ = _eval()
    path = project / ".silo" / "evals" / eval_id
    (path / "summary.json").unlink()
    held = EvalDir(path)
    held.lock()  # as the eval writing it holds it
    try:
        (listed,) = json.loads(cli("evals", "list", "--json").stdout)
        assert listed["state"] == "running"
        report = cli("report", eval_id)
        assert report.exit_code == 1 and "has no summary yet: it is still running" in report.stderr
    finally:
        held.unlock()
    assert json.loads(cli("evals", "list", "--json").stdout)[0]["state"] == "stopped"
