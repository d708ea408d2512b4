"""The rollout core: one call path for both drivers, a frozen setup, one ledger of counters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest

import silo_async as silo
from silo_async._end import Refusal
from silo_async._rollout import Rollout
from silo_async._setup import RolloutSetup

from .worlds import ENV

pytestmark = pytest.mark.anyio

BLOCK = {"customerId": "CUS-001"}


@pytest.fixture
def core_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Every ``Rollout.call`` as ``(tool, outcome)``: ``ok``, ``error`` or the refusal."""
    seen: list[tuple[str, str]] = []
    original = Rollout.call

    async def counted(self: Rollout, name: str, input: Any) -> silo.ToolResult | Refusal:
        outcome = await original(self, name, input)
        if isinstance(outcome, Refusal):
            seen.append((name, outcome.value))
        else:
            seen.append((name, "error" if outcome.is_error else "ok"))
        return outcome

    monkeypatch.setattr(Rollout, "call", counted)
    yield seen


async def test_both_drivers_send_every_call_through_the_one_core_method(
    core_calls: list[tuple[str, str]],
) -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("block_customer", BLOCK)
        await ctx.call_tool("get_customr", BLOCK)
        await ctx.call_tool("get_customer", BLOCK)  # beyond the limit: refused, scope cancelled
        return "never"

    run = await silo.run(ENV, "TASK-BLOCK", agent, limits=silo.Limits(max_tool_calls=2))
    from_run = list(core_calls)
    core_calls.clear()
    async with silo.episode(ENV, "TASK-BLOCK", limits=silo.Limits(max_tool_calls=2)) as ep:
        await ep.call_tool("block_customer", BLOCK)
        await ep.call_tool("get_customr", BLOCK)
        refused = await ep.call_tool("get_customer", BLOCK)  # beyond the limit: ends it
        after = await ep.call_tool("get_customer", BLOCK)
    expected = [
        ("block_customer", "ok"),
        ("get_customr", "error"),
        ("get_customer", "over_limit"),
    ]
    assert from_run == expected
    assert core_calls == [*expected, ("get_customer", "ended")]
    # The same refusal, as each driver means it: a cancelled agent, a finished episode.
    assert run.termination_reason == "max_tool_calls" and run.agent_output is None
    assert refused.output["code"] == "limit_exceeded" and after.output["code"] == "invalid_state"
    episode = ep.result
    assert episode is not None
    assert episode.result_dict() == run.result_dict()
    assert episode.state_diff_json == run.state_diff_json


async def test_a_call_after_the_run_has_ended_executes_nothing() -> None:
    leaked: list[silo.AgentContext] = []

    async def agent(ctx: silo.AgentContext) -> str:
        leaked.append(ctx)
        return "2"

    result = await silo.run(ENV, "TASK-BLOCK", agent)
    late = await leaked[0].call_tool("block_customer", BLOCK)
    assert late.is_error and late.output == {
        "code": "invalid_state",
        "message": "The run has ended (completed).",
    }
    assert result.tool_calls == 0 and leaked[0].tool_calls == 0


async def test_the_setup_is_frozen_and_the_counters_live_in_the_ledger(tmp_path: Path) -> None:
    task = ENV.task("TASK-ANSWER")
    limits = silo.Limits(max_tool_calls=5, token_limit=50)
    options = silo.RunOptions(limits=limits)
    setup = RolloutSetup.new(
        ENV, task, ENV.verifier_for(task), options, agent_name="a", runs_dir=tmp_path, run_index=3
    )
    assert setup.limits is limits and setup.faults is None
    assert setup.run_dir == tmp_path / setup.run_id and setup.run_index == 3
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setup.run_index = 4  # type: ignore[misc]
    rollout = Rollout(setup)
    await rollout.open()
    await rollout.call("get_customer", {"customerId": "CUS-001"})
    await rollout.call("get_customer", {"customerId": "NOPE"})
    await rollout.call("explode", {})
    ledger = rollout.ledger
    assert (ledger.calls, ledger.errors, ledger.faults) == (3, 1, 1)
    assert rollout.stopped is None and rollout.end is None


async def test_a_call_cut_short_by_the_end_of_an_episode() -> None:
    cut: list[silo.ToolResult] = []

    async def call(ep: silo.Episode) -> None:
        cut.append(await ep.call_tool("slow", {}))

    async with silo.episode(ENV, "TASK-BLOCK", timeout=None) as ep, anyio.create_task_group() as tg:
        tg.start_soon(call, ep)
        await anyio.wait_all_tasks_blocked()  # the call is in flight, sleeping
        await ep.finish("done")
    assert cut[0].output == {
        "code": "limit_exceeded",
        "message": "The call was cancelled: the episode ended (completed).",
    }
