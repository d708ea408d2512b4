"""Rollouts per second for a scripted agent making 10 tool calls on a small world.

Measured with ``run_many`` (concurrency 64) without artifacts, with artifacts in the system's
temporary directory (on disk), and with artifacts on tmpfs (``/dev/shm``) when it exists. A run
directory is one directory and four files; the kernel's cost of creating them on the disk is
measured first and printed too, because on some machines it dominates: on ext4 without a journal
the kernel skips every inode freed in the last minutes when it allocates a new one, so creating a
file right after thousands were deleted (a test suite, an earlier benchmark) can cost 0.5 ms
instead of 15 µs. This script therefore deletes nothing until it has measured everything, and
says so when the probe finds the disk in that state. DIR picks where the artifacts go instead of
the system's temporary directory (a project's ``runs/``, say).
Prints a table, then one JSON line. Targets: >= 2,000 and >= 400 per second.
Run: ``.venv/bin/python benchmarks/bench_rollouts.py [asyncio|trio] [DIR]``.
"""

from __future__ import annotations

import json
import os
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
#: Above this, creating a run directory's entries is far slower than a healthy disk (~100 µs).
SLOW_CREATE_US = 500.0


async def rate(runs_dir: str | None) -> float:
    start = time.perf_counter()
    results = await silo.run_many(
        ENV, ["TASK-001"], ten_calls, runs=ROLLOUTS, concurrency=64, runs_dir=runs_dir
    )
    elapsed = time.perf_counter() - start
    assert all(r.passed for r in results)
    return ROLLOUTS / elapsed


async def artifacts_rate(parent: str) -> float:
    rates = []
    for repeat in range(REPEATS):
        runs_dir = os.path.join(parent, f"repeat-{repeat}")  # kept until the very end
        rates.append(await rate(runs_dir))
    return statistics.median(rates)


TMPFS = "/dev/shm" if os.path.isdir("/dev/shm") else None


async def measure(disk_dir: str, tmpfs_dir: str | None) -> tuple[float, float, float | None]:
    bare = statistics.median([await rate(None) for _ in range(REPEATS)])
    disk = await artifacts_rate(disk_dir)
    tmpfs = await artifacts_rate(tmpfs_dir) if tmpfs_dir else None
    return bare, disk, tmpfs


def run_dir_create_us(parent: str, count: int = 200) -> float:
    """CPU microseconds spent creating an empty run directory's worth: a directory, 4 files."""
    start = time.process_time()
    for i in range(count):
        run_dir = os.path.join(parent, f"run{i}")
        os.mkdir(run_dir)
        for name in ("trace.jsonl", "result.json", "state-diff.json", "run.json"):
            with open(os.path.join(run_dir, name), "w") as f:
                f.write("x")
    return (time.process_time() - start) / count * 1e6


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else "asyncio"
    parent = sys.argv[2] if len(sys.argv) > 2 else None
    with (
        tempfile.TemporaryDirectory(prefix="silo-bench-", dir=parent) as disk_dir,
        tempfile.TemporaryDirectory(prefix="silo-bench-", dir=TMPFS) as tmpfs_dir,
    ):
        probe = os.path.join(disk_dir, "probe")
        os.mkdir(probe)
        create_us = run_dir_create_us(probe)
        bare, disk, tmpfs = anyio.run(
            measure, disk_dir, tmpfs_dir if TMPFS else None, backend=backend
        )
    print(f"{'mode':<32}{'rollouts/s':>12}{'target':>10}")
    print(f"{'in memory':<32}{bare:>12.0f}{'>= 2000':>10}")
    where = f"with artifacts ({parent or 'temp dir'})"
    print(f"{where:<32}{disk:>12.0f}{'>= 400':>10}")
    if tmpfs is not None:
        print(f"{'with artifacts (/dev/shm)':<32}{tmpfs:>12.0f}")
    print(f"(creating a directory and 4 files there cost {create_us:.0f} µs of CPU)")
    if create_us > SLOW_CREATE_US:
        print(
            "(slow file creation: this volume recently freed many inodes; ext4 without a journal "
            "skips them for up to 5 minutes. Rerun later, or pass a DIR elsewhere.)"
        )
    print(f"({backend}; {ROLLOUTS} rollouts x 10 tool calls, median of {REPEATS})")
    out = {
        "backend": backend,
        "rollouts_per_s": round(bare, 1),
        "rollouts_per_s_artifacts": round(disk, 1),
        "rollouts_per_s_artifacts_tmpfs": round(tmpfs, 1) if tmpfs is not None else None,
        "run_dir_create_us": round(create_us, 1),
        "artifacts_dir": disk_dir.rsplit(os.sep, 1)[0],
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
