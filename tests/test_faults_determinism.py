"""Faults are reproducible to the byte (DESIGN section 14).

The schedule is a pure function of (fault seed, task id, run index, call index, tool name): the
same seed gives byte-identical ``result.json``, ``state-diff.json`` and ``fault_injected``
events on asyncio and trio, at concurrency 1 and 1,000, through ``run``, ``run_many`` and an
episode, whatever order the rollouts finish in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from hypothesis import given, settings
from hypothesis import strategies as st

import silo_async as silo
from silo_async._jsonutil import pretty_json

from .test_faults import patient, patiently
from .worlds import ENV

SPEC = "unavailable@0.3,latency=1ms@0.2,block_*:rate_limited=1ms@0.3,get_*:timeout=1ms@0.1"
TASKS = ["TASK-BLOCK", "TASK-ANSWER"]

#: One rollout as the comparison sees it: result.json and state-diff.json as written, and
#: the fault_injected events without their timestamps.
Seen = tuple[str, str, str]


def _seen(result: silo.RunResult) -> Seen:
    faults = [
        {k: e[k] for k in ("callId", "tool", "kind", "ms")}
        for e in result.trace
        if e["type"] == "fault_injected"
    ]
    return pretty_json(result.result_dict()), result.state_diff_json, json.dumps(faults)


def _files(result: silo.RunResult) -> tuple[bytes, bytes]:
    assert result.run_dir is not None
    return (result.run_dir / "result.json").read_bytes(), (
        result.run_dir / "state-diff.json"
    ).read_bytes()


def _many(
    backend: str, concurrency: int, runs: int, runs_dir: Path | None, seed: int = 11
) -> list[silo.RunResult]:
    plan = silo.Faults.parse(SPEC, seed=seed)

    async def main() -> list[silo.RunResult]:
        return await silo.run_many(
            ENV, TASKS, patient, runs=runs, concurrency=concurrency, faults=plan, runs_dir=runs_dir
        )

    return anyio.run(main, backend=backend)


def test_same_seed_same_bytes_on_both_backends_at_any_concurrency(tmp_path: Path) -> None:
    runs = 60
    reference = _many("asyncio", 1, runs, tmp_path / "a1")
    assert sum(r.injected_faults for r in reference) > 20  # the plan really strikes
    assert len({_seen(r) for r in reference}) > 5  # and differently per run
    expected = [_seen(r) for r in reference]
    files = [_files(r) for r in reference]
    for backend in ("asyncio", "trio"):
        crowd = _many(backend, 1000, runs, tmp_path / f"{backend}-1000")
        assert [_seen(r) for r in crowd] == expected
        assert [_files(r) for r in crowd] == files
    alone = _many("trio", 1, runs, tmp_path / "t1")
    assert [_files(r) for r in alone] == files


def test_a_lone_run_and_an_episode_are_run_1(tmp_path: Path) -> None:
    plan = silo.Faults.parse(SPEC, seed=11)
    first_runs = [r for r in _many("asyncio", 4, 3, None) if r.run_index == 1]

    async def main() -> list[Seen]:
        seen = []
        for task in TASKS:
            ran = await silo.run(ENV, task, patient, faults=plan)
            async with silo.episode(ENV, task, faults=plan) as ep:
                played = await ep.finish(await patiently(ep.call_tool))
            assert _seen(ran) == _seen(played)
            seen.append(_seen(ran))
        return seen

    for backend in ("asyncio", "trio"):
        assert anyio.run(main, backend=backend) == [_seen(r) for r in first_runs]


# -- the schedule does not depend on concurrency or completion order ---------------------------

KEY = st.tuples(
    st.sampled_from(["TASK-1", "TASK-2", 'TÄSK "3"']),
    st.integers(1, 6),
    st.integers(1, 40),
    st.sampled_from(["get_customer", "block_customer", "search_x"]),
)


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(KEY, unique=True, max_size=60), data=st.data(), seed=st.integers(0, 2**32))
def test_every_draw_is_a_pure_function_of_its_key(
    keys: list[tuple[str, int, int, str]], data: st.DataObject, seed: int
) -> None:
    spec = "latency=5ms@0.5,unavailable@0.3,search_*:timeout=9ms@0.5,rate_limited@0.2"
    in_order = silo.Faults.parse(spec, seed=seed)
    expected = {}
    for task, run, call, tool in keys:
        schedule = in_order.schedule(task, run)
        assert schedule is not None
        expected[(task, run, call, tool)] = schedule.draw(call, tool)
    shuffled = data.draw(st.permutations(keys))
    other = silo.Faults.parse(spec, seed=seed)  # a fresh plan: nothing cached from above
    for task, run, call, tool in shuffled:
        schedule = other.schedule(task, run)
        assert schedule is not None
        assert schedule.draw(call, tool) == expected[(task, run, call, tool)]


@settings(max_examples=6, deadline=None)
@given(
    delays=st.lists(st.integers(0, 20), min_size=8, max_size=8),
    concurrency=st.integers(1, 8),
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_rollouts_finishing_in_any_order_meet_the_same_faults(
    delays: list[int], concurrency: int, backend: str
) -> None:
    plan = silo.Faults.parse(SPEC, seed=5)
    started = iter(delays)

    async def dawdler(ctx: silo.AgentContext) -> str:
        pause = next(started, 0)  # rollouts start in plan order: each gets its own pause

        async def call(name: str, args: dict[str, Any]) -> silo.ToolResult:
            for _ in range(pause):  # yield to the others: completion order follows the pauses
                await anyio.lowlevel.checkpoint()
            return await ctx.call_tool(name, args)

        return await patiently(call)

    async def main() -> list[silo.RunResult]:
        return await silo.run_many(
            ENV, TASKS, dawdler, runs=4, concurrency=concurrency, faults=plan
        )

    reference = _many("asyncio", 1, 4, None, seed=5)
    got = anyio.run(main, backend=backend)
    assert [_seen(r) for r in got] == [_seen(r) for r in reference]
