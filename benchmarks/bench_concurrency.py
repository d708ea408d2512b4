"""10,000 rollouts at concurrency 10,000 in one event loop.

Each agent awaits ``anyio.sleep(1.0)`` three times around two tool calls, so the ideal wall time
is 3.0 s whatever the count. Prints a table, then one JSON line with ``wall_s``, ``ideal_s`` and
``peak_rss_mb``. Targets: ``wall_s <= 1.2 * ideal_s``; under 30 KB of memory per rollout.

For scale, the same load is then run without silo_async: the same number of bare anyio tasks,
each building the same world, calling the two tool functions directly under a cancel scope and
sleeping the same three seconds (``bare_wall_s``). On a small machine that floor alone is well
above 3.0 s; ``overhead_s`` (``wall_s - bare_wall_s``) is what silo_async adds.

Most of that overhead, and a second of the floor, is CPython's cyclic garbage collector walking
10,000 live rollouts again and again as they pile up. ``--tuned-gc`` measures both runs again
with the collector's thresholds raised (``gc.set_threshold(100_000, 50, 100)``), the tuning the
README suggests for very large runs; the default figures are always printed first.
Run: ``.venv/bin/python benchmarks/bench_concurrency.py [asyncio|trio] [ROLLOUTS] [--tuned-gc]``.
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time

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


async def bare(results: list[bool], index: int) -> None:
    """The same rollout with no framework: world, two direct calls, three sleeps, a check."""
    state = create_state()
    with anyio.move_on_after(120.0):
        await anyio.sleep(SLEEP_S)
        get_account.fn(state, {"accountId": "ACC-002"})
        await anyio.sleep(SLEEP_S)
        add_note.fn(state, {"accountId": "ACC-001", "text": "called"})
        await anyio.sleep(SLEEP_S)
    results[index] = bool(state["accounts"]["ACC-001"]["notes"])


async def measure_bare(rollouts: int) -> float:
    results = [False] * rollouts
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for index in range(rollouts):
            tg.start_soon(bare, results, index)
    assert all(results)
    return time.perf_counter() - start


def rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def measure(rollouts: int) -> tuple[float, list[silo.RunResult]]:
    start = time.perf_counter()
    results = await silo.run_many(ENV, ["TASK-001"], sleepy, runs=rollouts, concurrency=rollouts)
    return time.perf_counter() - start, results


TUNED_GC = (100_000, 50, 100)


def walls(backend: str, rollouts: int) -> tuple[float, float]:
    """Wall seconds of the silo_async run and of the bare one, each after a full collection."""
    gc.collect()
    wall, results = anyio.run(measure, rollouts, backend=backend)
    assert len(results) == rollouts and all(r.passed for r in results)
    del results
    gc.collect()
    return wall, anyio.run(measure_bare, rollouts, backend=backend)


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--tuned-gc"]
    backend = args[0] if args else "asyncio"
    rollouts = int(args[1]) if len(args) > 1 else 10_000
    gc.collect()
    before = rss_mb()
    wall, bare_wall = walls(backend, rollouts)
    peak = rss_mb()
    tuned: tuple[float, float] | None = None
    if "--tuned-gc" in sys.argv:
        default = gc.get_threshold()
        gc.set_threshold(*TUNED_GC)
        tuned = walls(backend, rollouts)
        gc.set_threshold(*default)
    ideal = 3 * SLEEP_S
    per_rollout_kb = (peak - before) * 1024 / rollouts
    print(f"{'measure':<30}{'value':>12}{'target':>14}")
    print(f"{'rollouts (concurrent)':<30}{rollouts:>12}")
    print(f"{'wall s':<30}{wall:>12.2f}{f'<= {1.2 * ideal:.1f}':>14}")
    print(f"{'ideal s':<30}{ideal:>12.2f}")
    print(f"{'bare anyio tasks, same load s':<30}{bare_wall:>12.2f}")
    print(f"{'silo_async overhead s':<30}{wall - bare_wall:>12.2f}")
    if tuned is not None:
        print(f"{'wall s, tuned gc':<30}{tuned[0]:>12.2f}")
        print(f"{'bare anyio tasks, tuned gc s':<30}{tuned[1]:>12.2f}")
    print(f"{'peak RSS MB':<30}{peak:>12.1f}")
    print(f"{'KB per rollout (peak-start)':<30}{per_rollout_kb:>12.1f}{'< 30':>14}")
    print(f"({backend}; results kept in memory, as run_many returns them)")
    out = {
        "backend": backend,
        "rollouts": rollouts,
        "wall_s": round(wall, 3),
        "ideal_s": ideal,
        "bare_wall_s": round(bare_wall, 3),
        "overhead_s": round(wall - bare_wall, 3),
        "peak_rss_mb": round(peak, 1),
        "kb_per_rollout": round(per_rollout_kb, 1),
    }
    if tuned is not None:
        out["tuned_gc_wall_s"] = round(tuned[0], 3)
        out["tuned_gc_bare_wall_s"] = round(tuned[1], 3)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
