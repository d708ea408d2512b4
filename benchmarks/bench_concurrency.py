"""10,000 rollouts at concurrency 10,000 in one event loop, next to the physical floor.

Each agent awaits ``sleep(1.0)`` three times around two tool calls, so the ideal wall time is
3.0 s whatever the count. Three loads run in the same process, interleaved round by round (so a
noisy, shared machine shifts all three alike), each after a full garbage collection:

* ``floor``: 10,000 bare asyncio coroutines doing the three sleeps under ``asyncio.gather`` —
  no world, no anyio, no framework: what the interpreter itself costs;
* ``bare_anyio``: the same number of anyio tasks, each building the same world, calling the two
  tool functions directly under a cancel scope and sleeping the same three seconds;
* ``silo``: ``run_many`` at concurrency 10,000 (results kept in memory, as run_many returns them).

With ``--artifacts``, a fourth load runs ``run_many`` with ``runs_dir`` (every rollout writes
its run directory: trace as it happens, then result, diff and run.json) in the system's temporary
directory, and a fifth on tmpfs (``/dev/shm``), where the kernel's file creation costs no disk
allocation; ``run_dir_create_us`` probes what creating one directory and four files costs on the
disk right now (see bench_rollouts.py on ext4 without a journal). Nothing is deleted until
everything is measured.

Each load is timed in CPU time too (``time.process_time``, which other processes on a shared
machine do not move): ``cpu_us`` and ``bare_anyio_cpu_us`` per rollout, and their ratio
``bare_anyio_cpu_ratio`` — what silo_async costs over the same rollout on bare anyio.

Targets (issue "Close to the floor"): ``floor_ratio`` = silo wall / floor wall <= 1.25 on
asyncio and <= 1.4 on trio; ``bare_anyio_cpu_ratio`` <= 1.5; <= 20 KB of memory per rollout;
``artifacts_ratio`` (with artifacts / without) <= 2; ``artifacts_net_ratio`` is the same with
the disk's own cost (``run_dir_create_us`` per rollout) taken out. Prints a table, then one
JSON line.
Run: ``.venv/bin/python benchmarks/bench_concurrency.py [asyncio|trio] [ROLLOUTS] [--rounds N]
[--artifacts]``.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import itertools
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
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


async def _silo(rollouts: int, runs_dir: str | None) -> float:
    start = time.perf_counter()
    results = await silo.run_many(
        ENV, ["TASK-001"], sleepy, runs=rollouts, concurrency=rollouts, runs_dir=runs_dir
    )
    wall = time.perf_counter() - start
    assert len(results) == rollouts and all(r.passed for r in results)
    return wall


def run_silo(backend: str, rollouts: int) -> float:
    return anyio.run(_silo, rollouts, None, backend=backend)


_fresh = itertools.count()


def run_silo_artifacts(parent: str, backend: str, rollouts: int) -> float:
    """run_many writing every run directory, each round into a new directory under ``parent``."""
    runs_dir = os.path.join(parent, f"round-{next(_fresh)}")  # deleted only at the very end
    return anyio.run(_silo, rollouts, runs_dir, backend=backend)


def run_dir_create_us(parent: str, count: int = 200) -> float:
    """CPU microseconds spent creating an empty run directory's worth: a directory, 4 files."""
    probe = os.path.join(parent, "probe")
    os.mkdir(probe)
    start = time.process_time()
    for i in range(count):
        run_dir = os.path.join(probe, f"run{i}")
        os.mkdir(run_dir)
        for name in ("trace.jsonl", "result.json", "state-diff.json", "run.json"):
            with open(os.path.join(run_dir, name), "w") as f:
                f.write("x")
    return (time.process_time() - start) / count * 1e6


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
    artifacts = "--artifacts" in args
    args = [a for a in args if a != "--artifacts"]
    backend = args[0] if args else "asyncio"
    rollouts = int(args[1]) if len(args) > 1 else 10_000
    disk_dir = tempfile.mkdtemp(prefix="silo-bench-")
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else None
    tmpfs_dir = tempfile.mkdtemp(prefix="silo-bench-", dir=shm) if artifacts and shm else None
    try:
        create_us = run_dir_create_us(disk_dir) if artifacts else None
        out = measure_all(
            backend, rollouts, rounds, disk_dir if artifacts else None, tmpfs_dir, create_us
        )
    finally:
        shutil.rmtree(disk_dir, ignore_errors=True)
        if tmpfs_dir is not None:
            shutil.rmtree(tmpfs_dir, ignore_errors=True)
    if create_us is not None:
        out["run_dir_create_us"] = round(create_us, 1)
        print(f"(creating a directory and 4 files on the disk cost {create_us:.0f} µs of CPU)")
    print(json.dumps(out))


def measure_all(
    backend: str,
    rollouts: int,
    rounds: int,
    disk_dir: str | None,
    tmpfs_dir: str | None,
    create_us: float | None = None,
) -> dict[str, object]:
    loads: dict[str, Callable[[str, int], float]] = {
        "silo": run_silo,
        "floor": run_floor,
        "bare_anyio": run_bare,
    }
    if disk_dir is not None:
        loads["artifacts"] = functools.partial(run_silo_artifacts, disk_dir)
    if tmpfs_dir is not None:
        loads["artifacts_tmpfs"] = functools.partial(run_silo_artifacts, tmpfs_dir)
    walls: dict[str, list[float]] = {name: [] for name in loads}
    cpus: dict[str, list[float]] = {name: [] for name in loads}
    gc.collect()
    before = rss_mb()
    peak = before
    for round_ in range(rounds):
        for name, load in loads.items():
            gc.collect()
            cpu = time.process_time()
            walls[name].append(load(backend, rollouts))
            cpus[name].append(time.process_time() - cpu)
            if name == "silo" and round_ == 0:
                # ru_maxrss only grows: read it before any other load (the artifacts' runs keep
                # every trace line as text) can raise it.
                peak = rss_mb()
    median = {name: statistics.median(values) for name, values in walls.items()}
    wall, floor, bare = median["silo"], median["floor"], median["bare_anyio"]
    per_rollout_kb = (peak - before) * 1024 / rollouts
    cpu_us = {name: statistics.median(values) / rollouts * 1e6 for name, values in cpus.items()}
    cpu_ratio = cpu_us["silo"] / cpu_us["bare_anyio"]
    target = 1.25 if backend == "asyncio" else 1.4
    print(f"{'measure':<36}{'median':>10}{'target':>12}")
    print(f"{'rollouts (concurrent)':<36}{rollouts:>10}")
    print(f"{'floor: bare asyncio.gather s':<36}{floor:>10.2f}")
    print(f"{'bare anyio tasks with worlds s':<36}{bare:>10.2f}")
    print(f"{'silo_async run_many s':<36}{wall:>10.2f}")
    print(f"{'floor ratio (silo / floor)':<36}{wall / floor:>10.2f}{f'<= {target}':>12}")
    print(f"{'bare anyio ratio (silo / bare)':<36}{wall / bare:>10.2f}")
    print(f"{'CPU µs per rollout: bare anyio':<36}{cpu_us['bare_anyio']:>10.1f}")
    print(f"{'CPU µs per rollout: silo_async':<36}{cpu_us['silo']:>10.1f}")
    print(f"{'CPU ratio (silo / bare anyio)':<36}{cpu_ratio:>10.2f}{'<= 1.5':>12}")
    print(f"{'KB per rollout (peak - start)':<36}{per_rollout_kb:>10.1f}{'<= 20':>12}")
    out: dict[str, object] = {
        "backend": backend,
        "rollouts": rollouts,
        "rounds": rounds,
        "floor_wall_s": round(floor, 3),
        "bare_anyio_wall_s": round(bare, 3),
        "wall_s": round(wall, 3),
        "floor_ratio": round(wall / floor, 3),
        "bare_anyio_ratio": round(wall / bare, 3),
        "floor_cpu_us": round(cpu_us["floor"], 1),
        "bare_anyio_cpu_us": round(cpu_us["bare_anyio"], 1),
        "cpu_us": round(cpu_us["silo"], 1),
        "bare_anyio_cpu_ratio": round(cpu_ratio, 3),
        "peak_rss_mb": round(peak, 1),
        "kb_per_rollout": round(per_rollout_kb, 1),
    }
    for name, label in (("artifacts", "disk"), ("artifacts_tmpfs", "tmpfs")):
        if name in median:
            ratio = median[name] / wall
            print(f"{f'with artifacts ({label}) s':<36}{median[name]:>10.2f}")
            print(f"{f'artifacts ratio ({label})':<36}{ratio:>10.2f}{'<= 2':>12}")
            out[f"{name}_wall_s"] = round(median[name], 3)
            out[f"{name}_ratio"] = round(ratio, 3)
            if name == "artifacts" and create_us is not None:
                # What remains once the disk's own cost of the 10,000 directories is taken out.
                net = (median[name] - rollouts * create_us / 1e6) / wall
                print(f"{'  net of run_dir_create_us':<36}{net:>10.2f}")
                out["artifacts_net_ratio"] = round(net, 3)
    print(f"({backend}; median of {rounds} interleaved rounds; ideal {3 * SLEEP_S:.1f} s)")
    return out


if __name__ == "__main__":
    main()
