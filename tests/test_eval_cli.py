"""``silo-async eval``, ``runs list|show`` and ``replay`` on the crm template in a temp project."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .cli_support import cli

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")

SLOW = """
import anyio

async def agent(ctx):
    await anyio.sleep(0.01)
    return ""
"""


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


def test_eval_json_ranks_the_solver_first(project: Path) -> None:
    result = cli(
        "eval",
        "--env",
        "crm",
        "--task",
        "TASK-001",
        "--task",
        "TASK-002",
        "--agent",
        f"solver={SOLVER}",
        "--agent",
        NOOP,
        "--runs",
        "2",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # stdout is pure JSON: no progress bar when not a terminal
    assert result.stderr == ""
    assert data["format"] == "silo_async.eval"
    assert data["ranking"] == ["solver", "noop"]
    assert data["config"]["tasks"] == ["TASK-001", "TASK-002"]
    assert data["finished"] == data["planned"] == 8
    out = Path(data["outDir"])
    assert out.parent == project / ".silo" / "evals" and out.name == data["evalId"]
    assert {p.name for p in out.iterdir()} == {
        "eval.json",
        "summary.json",
        "summary.md",
        "report.html",
        "runs",
    }
    lines = (out / "runs" / "index.jsonl").read_text().splitlines()
    assert len(lines) == 8 and json.loads(lines[0])["agent"] == "solver"


def test_stdout_carries_the_result_only_while_an_eval_runs(project: Path) -> None:
    # What is printed to stdout during the eval (an agent's prints here; Ray's driver prints
    # its "a worker died" lines there too) goes to stderr: --json stays one JSON document.
    (project / "chatty.py").write_text(
        "async def agent(ctx):\n    print('thinking out loud')\n    return ''\n"
    )
    result = cli("eval", "--env", "crm", "--task", "TASK-001", "--agent", "chatty.py", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["finished"] == 1
    assert "thinking out loud" in result.stderr


def test_eval_text_and_out_dir(project: Path) -> None:
    result = cli(
        "eval",
        "--env",
        "crm",
        "--tasks",
        "all",
        "--agent",
        NOOP,
        "--agent",
        f"solver={SOLVER}",
        "--out",
        "ev",
    )
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "11/11 1.00 *" in text  # solver's "all tasks" cell is marked
    assert "TASK-011" in text and "Report   ev/report.html" in text
    assert (project / "ev" / "summary.json").is_file()
    again = cli("eval", "--env", "crm", "--agent", NOOP, "--out", "ev")
    assert again.exit_code == 1 and "already exists" in again.stderr


def test_eval_on_trio(project: Path) -> None:
    result = cli(
        "--backend",
        "trio",
        "eval",
        "--env",
        "crm",
        "--task",
        "TASK-003",
        "--agent",
        SOLVER,
        "--runs",
        "3",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["agents"][0]["agent"] == "crm_solver" and data["agents"][0]["passes"] == 3


def test_eval_agent_and_flag_errors(project: Path) -> None:
    dup = cli("eval", "--env", "crm", "--agent", NOOP, "--agent", NOOP)
    assert dup.exit_code == 1
    assert 'error: agent_invalid: Two agents are labelled "noop"' in dup.stderr
    both = cli("eval", "--env", "crm", "--task", "TASK-001", "--tasks", "all", "--agent", NOOP)
    assert both.exit_code == 2
    unknown = cli("eval", "--env", "crm", "--task", "TASK-999", "--agent", NOOP)
    assert unknown.exit_code == 1 and unknown.stderr.startswith("error: task_not_found:")


def _first_run(project: Path) -> str:
    result = cli("eval", "--env", "crm", "--task", "TASK-001", "--agent", SOLVER, "--json")
    assert result.exit_code == 0, result.output
    out = Path(json.loads(result.stdout)["outDir"])
    return str(json.loads((out / "runs" / "index.jsonl").read_text().splitlines()[0])["runId"])


def test_runs_list_and_show(project: Path) -> None:
    assert cli("run", "--env", "crm", "--task", "TASK-001", "--agent", SOLVER).exit_code == 0
    listed = cli("runs", "list", "--env", "crm", "--json")
    assert listed.exit_code == 0, listed.output
    runs = json.loads(listed.stdout)
    assert len(runs) == 1 and runs[0]["taskId"] == "TASK-001" and runs[0]["passed"] is True
    assert json.loads(cli("runs", "list", "--env", "other", "--json").stdout) == []
    run_id = runs[0]["runId"]
    shown = cli("runs", "show", run_id)
    assert shown.exit_code == 0, shown.output
    assert "Result      PASS" in shown.stdout
    assert "Trace (2 tool calls)" in shown.stdout
    assert '#1 search_leads {"query":' in shown.stdout and " ms)" in shown.stdout
    as_json = json.loads(cli("runs", "show", run_id, "--json").stdout)
    assert as_json["runId"] == run_id and as_json["trace"][0]["tool"] == "search_leads"
    missing = cli("runs", "show", "run_nope")
    assert missing.exit_code == 1
    assert missing.stderr.startswith('error: run_not_found: Run "run_nope" was not')


def test_runs_of_an_eval_are_found_by_id(project: Path) -> None:
    run_id = _first_run(project)
    assert cli("runs", "show", run_id).exit_code == 0
    eval_id = next((project / ".silo" / "evals").iterdir()).name
    listed = json.loads(cli("runs", "list", "--eval", eval_id, "--json").stdout)
    assert [r["runId"] for r in listed] == [run_id]


def test_replay_identical_then_after_a_verifier_change(project: Path) -> None:
    run_id = _first_run(project)
    same = cli("replay", run_id)
    assert same.exit_code == 0, same.output
    assert "Tool calls   2/2 outputs match" in same.stdout
    assert "Identical to the recording." in same.stdout
    verifier = project / ".silo" / "environments" / "crm" / "verifiers" / "convert_new_lead.py"
    source = verifier.read_text(encoding="utf-8")
    assert '"lead is converted"' in source
    verifier.write_text(source.replace('"lead is converted"', '"lead was converted"'))
    changed = cli("replay", run_id, "--json")
    assert changed.exit_code == 1
    data = json.loads(changed.stdout)
    assert data["identical"] is False and data["stateDiffIdentical"] is True
    assert data["callsMatching"] == 2
    assert any("lead was converted" in d for d in data["differences"])


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_keeps_finished_rollouts(project: Path) -> None:
    (project / "slow.py").write_text(SLOW)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "silo_async",
            "eval",
            "--env",
            "crm",
            "--agent",
            "slow.py",
            "--runs",
            "200",
            "--concurrency",
            "2",
            "--out",
            "ev",
        ],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    runs = project / "ev" / "runs"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if runs.is_dir() and sum(p.is_dir() for p in runs.iterdir()) >= 6:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    data = json.loads((project / "ev" / "summary.json").read_text())
    assert data["cancelled"] is True and data["complete"] is False
    assert 4 <= data["finished"] < data["planned"] == 2200
    index = [json.loads(line) for line in (runs / "index.jsonl").read_text().splitlines()]
    assert len(index) == data["finished"] + data["interrupted"]
    assert {r["runId"] for r in index} == {p.name for p in runs.iterdir() if p.is_dir()}
    assert b"eval cancelled:" in err
    # the tables of what finished, as a finished eval prints them, the partial note above them
    assert out.index(b"Partial eval (cancelled)") < out.index(b"rank  agent")
    assert b"Side by side" in out and b"Report   ev/report.html" in out
