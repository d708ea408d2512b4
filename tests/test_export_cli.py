"""``silo-async runs export`` on the crm template: an eval, filters, a run killed mid-way."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .cli_support import cli
from .export_support import check_line

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")

STUCK = """
import anyio

async def agent(ctx):
    await ctx.call_tool("list_users", {})
    await anyio.sleep(600)
"""


def lines_of(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


@pytest.fixture
def evaluated(project: Path) -> tuple[str, Path]:
    """An eval of the crm solver and the do-nothing agent on every task: its id and dir."""
    result = cli(
        "eval", "--env", "crm", "--tasks", "all", "--agent", f"solver={SOLVER}", "--agent", NOOP
    )
    assert result.exit_code == 0, result.output
    (eval_dir,) = (project / ".silo" / "evals").iterdir()
    return eval_dir.name, eval_dir


def index_of(eval_dir: Path) -> list[dict[str, Any]]:
    return lines_of((eval_dir / "runs" / "index.jsonl").read_text())


def test_an_eval_exports_one_checked_line_per_rollout_in_plan_order(
    evaluated: tuple[str, Path],
) -> None:
    eval_id, eval_dir = evaluated
    result = cli("runs", "export", "--eval", eval_id)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    lines = lines_of(result.stdout)
    index = index_of(eval_dir)
    assert len(index) == 22
    assert [line["runId"] for line in lines] == [row["runId"] for row in index]
    for line, row in zip(lines, index, strict=True):
        found = check_line(line, eval_dir / row["runDir"])
        if row["agent"] == "solver":
            assert found and line["passed"] and line["reward"] == 1.0
    tools = lines[0]["tools"]
    assert len(tools) == 51 and tools[0]["type"] == "function"
    assert set(tools[0]["function"]) == {"name", "description", "parameters"}


def test_passed_only_and_min_reward_filter(evaluated: tuple[str, Path]) -> None:
    eval_id, eval_dir = evaluated
    index = index_of(eval_dir)
    passed = lines_of(cli("runs", "export", "--eval", eval_id, "--passed-only").stdout)
    assert [line["runId"] for line in passed] == [r["runId"] for r in index if r["passed"]]
    assert {line["passed"] for line in passed} == {True} and len(passed) == 11
    some = sorted({r["reward"] for r in index})[1]  # the lowest reward but one
    rewarded = lines_of(cli("runs", "export", "--eval", eval_id, "--min-reward", str(some)).stdout)
    assert [line["runId"] for line in rewarded] == [
        r["runId"] for r in index if r["reward"] >= some
    ]
    assert len(passed) < len(rewarded) < len(index)
    none = cli("runs", "export", "--eval", eval_id, "--env", "other")
    assert none.exit_code == 0 and none.stdout == ""


def test_out_writes_the_same_lines_to_a_file(evaluated: tuple[str, Path], project: Path) -> None:
    eval_id, _ = evaluated
    result = cli("runs", "export", "--eval", eval_id, "--passed-only", "--out", "train.jsonl")
    assert result.exit_code == 0, result.output
    assert result.stdout == "Exported 11 rollouts to train.jsonl (11 filtered out).\n"
    piped = cli("runs", "export", "--eval", eval_id, "--passed-only").stdout
    assert (project / "train.jsonl").read_text() == piped
    assert [p.name for p in project.iterdir() if p.name.startswith(".train")] == []


def test_run_ids_in_the_order_given_and_by_part(evaluated: tuple[str, Path]) -> None:
    _, eval_dir = evaluated
    index = index_of(eval_dir)
    first, last = index[0]["runId"], index[-1]["runId"]
    result = cli("runs", "export", last, first[-10:])  # any unique end of an id works
    assert result.exit_code == 0, result.output
    assert [line["runId"] for line in lines_of(result.stdout)] == [last, first]


def test_unknown_ids_and_bad_flags(evaluated: tuple[str, Path]) -> None:
    eval_id, _ = evaluated
    missing = cli("runs", "export", "--eval", "eval_nope")
    assert missing.exit_code == 1 and missing.stdout == ""
    assert missing.stderr == (
        f'error: eval_not_found: Eval "eval_nope" was not found in .silo/evals. '
        f"The latest is {eval_id}.\n"
    )
    unknown = cli("runs", "export", "run_nope")
    assert unknown.exit_code == 1 and unknown.stdout == ""
    assert unknown.stderr.startswith('error: run_not_found: Run "run_nope" was not found')
    assert cli("runs", "export", "run_x", "--eval", eval_id).exit_code == 2
    assert cli("runs", "export", "--eval", eval_id, "--min-reward", "1.5").exit_code == 2
    assert cli("runs", "export", "--eval", eval_id, "--format", "sft").exit_code == 2
    assert cli("runs", "export", "--eval", eval_id, "--out", "no/such/dir.jsonl").exit_code == 2


def test_an_environment_that_cannot_be_loaded_leaves_no_file(
    evaluated: tuple[str, Path], project: Path
) -> None:
    eval_id, _ = evaluated
    shutil.rmtree(project / ".silo" / "environments" / "crm")
    result = cli("runs", "export", "--eval", eval_id, "--out", "train.jsonl")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: environment_not_found: ")
    assert sorted(p.name for p in project.iterdir()) == [".silo"]


def test_a_run_killed_mid_way_is_skipped_and_counted(project: Path) -> None:
    assert cli("run", "--env", "crm", "--task", "TASK-001", "--agent", SOLVER).exit_code == 0
    (finished,) = (project / ".silo" / "runs").iterdir()
    (project / "stuck.py").write_text(STUCK)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "silo_async",
            "run",
            "--env",
            "crm",
            "--task",
            "TASK-002",
            "--agent",
            "stuck.py",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            '"tool_result"' in p.read_text()
            for p in project.glob(".silo/runs/*/trace.jsonl")
            if p.parent != finished
        ):
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    runs = sorted((project / ".silo" / "runs").iterdir())
    assert runs[0] == finished and len(runs) == 2
    assert not (runs[1] / "result.json").exists()
    result = cli("runs", "export")
    assert result.exit_code == 0, result.output
    assert [line["runId"] for line in lines_of(result.stdout)] == [runs[0].name]
    note = (
        "note: skipped 1 rollout that cannot be rebuilt "
        "(1 stopped before its result was written).\n"
    )
    assert result.stderr == note
    named = cli("runs", "export", runs[1].name)
    assert named.exit_code == 0 and named.stdout == "" and named.stderr == note
