"""What an audit costs: audited tasks per second on crm, hand-written and family instances.

The crm template is created through the project layer in a temporary project and loaded like a
user's environment. Then, each round:

* ``handwritten``: ``silo.audit`` of crm's hand-written tasks with its solver
  (``examples/agents/crm_solver.py``): every probe, the solver, its mutants;
* ``instances``: ``silo.audit`` of ``--instances`` instances of crm's families (spread evenly
  over them, taken from the train split, where nine instances in ten are), each solved by its
  gold agent.

Every rollout is written under a temporary audit directory, as a real audit writes it. Printed
per phase: tasks, rollouts, wall seconds, audited tasks per second (wall) and CPU milliseconds
per task (this process's CPU time: a loaded machine stretches the wall clock, not the CPU),
the median over rounds; then one JSON line with the same figures.

Run: ``.venv/bin/python benchmarks/bench_audit.py [--rounds 3] [--instances 1000]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

import silo_async as silo
from silo_async.agents._load import load_agent
from silo_async.project import Project

ROOT = Path(__file__).resolve().parent.parent


async def load(project_dir: Path, template: str) -> silo.Environment:
    """The template as a user's environment, created in ``project_dir``."""
    project = await Project.open(project_dir)
    handle = await project.environments.create(template, template=template)
    return await handle.load()


def instance_ids(env: silo.Environment, count: int) -> list[str]:
    """``count`` instances spread over the environment's families (train split)."""
    families = [f.id for f in env.families]
    if not families:
        return []
    share, extra = divmod(count, len(families))
    ids: list[str] = []
    for index, family in enumerate(families):
        wanted = share + (1 if index < extra else 0)
        if wanted:
            ids += [t.id for t in env.instances(family, wanted, split="train")]
    return ids


async def timed(
    env: silo.Environment, tasks: Sequence[str], solver: Any, out: Path
) -> dict[str, float]:
    """One audit of ``tasks``: wall seconds, CPU seconds and the rollouts written."""
    wall, cpu = time.perf_counter(), time.process_time()
    report = await silo.audit(env, list(tasks), solver=solver, out=out)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rollouts = sum(1 for _ in (out / "runs").iterdir())
    assert len(report.tasks) == len(tasks)
    return {"tasks": len(tasks), "rollouts": rollouts, "wall_s": wall, "cpu_s": cpu}


def summary(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Median figures over the rounds, with tasks per second and CPU ms per task."""
    wall = statistics.median(r["wall_s"] for r in rounds)
    cpu = statistics.median(r["cpu_s"] for r in rounds)
    tasks = rounds[0]["tasks"]
    return {
        "tasks": tasks,
        "rollouts": rounds[0]["rollouts"],
        "wall_s": round(wall, 2),
        "tasks_per_s": round(tasks / wall, 1) if wall else 0.0,
        "cpu_ms_per_task": round(cpu / tasks * 1000, 1) if tasks else 0.0,
    }


async def main(rounds: int, instances: int, tasks: int | None = None) -> dict[str, Any]:
    """Audit crm ``rounds`` times each way (``tasks``: only the first hand-written ones)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = await load(Path(tmp), "crm")
        solver = load_agent(str(ROOT / "examples" / "agents" / "crm_solver.py"), ROOT).fn
        handwritten = [t.id for t in env.tasks][:tasks]
        made = instance_ids(env, instances)
        results: dict[str, list[dict[str, float]]] = {"handwritten": [], "instances": []}
        for number in range(rounds):
            base = Path(tmp) / f"round-{number}"
            results["handwritten"].append(await timed(env, handwritten, solver, base / "h"))
            if made:
                results["instances"].append(await timed(env, made, None, base / "i"))
        return {name: summary(found) for name, found in results.items() if found}


def report(figures: dict[str, Any]) -> str:
    """The table printed before the JSON line."""
    lines = [
        f"{'crm':<12}{'tasks':>7}{'rollouts':>10}{'wall s':>9}{'tasks/s':>9}{'CPU ms/task':>13}"
    ]
    for name, f in figures.items():
        lines.append(
            f"{name:<12}{f['tasks']:>7}{f['rollouts']:>10}{f['wall_s']:>9}"
            f"{f['tasks_per_s']:>9}{f['cpu_ms_per_task']:>13}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--instances", type=int, default=1000)
    args = parser.parse_args()
    found = anyio.run(main, args.rounds, args.instances)
    print(report(found))
    print(json.dumps({"bench_audit": found}, sort_keys=True))
