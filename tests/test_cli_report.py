"""The run report and the --runs summary, driven by real RunResults from a code-first world."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.cli._report import many_json, many_text, run_json, run_text, summarize


@silo.tool(
    name="set_flag",
    description="Set the flag.",
    input_schema={
        "type": "object",
        "properties": {"value": {"type": "boolean"}},
        "required": ["value"],
        "additionalProperties": False,
    },
)
def set_flag(state: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:
    state["flag"] = input["value"]
    return {"flag": state["flag"]}


@silo.tool(name="explode", description="Always raises.")
def explode(state: dict[str, Any], input: dict[str, Any]) -> None:
    raise RuntimeError("boom")


@silo.verifier(id="VER-001", task_id="TASK-001")
def flag_set(
    final: dict[str, Any], initial: dict[str, Any], ctx: silo.VerifierContext
) -> list[silo.Check]:
    return [
        silo.check("The flag is set", final["flag"] is True),
        silo.optional("An answer was given", bool(ctx.agent_output)),
    ]


ENV = silo.Environment(
    name="flags",
    create_state=lambda: {"flag": False},
    tools=[set_flag, explode],
    verifiers=[flag_set],
    tasks=[silo.Task("TASK-001", "Set the flag", "Set the flag.", "VER-001")],
)


async def good(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("set_flag", {"value": True})
    return "done"


async def faulty(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("explode", {})
    await ctx.call_tool("set_flag", {"nope": 1})
    return ""


async def crash(ctx: silo.AgentContext) -> str:
    raise ValueError("model server down")


async def greedy(ctx: silo.AgentContext) -> str:
    while True:
        await ctx.call_tool("set_flag", {"value": False})


def run(agent: silo.Agent, runs_dir: Path | None = None, **kw: Any) -> silo.RunResult:
    async def main() -> silo.RunResult:
        return await silo.run(ENV, "TASK-001", agent, runs_dir=runs_dir, **kw)

    return anyio.run(main)


def test_pass_report(tmp_path: Path) -> None:
    result = run(good, tmp_path / ".silo" / "runs")
    text = run_text(result, tmp_path)
    lines = text.splitlines()
    assert lines[0] == "Task        TASK-001 — Set the flag"
    assert "Result      PASS" in lines
    assert "Reward      1.00" in lines
    assert "Tool calls  1" in lines
    assert "Errors      0" in lines
    assert "Faults      0" in lines
    assert "Checks      2 / 2" in lines
    assert "Required    1 / 1" in lines
    assert lines[-1] == f"Run saved   .silo/runs/{result.run_id}"
    assert "Ended early" not in text
    assert "Failed" not in text
    assert re.search(r"^Duration    \d+(\.\d)? m?s$", text, re.M)


def test_fail_report_names_failed_checks_faults_and_errors(tmp_path: Path) -> None:
    result = run(faulty)
    text = run_text(result, tmp_path)
    assert "Result      FAIL" in text
    assert "Reward      0.00" in text
    assert "Tool calls  2" in text
    assert "Errors      1" in text
    assert "Faults      1  (the environment raised; see trace.jsonl)" in text
    assert "Failed      ✗ The flag is set" in text
    assert "Run saved" not in text  # no runs_dir, nothing saved


def test_agent_error_and_limit_reports(tmp_path: Path) -> None:
    crashed = run_text(run(crash), tmp_path)
    assert "Ended early  agent_error" in crashed
    assert "Error        ValueError: model server down" in crashed
    limited = run_text(run(greedy, max_tool_calls=3), tmp_path)
    assert "Ended early  max_tool_calls" in limited
    assert "Tool calls   3" in limited


def test_run_json_has_result_and_identity(tmp_path: Path) -> None:
    result = run(good, tmp_path / "runs")
    data = run_json(result, tmp_path)
    assert data["runId"] == result.run_id
    assert data["task"]["id"] == "TASK-001"
    assert data["passed"] is True
    assert data["reward"] == 1.0
    assert data["terminationReason"] == "completed"
    assert data["toolCalls"] == 1
    assert data["runDir"] == f"runs/{result.run_id}"
    assert isinstance(data["durationMs"], float | int)
    for key, value in result.result_dict().items():
        assert data[key] == value
    json.dumps(data)  # JSON-ready


def test_summary_and_rollout_lines(tmp_path: Path) -> None:
    results = [run(good, tmp_path / "r"), run(faulty, tmp_path / "r"), run(good, tmp_path / "r")]
    s = summarize(results)
    # the faulty rollout's tool raised: its reward is not evidence, so it is in no number
    assert (s.runs, s.passed, s.invalid, s.best_reward, s.worst_reward) == (3, 2, 1, 1.0, 1.0)
    assert s.mean_reward == pytest.approx(1.0)
    assert s.avg_tool_calls == pytest.approx(4 / 3)
    text = many_text(results, tmp_path)
    assert "Task         TASK-001 — Set the flag" in text
    assert "Rollouts     3" in text
    assert "Passed       2 / 2" in text
    assert "Invalid      1 (not evidence: left out of the numbers)" in text
    assert "Mean reward  1.00" in text
    assert "Best         1.00" in text
    assert "Worst        1.00" in text
    assert "Avg calls    1.3" in text
    lines = text.splitlines()
    assert lines[-3] == f"run 1  PASS  reward 1.00 · 1 call · completed  r/{results[0].run_id}"
    assert lines[-2].startswith(
        "run 2  FAIL  reward 0.00 · 2 calls · 1 fault · completed · INVALID (environment_fault)  r/"
    )


def test_many_json(tmp_path: Path) -> None:
    results = [run(good), run(faulty)]
    data = many_json(results, tmp_path)
    assert data["task"]["id"] == "TASK-001"
    assert (data["runs"], data["passed"], data["invalid"]) == (2, 1, 1)
    assert (data["meanReward"], data["bestReward"], data["worstReward"]) == (1.0, 1.0, 1.0)
    assert data["avgToolCalls"] == 1.5
    assert [r["passed"] for r in data["rollouts"]] == [True, False]
    assert data["rollouts"][0]["runDir"] is None
