"""10,000 rollouts at concurrency 10,000 in one event loop.

Each agent awaits ``anyio.sleep(1.0)`` three times around two tool calls, so the ideal wall time
is 3.0 s whatever the count. Prints a table, then one JSON line with ``wall_s``, ``ideal_s`` and
``peak_rss_mb``. Targets: ``wall_s <= 1.2 * ideal_s``; under 30 KB of memory per rollout.
Run: ``.venv/bin/python benchmarks/bench_concurrency.py [asyncio|trio] [ROLLOUTS]``.
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
from _world import ENV

SLEEP_S = 1.0


async def sleepy(ctx: silo.AgentContext) -> str:
    await anyio.sleep(SLEEP_S)
    await ctx.call_tool("get_account", {"accountId": "ACC-002"})
    await anyio.sleep(SLEEP_S)
    await ctx.call_tool("add_note", {"accountId": "ACC-001", "text": "called"})
    await anyio.sleep(SLEEP_S)
    return "done"


def rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def measure(rollouts: int) -> tuple[float, list[silo.RunResult]]:
    start = time.perf_counter()
    results = await silo.run_many(ENV, ["TASK-001"], sleepy, runs=rollouts, concurrency=rollouts)
    return time.perf_counter() - start, results


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else "asyncio"
    rollouts = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    gc.collect()
    before = rss_mb()
    wall, results = anyio.run(measure, rollouts, backend=backend)
    peak = rss_mb()
    assert len(results) == rollouts and all(r.passed for r in results)
    ideal = 3 * SLEEP_S
    per_rollout_kb = (peak - before) * 1024 / rollouts
    print(f"{'measure':<30}{'value':>12}{'target':>14}")
    print(f"{'rollouts (concurrent)':<30}{rollouts:>12}")
    print(f"{'wall s':<30}{wall:>12.2f}{f'<= {1.2 * ideal:.1f}':>14}")
    print(f"{'ideal s':<30}{ideal:>12.2f}")
    print(f"{'peak RSS MB':<30}{peak:>12.1f}")
    print(f"{'KB per rollout (peak-start)':<30}{per_rollout_kb:>12.1f}{'< 30':>14}")
    print(f"({backend}; results kept in memory, as run_many returns them)")
    out = {
        "backend": backend,
        "rollouts": rollouts,
        "wall_s": round(wall, 3),
        "ideal_s": ideal,
        "peak_rss_mb": round(peak, 1),
        "kb_per_rollout": round(per_rollout_kb, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
