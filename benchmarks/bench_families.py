"""A 10,000-instance crm eval with the gold agent, in one process (issue 30).

The crm template is created through the project layer in a temporary project; its task
families' instances are evaluated with ``silo_async.testing.gold_agent`` in one event loop, with
every artifact written (the eval directory under /dev/shm when it exists: the framework is
measured, not the disk). The instances are ``F#SEED`` ids taken round robin over the families,
seeds from 0 upward (a seed without an instance skipped), or with ``--split train|test`` by the
scan rule of ``eval --family`` (distinct instances of that split: the families must have
enough).

Prints what it measured — resolving the plan (every instance built), the eval's wall and CPU
time, rollouts per second, CPU µs per rollout, peak RSS, the pass rate (every instance must
pass) — next to this machine's cost of one bare ``anyio.lowlevel.checkpoint()`` (the unit the
other benchmarks are read in), then one JSON line.

Run: ``.venv/bin/python benchmarks/bench_families.py [--instances 10000] [--concurrency 200]
[--split any|train|test] [--backend asyncio|trio] [--dir /dev/shm]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from anyio.lowlevel import checkpoint

import silo_async as silo
from silo_async.project import Project
from silo_async.testing import gold_agent


def checkpoint_us(rounds: int = 15, calls: int = 20_000) -> float:
    """Median CPU µs of one bare checkpoint on this machine (as bench_call_tool measures it)."""

    async def measure() -> list[float]:
        out = []
        for _ in range(rounds):
            start = time.process_time()
            for _ in range(calls):
                await checkpoint()
            out.append((time.process_time() - start) / calls * 1e6)
        return out

    return statistics.median(anyio.run(measure))


def instance_ids(env: silo.Environment, count: int, split: str) -> list[str]:
    """``count`` instance ids: by seed round robin (``any``), else by the scan rule."""
    families = [f.id for f in env.families]
    if split != "any":
        share = [count // len(families) + (i < count % len(families)) for i in range(len(families))]
        return [
            t.id
            for f, n in zip(families, share, strict=True)
            for t in env.instances(f, n, split=split)
        ]
    ids: list[str] = []
    seed = 0
    while len(ids) < count:
        for family in families:
            try:
                ids.append(env.task(f"{family}#{seed}").id)
            except silo.SiloError as exc:
                if exc.code != "task_not_found":
                    raise
            if len(ids) == count:
                break
        seed += 1
    return ids


async def main(count: int, concurrency: int, split: str, scratch: Path) -> dict[str, Any]:
    (scratch / "project").mkdir()
    project = await Project.open(scratch / "project")
    env = await (await project.environments.create("crm", template="crm")).load()
    start_cpu, start = time.process_time(), time.perf_counter()
    ids = instance_ids(env, count, split)
    plan_s, plan_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    start_cpu, start = time.process_time(), time.perf_counter()
    summary = await silo.evaluate(
        env, ids, {"gold": gold_agent}, concurrency=concurrency, out_dir=scratch / "eval"
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    passed = sum(1 for r in summary.records if r.passed)
    return {
        "instances": len(ids),
        "families": len(env.families),
        "distinct_params": len(
            {json.dumps(dict(env.task(i).params or {}), sort_keys=True) for i in ids}
        ),
        "split": split,
        "plan_s": round(plan_s, 2),
        "plan_cpu_us_per_instance": round(plan_cpu / len(ids) * 1e6, 1),
        "eval_wall_s": round(wall, 2),
        "eval_cpu_s": round(cpu, 2),
        "rollouts_per_s": round(len(summary.records) / wall, 1),
        "cpu_us_per_rollout": round(cpu / len(summary.records) * 1e6, 1),
        "pass_rate": passed / len(summary.records),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "concurrency": concurrency,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--split", choices=["any", "train", "test"], default="any")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    args = parser.parse_args()
    point = checkpoint_us()
    with tempfile.TemporaryDirectory(prefix="bench-families-", dir=args.dir) as tmp:
        figures = anyio.run(
            main, args.instances, args.concurrency, args.split, Path(tmp), backend=args.backend
        )
    figures["checkpoint_us"] = round(point, 3)
    figures["cpu_per_rollout_in_checkpoints"] = round(figures["cpu_us_per_rollout"] / point, 1)
    figures["backend"] = args.backend
    print(
        f"crm: {figures['instances']:,} instances of {figures['families']} families "
        f"({figures['distinct_params']:,} distinct params), split {figures['split']}"
    )
    print(
        f"plan (every instance built): {figures['plan_s']:.2f} s, "
        f"{figures['plan_cpu_us_per_instance']:.0f} µs CPU per instance"
    )
    print(
        f"eval with the gold agent, concurrency {figures['concurrency']}: "
        f"{figures['eval_wall_s']:.2f} s wall, {figures['eval_cpu_s']:.2f} s CPU, "
        f"{figures['rollouts_per_s']:,.0f} rollouts/s, {figures['cpu_us_per_rollout']:.0f} µs "
        f"CPU per rollout ({figures['cpu_per_rollout_in_checkpoints']:.0f} checkpoints)"
    )
    print(
        f"pass rate {figures['pass_rate']:.3f} (must be 1.000); peak RSS "
        f"{figures['peak_rss_mb']:.0f} MB; one bare checkpoint {point:.3f} µs CPU here"
    )
    print(json.dumps(figures))
    sys.exit(0 if figures["pass_rate"] == 1.0 else 1)
