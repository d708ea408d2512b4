"""Scale-out: the same CPU-bound eval with the local executor and with Ray on 2 workers.

The crm template is created through the project layer in a temporary project and evaluated with
the scripted solver (``examples/agents/crm_solver.py``) on all of its tasks, with enough runs for
at least 5,000 rollouts, artifacts written. The local executor runs it in this event loop (one
core); ``silo.RayExecutor(workers=2)`` on a local Ray started first, whose start (Ray itself,
then the eval's workers loading the environment) is measured apart and excluded from ``ray_s``.
Rounds alternate (local, Ray, local, Ray...) so drift hits both sides; medians are reported.
``speedup`` = local_s / ray_s (target >= 1.6 on 2 cores). Prints a table, then one JSON line.

Run: ``.venv/bin/python benchmarks/bench_ray.py [--rollouts 5000] [--workers 2]
[--concurrency 64] [--rounds 3] [--dir /dev/shm]``. Needs ``pip install 'silo_async[ray]'``.
Scratch files go to /dev/shm when it exists (RAM), so the numbers measure the framework
rather than the disk. On a machine shared with other sessions, Linux (autogroup) shares CPU
between sessions first and Ray's workers live in this one: run it at a higher session priority
(``echo -10 > /proc/self/autogroup`` as root) or on an idle machine, or the workers together get
one session's share.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

import silo_async as silo
from silo_async.agents._load import load_agent
from silo_async.eval import evaluate
from silo_async.project import Project

ROOT = Path(__file__).resolve().parent.parent
SOLVER = "examples/agents/crm_solver.py"


async def load_crm(project_dir: Path) -> silo.Environment:
    project = await Project.open(project_dir)
    handle = await project.environments.create("crm", template="crm")
    return await handle.load()


async def timed_eval(
    env: silo.Environment, agents: dict[str, Any], args: argparse.Namespace, out: Path, ex: Any
) -> tuple[float, float]:
    """(seconds without the executor's start, executor start seconds) of one eval."""
    start = time.perf_counter()
    summary = await evaluate(
        env, None, agents, runs=args.runs, concurrency=args.concurrency, out_dir=out, executor=ex
    )
    wall = time.perf_counter() - start
    assert summary.complete and summary.infra_retries == 0
    assert all(r.passed for r in summary.records), "the solver must pass every task"
    started = summary.executor_start_ms / 1000
    return wall - started, started


def scratch_root(given: str | None) -> str | None:
    if given is not None:
        return given
    return "/dev/shm" if Path("/dev/shm").is_dir() else None


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=scratch_root(args.dir)) as tmp:
        root = Path(tmp)
        env = await load_crm(root)
        agents = {"solver": load_agent(str(ROOT / SOLVER), ROOT).fn}
        args.runs = math.ceil(args.rollouts / len(env.tasks))
        clock0 = time.perf_counter()
        executor = silo.RayExecutor(workers=args.workers)
        await anyio.to_thread.run_sync(executor.start)
        ray_init_s = time.perf_counter() - clock0
        local_times: list[float] = []
        ray_times: list[float] = []
        worker_starts: list[float] = []
        try:
            for round_no in range(args.rounds):
                for side, ex, times in (("local", None, local_times), ("ray", executor, ray_times)):
                    out = root / f"{side}{round_no}"
                    seconds, started = await timed_eval(env, agents, args, out, ex)
                    times.append(seconds)
                    if ex is not None:
                        worker_starts.append(started)
                    await anyio.to_thread.run_sync(shutil.rmtree, out)
        finally:
            await anyio.to_thread.run_sync(executor.shutdown)
        local_s, ray_s = statistics.median(local_times), statistics.median(ray_times)
        total = args.runs * len(env.tasks)
        return {
            "rollouts": total,
            "tasks": len(env.tasks),
            "runs": args.runs,
            "workers": args.workers,
            "concurrency": args.concurrency,
            "rounds": args.rounds,
            "scratch": str(root.parent),
            "local_s": round(local_s, 3),
            "ray_s": round(ray_s, 3),
            "speedup": round(local_s / ray_s, 3),
            "local_all_s": [round(t, 2) for t in local_times],
            "ray_all_s": [round(t, 2) for t in ray_times],
            "ray_init_s": round(ray_init_s, 3),
            "workers_start_s": round(statistics.median(worker_starts), 3),
            "ray_start_s": round(ray_init_s + statistics.median(worker_starts), 3),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=5_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (median kept)")
    parser.add_argument("--dir", default=None, help="scratch directory (default: /dev/shm)")
    args = parser.parse_args()
    result = anyio.run(main_async, args)
    rows = [
        ("rollouts", f"{result['rollouts']} ({result['tasks']} tasks × {result['runs']} runs)"),
        ("scratch dir", f"{result['scratch']} (median of {result['rounds']} alternating rounds)"),
        ("local executor", f"{result['local_s']:.2f} s  {result['local_all_s']}"),
        (
            f"ray, {result['workers']} workers",
            f"{result['ray_s']:.2f} s  {result['ray_all_s']}  (start excluded)",
        ),
        ("speedup", f"{result['speedup']:.2f}  (target >= 1.6)"),
        (
            "ray start",
            f"{result['ray_start_s']:.2f} s  (ray.init {result['ray_init_s']:.2f} s + workers "
            f"{result['workers_start_s']:.2f} s)",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key.ljust(width)}  {value}")
    keys = ("rollouts", "local_s", "ray_s", "speedup", "ray_start_s")
    print(json.dumps({k: result[k] for k in keys}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
