"""Faults on purpose (DESIGN section 14): what each kind does to a call, the world and the clock.

Every test runs on asyncio and on trio; the waits run in virtual time on trio (MockClock) and
stay tiny on asyncio.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async._faults import FaultSchedule

from .worlds import ENV, blocker

pytestmark = pytest.mark.anyio

Call = Callable[[str, dict[str, Any]], Awaitable[silo.ToolResult]]

#: Error codes after which the call did nothing, so trying again is right.
TRANSIENT = {"unavailable", "rate_limited", "timeout"}


async def patiently(call: Call, tries: int = 4) -> str:
    """Block CUS-001 through ``call``, retrying a call that met a transient fault."""

    async def attempt(name: str, args: dict[str, Any]) -> silo.ToolResult:
        for _ in range(tries - 1):
            result = await call(name, args)
            if not (result.is_error and result.output.get("code") in TRANSIENT):
                return result
        return await call(name, args)

    await attempt("get_customer", {"customerId": "CUS-001"})
    await attempt("block_customer", {"customerId": "CUS-001"})
    return "done"


async def patient(ctx: silo.AgentContext) -> str:
    return await patiently(ctx.call_tool)


def events(result: silo.RunResult, kind: str) -> list[dict[str, Any]]:
    return [e for e in result.trace if e["type"] == kind]


def injected(result: silo.RunResult) -> list[tuple[int, str, str, int | None]]:
    return [(e["callId"], e["tool"], e["kind"], e["ms"]) for e in events(result, "fault_injected")]


def seed_where(spec: str, *plays: list[tuple[str, bool]], task: str = "TASK-BLOCK") -> int:
    """The first seed whose schedule strikes exactly the calls marked True of every play."""

    def struck(schedule: FaultSchedule, play: list[tuple[str, bool]]) -> bool:
        hits = [schedule.draw(i, tool) is not None for i, (tool, _) in enumerate(play, 1)]
        return hits == [hit for _, hit in play]

    for seed in range(10_000):
        schedule = silo.Faults.parse(spec, seed=seed).schedule(task, 1)
        assert schedule is not None
        if all(struck(schedule, play) for play in plays):
            return seed
    raise AssertionError("no such seed")


async def test_an_error_fault_answers_instead_of_the_tool(tmp_path: Path) -> None:
    result = await silo.run(
        ENV, "TASK-BLOCK", blocker, faults="block_customer:unavailable@1", runs_dir=tmp_path
    )
    assert result.state_diff_json == '{"scalars":[],"collections":{}}'  # the tool never ran
    assert not result.passed and result.termination_reason == "completed"
    # a call the agent made: counted, traced, neither an error of the agent nor of the world
    assert (result.tool_calls, result.tool_errors, result.tool_faults) == (2, 0, 0)
    assert (result.injected_faults, result.recovered_faults) == (1, 0)
    assert result.reward_valid and result.invalid_reason is None  # the fault is the test
    types = [e["type"] for e in result.trace if e["type"].startswith(("tool", "fault"))]
    assert types == ["tool_call", "tool_result", "tool_call", "fault_injected", "tool_result"]
    assert injected(result) == [(2, "block_customer", "unavailable", None)]
    answer = events(result, "tool_result")[1]
    assert answer["isError"] is True and answer["output"]["code"] == "unavailable"
    assert "fault" not in answer  # not an environment fault: no exception, no traceback
    assert result.run_dir is not None
    written = json.loads((result.run_dir / "result.json").read_text())
    assert (written["injectedFaults"], written["recoveredFaults"]) == (1, 0)
    assert (written["rewardValid"], written["invalidReason"]) == (True, None)
    assert json.loads((result.run_dir / "run.json").read_text())["faults"] == {
        "seed": 0,
        "faults": [{"kind": "unavailable", "p": 1.0, "tools": ["block_customer"], "ms": None}],
    }


async def test_rate_limited_says_when_to_retry() -> None:
    plan = silo.Faults.parse("get_*:rate_limited=2500ms@1,rate_limited@1")
    result = await silo.run(ENV, "TASK-BLOCK", blocker, faults=plan)
    first, second = (e["output"] for e in events(result, "tool_result"))
    assert first["code"] == second["code"] == "rate_limited"
    assert first["details"] == {"retryAfterMs": 2500}  # the first error drawn wins
    assert second["details"] == {"retryAfterMs": 1000}  # the default
    assert injected(result) == [
        (1, "get_customer", "rate_limited", 2500),
        (2, "block_customer", "rate_limited", 1000),
    ]


async def test_a_retry_after_a_fault_is_the_right_move() -> None:
    spec = "unavailable@0.5"
    hits = [("get_customer", True), ("get_customer", True), ("get_customer", False)]
    hits += [("block_customer", True), ("block_customer", False)]
    # the blocker's two calls: its block_customer (call 2) meets the fault and is not retried
    seed = seed_where(spec, hits, [("get_customer", True), ("block_customer", True)])
    result = await silo.run(ENV, "TASK-BLOCK", patient, faults=silo.Faults.parse(spec, seed=seed))
    assert result.passed and result.reward == 1.0 and result.reward_valid
    assert (result.tool_calls, result.tool_errors, result.tool_faults) == (5, 0, 0)
    # every injected fault was followed by a success of the same tool
    assert (result.injected_faults, result.recovered_faults) == (3, 3)
    gave_up = await silo.run(ENV, "TASK-BLOCK", blocker, faults=silo.Faults.parse(spec, seed=seed))
    assert not gave_up.passed and gave_up.injected_faults and not gave_up.recovered_faults


async def test_faulted_calls_count_against_max_tool_calls() -> None:
    result = await silo.run(ENV, "TASK-BLOCK", patient, faults="unavailable@1", max_tool_calls=3)
    assert result.termination_reason == "max_tool_calls"
    assert (result.tool_calls, result.injected_faults, result.recovered_faults) == (3, 3, 0)
    assert len(events(result, "tool_call")) == 3  # the fourth was refused: not recorded


async def test_unknown_tools_meet_no_fault() -> None:
    async def lost(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("no_such_tool", {})
        return "?"

    result = await silo.run(ENV, "TASK-BLOCK", lost, faults="unavailable@1")
    assert (result.tool_errors, result.injected_faults) == (1, 0)
    assert events(result, "tool_result")[0]["output"]["code"] == "tool_not_found"


async def test_latency_waits_then_runs_the_tool(fake_clock_backend: Any) -> None:
    plan = silo.Faults.parse("latency=30ms@1,get_*:latency=20ms@1")
    started = anyio.current_time()
    result = await silo.run(ENV, "TASK-BLOCK", blocker, faults=plan)
    waited = anyio.current_time() - started
    assert result.passed and result.reward_valid
    assert waited >= 0.08  # 50 ms for get_customer (latencies add up), 30 for block_customer
    assert injected(result) == [
        (1, "get_customer", "latency", 30),
        (1, "get_customer", "latency", 20),
        (2, "block_customer", "latency", 30),
    ]
    assert (result.injected_faults, result.recovered_faults) == (3, 3)  # both calls succeeded


async def test_timeout_waits_then_fails(fake_clock_backend: Any) -> None:
    started = anyio.current_time()
    result = await silo.run(ENV, "TASK-BLOCK", blocker, faults="block_customer:timeout=40ms@1")
    assert anyio.current_time() - started >= 0.04
    answer = events(result, "tool_result")[1]["output"]
    assert answer["code"] == "timeout" and answer["details"] == {"timeoutMs": 40}
    assert result.state_diff_json == '{"scalars":[],"collections":{}}'  # nothing was done


async def test_a_wait_counts_against_the_deadline(fake_clock_backend: Any) -> None:
    result = await silo.run(
        ENV, "TASK-BLOCK", blocker, faults="block_customer:latency=5000ms@1", timeout=0.2
    )
    assert result.termination_reason == "timeout"
    assert result.state_diff_json == '{"scalars":[],"collections":{}}'  # never ran
    assert result.tool_calls == 2 and len(events(result, "tool_result")) == 1
    assert injected(result) == [(2, "block_customer", "latency", 5000)]


async def test_an_episodes_wait_is_cut_at_its_deadline(fake_clock_backend: Any) -> None:
    async with silo.episode(
        ENV, "TASK-BLOCK", faults="block_customer:timeout=5000ms@1", timeout=0.2
    ) as ep:
        await ep.call_tool("get_customer", {"customerId": "CUS-001"})
        cut = await ep.call_tool("block_customer", {"customerId": "CUS-001"})
    assert cut.is_error and cut.output["code"] == "limit_exceeded"
    assert ep.result is not None and ep.result.termination_reason == "timeout"
    assert ep.result.state_diff_json == '{"scalars":[],"collections":{}}'


async def test_a_run_and_an_episode_meet_the_same_faults() -> None:
    plan = silo.Faults.parse("unavailable@0.4,latency=1ms@0.3,block_*:rate_limited=1ms@0.3", 4)
    ran = await silo.run(ENV, "TASK-BLOCK", patient, faults=plan)
    async with silo.episode(ENV, "TASK-BLOCK", faults=plan) as ep:
        played = await ep.finish(await patiently(ep.call_tool))
    assert ran.injected_faults > 0
    assert played.result_dict() == ran.result_dict()
    assert played.state_diff_json == ran.state_diff_json
    assert injected(played) == injected(ran)


# -- reward validity ---------------------------------------------------------------------------


async def test_a_tool_that_raises_makes_the_reward_no_evidence(tmp_path: Path) -> None:
    async def breaks(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("explode", {})
        await blocker(ctx)
        return "done"

    result = await silo.run(ENV, "TASK-BLOCK", breaks, runs_dir=tmp_path)
    assert result.passed and result.tool_faults == 1
    assert (result.reward_valid, result.invalid_reason) == (False, "environment_fault")
    assert result.run_dir is not None
    written = json.loads((result.run_dir / "result.json").read_text())
    assert list(written)[:4] == ["passed", "reward", "rewardValid", "invalidReason"]
    assert (written["rewardValid"], written["invalidReason"]) == (False, "environment_fault")


async def test_a_verifier_that_raises_makes_the_reward_no_evidence() -> None:
    result = await silo.run(ENV, "TASK-RAISES", blocker)
    assert (result.reward_valid, result.invalid_reason) == (False, "environment_fault")
    assert result.termination_reason == "completed"  # the termination reason is unchanged


async def test_a_model_error_makes_the_reward_no_evidence() -> None:
    async def model_down(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
        raise silo.ModelError("503 from the provider after 3 attempts")

    result = await silo.run(ENV, "TASK-BLOCK", model_down)
    assert result.termination_reason == "agent_error"  # still an agent_error
    assert (result.reward_valid, result.invalid_reason) == (False, "model_error")
    assert result.error == "ModelError: 503 from the provider after 3 attempts"
    error = silo.ModelError("x")
    assert isinstance(error, silo.SiloError) and error.code == "model_error"


async def test_an_environment_fault_outranks_a_model_error() -> None:
    async def both(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("explode", {})
        raise silo.ModelError("down")

    result = await silo.run(ENV, "TASK-BLOCK", both)
    assert (result.reward_valid, result.invalid_reason) == (False, "environment_fault")


async def test_an_agents_own_crash_is_still_evidence() -> None:
    async def crashes(ctx: silo.AgentContext) -> str:
        raise KeyError("oops")

    result = await silo.run(ENV, "TASK-BLOCK", crashes)
    assert result.termination_reason == "agent_error"
    assert (result.reward_valid, result.invalid_reason) == (True, None)


async def test_an_episode_left_by_a_model_error_is_no_evidence() -> None:
    with pytest.raises(silo.ModelError):
        async with silo.episode(ENV, "TASK-BLOCK") as ep:
            raise silo.ModelError("the harness's model is down")
    assert ep.result is not None
    assert (ep.result.reward_valid, ep.result.invalid_reason) == (False, "model_error")


async def test_a_faulted_run_replays_identically(tmp_path: Path) -> None:
    plan = silo.Faults.parse("unavailable@0.5,latency=1ms@0.5", seed=2)
    results = await silo.run_many(
        ENV, ["TASK-BLOCK"], patient, runs=3, faults=plan, runs_dir=tmp_path
    )
    assert sum(r.injected_faults for r in results) > 0
    for result in results:
        assert result.run_dir is not None
        report = await silo.replay(result.run_dir, env=ENV)
        assert report.identical, report.differences
        assert report.replayed.injected_faults == result.injected_faults
