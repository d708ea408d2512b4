"""Rewards you can trust (DESIGN section 14): invalid rollouts are counted, shown, never scored.

An eval mixing valid and invalid rollouts: its statistics are computed here by hand and compared
with every output (the summary object, summary.json, summary.md, the terminal table,
``--fail-under``); export lines say which rollouts are evidence. Model API errors count whether
the shipped adapters raise them (the SDK's retries spent, ``retry-after`` honoured) or a
hand-written agent lets the SDK's error escape.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async import agents
from silo_async.cli._eval_text import summary_text
from silo_async.eval import pass_at_k, pass_hat_k, read_summary, wilson_interval
from silo_async.eval._report._records import RolloutRecord
from silo_async.export import trajectories
from silo_async.testing import ErrorReply, Reply, ScriptedModelServer
from tests.peers import by_extra, extra

from .worlds import ENV, blocker

pytestmark = pytest.mark.anyio


def behaving(plan: list[str], server: ScriptedModelServer | None = None) -> Any:
    """An agent doing, rollout after rollout (in plan order), what ``plan`` says."""
    steps: Iterator[str] = iter(plan)

    async def agent(ctx: silo.AgentContext) -> str:
        step = next(steps)
        answer = "2" if "How many" in ctx.task else "done"
        if step == "model_error":
            raise silo.ModelError("the provider answered 503 three times")
        if step == "sdk_error":  # an agent of one's own, letting the SDK's error escape
            import openai

            assert server is not None
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
            async with client:
                await client.chat.completions.create(model="m", messages=[])
        if step == "tool_fault":
            await ctx.call_tool("explode", {})
        if step == "fail":
            return "3"
        if "Block" in ctx.task:
            await blocker(ctx)
        return answer

    return agent


@extra("openai")
async def test_statistics_use_valid_rollouts_only(tmp_path: Path) -> None:
    down = ErrorReply(500, "The model is down.", headers={"x-should-retry": "false"})
    async with ScriptedModelServer([down] * 2) as server:
        a = behaving(
            [
                *("pass", "model_error", "fail", "pass"),  # TASK-BLOCK runs 1-4
                *("pass", "tool_fault", "fail", "fail"),  # TASK-ANSWER runs 1-4
            ]
        )
        b = behaving(
            [
                *("model_error", "sdk_error", "model_error", "sdk_error"),  # no valid rollout
                *("pass", "pass", "fail", "model_error"),
            ],
            server,
        )
        out = tmp_path / "ev"
        # concurrency 1: rollouts start in plan order (task, agent, run), as the plans assume
        summary = await silo.evaluate(
            ENV, ["TASK-BLOCK", "TASK-ANSWER"], {"a": a, "b": b}, runs=4, concurrency=1,
            out_dir=out,
        )  # fmt: skip
    # -- by hand. A failed block leaves the optional check passing: reward 0.5; a wrong count 0.
    # a/TASK-BLOCK: valid rewards 1, 0.5, 1 (run 2 is a model error): n = 3, c = 2
    cell = summary.cell("TASK-BLOCK", "a")
    assert cell is not None
    assert (cell.runs, cell.valid, cell.invalid, cell.passes, cell.failures) == (4, 3, 1, 2, 1)
    assert cell.pass_rate == pytest.approx(2 / 3) and cell.mean_reward == pytest.approx(2.5 / 3)
    assert cell.pass_rate_ci == wilson_interval(2, 3)
    assert cell.pass_at_k == pytest.approx({1: 2 / 3, 2: 1.0, 3: 1.0})
    assert cell.pass_hat_k == pytest.approx({1: 2 / 3, 2: 1 / 3, 3: 0.0})
    assert cell.invalid_reasons == {"model_error": 1, "environment_fault": 0, "worker_lost": 0}
    # a/TASK-ANSWER: run 2's tool raised (it answered right: still no evidence): n = 3, c = 1
    cell = summary.cell("TASK-ANSWER", "a")
    assert cell is not None
    assert (cell.valid, cell.passes, cell.faults) == (3, 1, 1)
    assert cell.pass_rate == pytest.approx(1 / 3) and cell.mean_reward == pytest.approx(1 / 3)
    # b/TASK-BLOCK: every rollout invalid (2 ModelErrors, 2 SDK errors escaping the agent)
    cell = summary.cell("TASK-BLOCK", "b")
    assert cell is not None
    assert (cell.runs, cell.valid, cell.invalid, cell.passes, cell.failures) == (4, 0, 4, 0, 0)
    assert cell.pass_rate is None and cell.mean_reward is None and cell.pass_at_k == {}
    assert cell.invalid_reasons["model_error"] == 4
    # agent level: rates pool the valid rollouts; pass@k is the mean over tasks with valid ones
    overall_a, overall_b = summary.agent("a"), summary.agent("b")
    assert (overall_a.runs, overall_a.valid, overall_a.passes) == (8, 6, 3)
    assert overall_a.pass_rate == pytest.approx(3 / 6)
    assert overall_a.mean_reward == pytest.approx((1 + 0.5 + 1 + 1 + 0 + 0) / 6)
    assert overall_a.pass_at_k[2] == pytest.approx((pass_at_k(3, 2, 2) + pass_at_k(3, 1, 2)) / 2)
    assert overall_a.pass_hat_k[2] == pytest.approx((pass_hat_k(3, 2, 2) + 0.0) / 2)
    assert (overall_b.runs, overall_b.valid, overall_b.invalid) == (8, 3, 5)
    assert overall_b.pass_rate == pytest.approx(2 / 3)  # TASK-ANSWER only
    assert overall_b.pass_at_k == pytest.approx({1: 2 / 3, 2: 1.0, 3: 1.0})
    assert summary.ranking == ["b", "a"]  # 0.67 > 0.50: invalid rollouts are no failures
    assert summary.below(0.6) == ["a"]
    # -- every output says the same
    data = read_summary(out)
    by_agent = {x["agent"]: x for x in data["agents"]}
    assert (by_agent["a"]["invalid"], by_agent["b"]["invalid"]) == (2, 5)
    assert by_agent["b"]["invalidReasons"] == {
        "model_error": 5,
        "environment_fault": 0,
        "worker_lost": 0,
    }
    block = data["tasks"][0]["agents"]
    assert block["b"]["passRate"] is None and block["b"]["passRateCI"] is None
    assert block["a"]["passRate"] == round(2 / 3, 4)
    lines = [json.loads(x) for x in (out / "runs" / "index.jsonl").read_text().splitlines()]
    assert [x["rewardValid"] for x in lines[:8]] == [True, False, True, True, *[False] * 4]
    assert lines[4]["invalidReason"] == "model_error"
    results = [json.loads((out / x["runDir"] / "result.json").read_text()) for x in lines]
    assert [r["rewardValid"] for r in results] == [x["rewardValid"] for x in lines]
    assert results[5]["error"].startswith("InternalServerError: ")  # the SDK's own error
    md = (out / "summary.md").read_text()
    assert "| invalid |" in md and "| 5 (5 model_error) |" in md
    assert "0/0 · — · 4 invalid" in md  # b's TASK-BLOCK cell: no rate, 4 invalid
    text = summary_text(summary, tmp_path)
    assert "invalid" in text.splitlines()[2] and "I = invalid" in text
    b_row = next(line for line in text.splitlines() if line.startswith("1 "))
    assert " b " in b_row and "5 (5 model_error)" in b_row
    assert "0/0 — (4I 4E)" in text  # the side-by-side cell


async def test_an_agent_with_no_valid_rollout_has_no_rates(tmp_path: Path) -> None:
    summary = await silo.evaluate(
        ENV, ["TASK-BLOCK"], {"down": behaving(["model_error"] * 2)}, runs=2, out_dir=tmp_path / "e"
    )
    stats = summary.agent("down")
    assert stats.pass_rate is None and stats.mean_reward is None and stats.invalid == 2
    assert summary.below(0.0) == ["down"]  # --fail-under cannot be met without evidence
    agent = read_summary(tmp_path / "e")["agents"][0]
    assert (agent["passRate"], agent["meanReward"], agent["invalid"]) == (None, None, 2)


@pytest.mark.parametrize("provider", by_extra("openai", "anthropic"))
async def test_the_shipped_adapters_retry_first_then_raise_model_error(
    anyio_backend: str, provider: str
) -> None:
    script = [ErrorReply(429, retry_after_ms=1)] * 3  # retry-after honoured: 1 ms, not seconds
    async with ScriptedModelServer(script) as server:
        agent = (
            agents.openai_chat("m", base_url=server.base_url, max_retries=2)
            if provider == "openai"
            else agents.anthropic("m", base_url=server.url, max_retries=2)
        )
        result = await silo.run(ENV, "TASK-ANSWER", agent)
    assert len(server.requests) == 3  # the SDK's own retries, and no second layer
    assert result.termination_reason == "agent_error"
    assert (result.reward_valid, result.invalid_reason) == (False, "model_error")
    assert (result.error or "").startswith("ModelError: RateLimitError: ")
    async with ScriptedModelServer([ErrorReply(503), Reply(text="2")]) as server:
        agent = (
            agents.openai_chat("m", base_url=server.base_url)
            if provider == "openai"
            else agents.anthropic("m", base_url=server.url)
        )
        recovered = await silo.run(ENV, "TASK-ANSWER", agent)
    assert recovered.passed and recovered.reward_valid  # a retry that worked changes nothing


def test_a_lost_worker_is_invalid() -> None:
    from silo_async.eval.ray._dispatch import lost_record

    record = lost_record(("TASK-BLOCK", "a", 1, False), 3)
    assert (record.reward_valid, record.invalid_reason) == (False, "worker_lost")
    line = record.to_dict()
    assert (line["rewardValid"], line["invalidReason"]) == (False, "worker_lost")
    assert RolloutRecord.from_dict(line) == record


async def test_export_lines_say_whether_the_reward_is_evidence(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    plan = ["pass", "model_error", "tool_fault", "fail"]
    await silo.evaluate(
        ENV, ["TASK-BLOCK"], {"a": behaving(plan)}, runs=4, concurrency=1, out_dir=out
    )
    lines = await anyio.to_thread.run_sync(
        lambda: list(trajectories(eval_id=str(out), environment=ENV))
    )
    assert [(x["rewardValid"], x["passed"]) for x in lines] == [
        (True, True),
        (False, False),  # the model API failed: no evidence
        (False, True),  # a tool raised: no evidence, though it passed
        (True, False),
    ]
    assert list(lines[0])[6:8] == ["reward", "rewardValid"]  # right after the reward
