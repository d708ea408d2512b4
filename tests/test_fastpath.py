"""The rollout's fast path (the loop's own checkpoint and clock) against its reference.

``silo_async._fastpath`` finds the running loop's checkpoint and clock once per rollout; its
reference, ``REFERENCE_HOOKS``, is anyio's public pair, which finds the backend on every call.
Whatever an agent does, both must give the same results, files and traces.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any
from unittest import mock

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import silo_async as silo
from silo_async import _rollout
from silo_async._fastpath import REFERENCE_HOOKS, LoopHooks, loop_hooks

from .worlds import ENV

# One call: a tool (sync, async, faulty, or an unknown name) and an input, valid or not.
CALLS = st.tuples(
    st.sampled_from(["get_customer", "block_customer", "explode", "get_custmer"]),
    st.sampled_from([{"customerId": "CUS-001"}, {"customerId": "CUS-404"}, {"customerId": 7}, {}]),
)
# A model step's tokens, recorded before the call (0: no step).
STEPS = st.sampled_from([0, 0, 10, 40])


@contextlib.contextmanager
def reference_path() -> Iterator[None]:
    """Rollouts started inside use anyio's public checkpoint and clock on every call."""
    with mock.patch.object(_rollout, "loop_hooks", lambda: REFERENCE_HOOKS):
        yield


def comparable(result: silo.RunResult) -> tuple[str, str, list[dict[str, Any]]]:
    """result.json, state-diff.json and the trace, without times and ids."""
    events = []
    for event in result.trace:
        for key in ("at", "durationMs", "runId"):
            event.pop(key, None)
        events.append(event)
    return json.dumps(result.result_dict()), result.state_diff_json, events


def play(calls: list[tuple[tuple[str, Any], int]], limits: silo.Limits, backend: str) -> Any:
    async def agent(ctx: silo.AgentContext) -> str:
        for (name, input), tokens in calls:
            if tokens:
                ctx.record_model_step(model="m", input_tokens=tokens, output_tokens=0)
            await ctx.call_tool(name, input)
        return "2"

    async def main() -> silo.RunResult:
        return await silo.run(ENV, "TASK-BLOCK", agent, limits=limits)

    return comparable(anyio.run(main, backend=backend))


@settings(max_examples=40, deadline=None, database=None)
@given(
    calls=st.lists(st.tuples(CALLS, STEPS), max_size=8),
    max_calls=st.integers(min_value=0, max_value=8),
    token_limit=st.sampled_from([None, 50]),
)
def test_the_fast_path_and_its_reference_give_the_same_rollout(
    calls: list[tuple[tuple[str, Any], int]], max_calls: int, token_limit: int | None
) -> None:
    limits = silo.Limits(max_tool_calls=max_calls, token_limit=token_limit)
    for backend in ("asyncio", "trio"):
        fast = play(calls, limits, backend)
        with reference_path():
            reference = play(calls, limits, backend)
        assert fast == reference


@pytest.mark.parametrize("path", ["fast", "reference"])
def test_a_call_after_the_loop_was_held_past_the_deadline_runs_on_neither_path(
    path: str, anyio_backend: str
) -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        time.sleep(0.03)  # noqa: ASYNC251 - the point: the loop is held past the deadline
        await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
        return "done"

    async def main() -> silo.RunResult:
        return await silo.run(ENV, "TASK-BLOCK", agent, timeout=0.01)

    with reference_path() if path == "reference" else contextlib.nullcontext():
        result = anyio.run(main, backend=anyio_backend)
    assert (result.termination_reason, result.tool_calls) == ("timeout", 0)


@pytest.mark.anyio
async def test_the_hooks_are_the_running_loops_own_and_shared() -> None:
    hooks = loop_hooks()
    assert loop_hooks() is hooks  # found once, held by no rollout of its own
    assert isinstance(hooks, LoopHooks)
    before = anyio.current_time()
    await hooks.checkpoint()
    assert before <= hooks.time() <= anyio.current_time()


def test_another_asyncio_loop_gets_its_own_clock() -> None:
    class OffsetLoop(asyncio.SelectorEventLoop):
        def time(self) -> float:
            return super().time() + 1000.0

    async def main() -> tuple[float, float]:
        return loop_hooks().time(), anyio.current_time()

    loop = OffsetLoop()
    try:
        ours, anyio_time = loop.run_until_complete(main())
    finally:
        loop.close()
    assert abs(ours - anyio_time) < 1.0


def test_on_trio_the_hooks_are_trios_own_public_pair() -> None:
    import trio

    async def main() -> LoopHooks:
        return loop_hooks()

    hooks = anyio.run(main, backend="trio")
    assert hooks.checkpoint is trio.lowlevel.checkpoint and hooks.time is trio.current_time
    assert anyio.run(main, backend="trio") is hooks  # one pair for every trio rollout
