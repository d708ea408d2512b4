"""10,000 rollouts at concurrency 10,000 in one event loop, next to the physical floor.

Each agent awaits ``sleep(1.0)`` three times around two tool calls, so the ideal wall time is
3.0 s whatever the count. Three loads run in the same process, interleaved round by round (so a
noisy, shared machine shifts all three alike), each after a full garbage collection:

* ``floor``: 10,000 bare asyncio coroutines doing the three sleeps under ``asyncio.gather`` —
  no world, no anyio, no framework: what the interpreter itself costs;
* ``bare_anyio``: the same number of anyio tasks, each building the same world, calling the two
  tool functions directly under a cancel scope and sleeping the same three seconds;
* ``silo``: ``run_many`` at concurrency 10,000 (results kept in memory, as run_many returns them).

Targets (issue "Close to the floor"): ``floor_ratio`` = silo wall / floor wall <= 1.25 on
asyncio and <= 1.4 on trio; <= 20 KB of memory per rollout. Prints a table, then one JSON line.
Run: ``.venv/bin/python benchmarks/bench_concurrency.py [asyncio|trio] [ROLLOUTS] [--rounds N]``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import resource
import statistics
import sys
import time
from collections.abc import Callable

import anyio

import silo_async as silo

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _world import ENV, add_note, create_state, get_account

SLEEP_S = 1.0


async def sleepy(ctx: silo.AgentContext) -> str:
    await anyio.sleep(SLEEP_S)
    await ctx.call_tool("get_account", {"accountId": "ACC-002"})
    await anyio.sleep(SLEEP_S)
    await ctx.call_tool("add_note", {"accountId": "ACC-001", "text": "called"})
    await anyio.sleep(SLEEP_S)
    return "done"


async def _floor_one() -> None:
    await asyncio.sleep(SLEEP_S)
    await asyncio.sleep(SLEEP_S)
    await asyncio.sleep(SLEEP_S)


async def _floor(rollouts: int) -> None:
    await asyncio.gather(*(_floor_one() for _ in range(rollouts)))


def run_floor(backend: str, rollouts: int) -> float:
    """The interpreter's own floor: bare asyncio coroutines (whatever backend is measured)."""
    start = time.perf_counter()
    asyncio.run(_floor(rollouts))
    return time.perf_counter() - start


async def _bare_one(results: list[bool], index: int) -> None:
    state = create_state()
    with anyio.move_on_after(120.0):
        await anyio.sleep(SLEEP_S)
        get_account.fn(state, {"accountId": "ACC-002"})
        await anyio.sleep(SLEEP_S)
        add_note.fn(state, {"accountId": "ACC-001", "text": "called"})
        await anyio.sleep(SLEEP_S)
    results[index] = bool(state["accounts"]["ACC-001"]["notes"])


async def _bare(rollouts: int) -> float:
    results = [False] * rollouts
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for index in range(rollouts):
            tg.start_soon(_bare_one, results, index)
    assert all(results)
    return time.perf_counter() - start


def run_bare(backend: str, rollouts: int) -> float:
    """The same rollout with no framework: world, two direct calls, three sleeps, a check."""
    return anyio.run(_bare, rollouts, backend=backend)


async def _silo(rollouts: int) -> float:
    start = time.perf_counter()
    results = await silo.run_many(ENV, ["TASK-001"], sleepy, runs=rollouts, concurrency=rollouts)
    wall = time.perf_counter() - start
    assert len(results) == rollouts and all(r.passed for r in results)
    return wall


def run_silo(backend: str, rollouts: int) -> float:
    return anyio.run(_silo, rollouts, backend=backend)


def rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    args = sys.argv[1:]
    rounds = 3
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at : at + 2]
    backend = args[0] if args else "asyncio"
    rollouts = int(args[1]) if len(args) > 1 else 10_000
    loads: dict[str, Callable[[str, int], float]] = {
        "silo": run_silo,
        "floor": run_floor,
        "bare_anyio": run_bare,
    }
    walls: dict[str, list[float]] = {name: [] for name in loads}
    gc.collect()
    before = rss_mb()
    peak = before
    for _ in range(rounds):
        for name, load in loads.items():
            gc.collect()
            walls[name].append(load(backend, rollouts))
            if name == "silo":
                peak = max(peak, rss_mb())
    wall, floor, bare = (statistics.median(walls[n]) for n in ("silo", "floor", "bare_anyio"))
    per_rollout_kb = (peak - before) * 1024 / rollouts
    target = 1.25 if backend == "asyncio" else 1.4
    print(f"{'measure':<34}{'median':>10}{'target':>12}")
    print(f"{'rollouts (concurrent)':<34}{rollouts:>10}")
    print(f"{'floor: bare asyncio.gather s':<34}{floor:>10.2f}")
    print(f"{'bare anyio tasks with worlds s':<34}{bare:>10.2f}")
    print(f"{'silo_async run_many s':<34}{wall:>10.2f}")
    print(f"{'floor ratio (silo / floor)':<34}{wall / floor:>10.2f}{f'<= {target}':>12}")
    print(f"{'bare anyio ratio (silo / bare)':<34}{wall / bare:>10.2f}")
    print(f"{'KB per rollout (peak - start)':<34}{per_rollout_kb:>10.1f}{'<= 20':>12}")
    print(f"({backend}; median of {rounds} interleaved rounds; ideal {3 * SLEEP_S:.1f} s)")
    out = {
        "backend": backend,
        "rollouts": rollouts,
        "rounds": rounds,
        "floor_wall_s": round(floor, 3),
        "bare_anyio_wall_s": round(bare, 3),
        "wall_s": round(wall, 3),
        "floor_ratio": round(wall / floor, 3),
        "bare_anyio_ratio": round(wall / bare, 3),
        "peak_rss_mb": round(peak, 1),
        "kb_per_rollout": round(per_rollout_kb, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
