"""Rollouts per second for a scripted agent making 10 tool calls on a small world.

Measured with ``run_many`` (concurrency 64) without artifacts and with artifacts written to a
temporary directory. Prints a table, then one JSON line. Targets: >= 2,000 and >= 400 per second.
Run: ``.venv/bin/python benchmarks/bench_rollouts.py [asyncio|trio]``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time

import anyio

import silo_async as silo

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _world import ENV, ten_calls

ROLLOUTS = 2_000
REPEATS = 3


async def rate(runs_dir: str | None) -> float:
    start = time.perf_counter()
    results = await silo.run_many(
        ENV, ["TASK-001"], ten_calls, runs=ROLLOUTS, concurrency=64, runs_dir=runs_dir
    )
    elapsed = time.perf_counter() - start
    assert all(r.passed for r in results)
    return ROLLOUTS / elapsed


async def measure() -> tuple[float, float]:
    bare = [await rate(None) for _ in range(REPEATS)]
    with_artifacts = []
    for _ in range(REPEATS):
        with tempfile.TemporaryDirectory() as tmp:
            with_artifacts.append(await rate(tmp))
    return statistics.median(bare), statistics.median(with_artifacts)


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else "asyncio"
    bare, artifacts = anyio.run(measure, backend=backend)
    print(f"{'mode':<24}{'rollouts/s':>12}{'target':>10}")
    print(f"{'in memory':<24}{bare:>12.0f}{'>= 2000':>10}")
    print(f"{'with artifacts':<24}{artifacts:>12.0f}{'>= 400':>10}")
    print(f"({backend}; {ROLLOUTS} rollouts x 10 tool calls, median of {REPEATS})")
    out = {
        "backend": backend,
        "rollouts_per_s": round(bare, 1),
        "rollouts_per_s_artifacts": round(artifacts, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
