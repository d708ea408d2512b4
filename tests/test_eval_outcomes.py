"""Crashes and limits are visible everywhere an eval reports, and ``--fail-under`` gates CI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from silo_async.cli._eval import summary_text
from silo_async.eval import evaluate, read_summary

from .cli_support import cli
from .test_eval_support import crashing_agent, good_agent, greedy_agent, make_env

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")
CRASH = """
async def agent(ctx):
    raise KeyError("content")
"""


@pytest.mark.anyio
async def test_crashes_and_limits_are_counted_in_every_summary(tmp_path: Path) -> None:
    agents = {"good": good_agent, "crash": crashing_agent, "greedy": greedy_agent}
    out = tmp_path / "ev"
    summary = await evaluate(make_env(), None, agents, runs=2, max_tool_calls=3, out_dir=out)
    text = summary_text(summary, tmp_path)
    header = next(line for line in text.splitlines() if line.startswith("rank"))
    assert "faults" in header and "ended early" in header
    crash_line = next(line for line in text.splitlines() if " crash " in line)
    assert "4 agent_error" in crash_line
    greedy_line = next(line for line in text.splitlines() if " greedy " in line)
    assert "4 max_tool_calls" in greedy_line
    # per task: the side-by-side cells carry the reasons too (E = agent_error, L = a limit)
    t1 = next(line for line in text.splitlines() if line.startswith("T-1"))
    assert "(2E)" in t1 and "(2L)" in t1 and "E = agent_error" in text
    md = (out / "summary.md").read_text()
    assert "| ended early |" in md
    assert "| 4 agent_error |" in md and "| 4 max_tool_calls |" in md
    assert "· 2 agent_error" in md
    data = read_summary(out)
    crash = next(a for a in data["agents"] if a["agent"] == "crash")
    assert crash["terminationReasons"]["agent_error"] == 4
    good = next(a for a in data["agents"] if a["agent"] == "good")
    # every reason is present (0 included), so readers need no guard
    assert good["terminationReasons"]["agent_error"] == 0
    assert good["terminationReasons"]["completed"] == 4
    cell = data["tasks"][0]["agents"]["greedy"]
    assert cell["terminationReasons"]["max_tool_calls"] == 2 and cell["faults"] == 0


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


def test_fail_under_exits_1_after_writing_the_summary(project: Path) -> None:
    base = ["eval", "--env", "crm", "--task", "TASK-001", "--task", "TASK-002"]
    agents = ["--agent", f"solver={SOLVER}", "--agent", NOOP]
    failed = cli(*base, *agents, "--out", "ev", "--fail-under", "0.5")
    assert failed.exit_code == 1, failed.output
    assert failed.stderr.startswith("error: fail_under: pass rate below --fail-under 0.5: noop")
    assert "ev/summary.json" in failed.stderr and "solver" not in failed.stderr
    assert "Report   ev/report.html" in failed.stdout  # the report is printed as usual
    assert read_summary(project / "ev")["complete"] is True
    passed = cli(*base, *agents, "--out", "ev2", "--fail-under", "0", "--json")
    assert passed.exit_code == 0, passed.output
    assert json.loads(passed.stdout)["failUnder"] == {"rate": 0.0, "below": []}
    solver_only = cli(*base, "--agent", SOLVER, "--out", "ev3", "--fail-under", "1")
    assert solver_only.exit_code == 0, solver_only.output


def test_fail_under_with_json_still_prints_the_document(project: Path) -> None:
    (project / "crash.py").write_text(CRASH)
    result = cli(
        "eval", "--env", "crm", "--task", "TASK-001", "--agent", "crash.py",
        "--runs", "3", "--fail-under", "0.9", "--json",
    )  # fmt: skip
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["failUnder"] == {"rate": 0.9, "below": ["crash"]}
    assert data["agents"][0]["terminationReasons"]["agent_error"] == 3
    assert result.stderr.startswith("error: fail_under:")


def test_fail_under_rejects_rates_outside_0_to_1(project: Path) -> None:
    result = cli("eval", "--env", "crm", "--agent", NOOP, "--fail-under", "80")
    assert result.exit_code == 2 and "--fail-under" in result.stderr
