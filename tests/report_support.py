"""A synthetic eval of any size for the report tests: records and details, no rollout run.

Every rollout gets its own details (no two alike, the report's worst case), so the page's size
and opening time are measured without the cost of running thousands of rollouts.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import silo_async as silo
from silo_async.eval import EvalSummary, RolloutRecord
from silo_async.eval._report._compare import compare
from silo_async.eval._report._data import DetailStore
from silo_async.eval._report._stats import default_ks
from silo_async.eval._store import write_eval_dir

REASONS = ["completed"] * 8 + ["timeout", "agent_error"]


def _record(rng: random.Random, i: int, task: str, agent: str, run: int) -> RolloutRecord:
    passed = rng.random() < (0.7 if agent == "a" else 0.4)
    return RolloutRecord(
        task_id=task,
        agent=agent,
        run=run,
        run_id=f"run_20261201T000000000_{i:06d}_{rng.getrandbits(40):010x}",
        run_dir=None,
        passed=passed,
        reward=1.0 if passed else round(rng.random(), 2),
        termination_reason="completed" if passed else rng.choice(REASONS),
        tool_calls=rng.randint(1, 12),
        tool_errors=rng.randint(0, 2),
        tool_faults=1 if rng.random() < 0.02 else 0,
        verifier_error=False,
        error=None,
        failed_required=[] if passed else ["the deal is won"],
        checks_passed=3 if passed else 1,
        checks_total=3,
        duration_ms=rng.uniform(2, 40),
        model_steps=3,
        input_tokens=rng.randint(500, 2000),
        output_tokens=rng.randint(20, 200),
    )


def _details(rng: random.Random, i: int) -> dict[str, Any]:
    steps: list[list[Any]] = []
    for call in range(1, 6):
        steps.append([1, "m", 800, 40, "tool_calls", f"step {call} of rollout {i}", ["get"]])
        output = f'{{"id":"OPP-{rng.randint(0, 999):03d}","note":"{rng.getrandbits(64):x}"}}'
        steps.append([0, call, "get", f'{{"id":"OPP-{call:03d}"}}', output, 0, None])
    diff = {
        "scalars": [],
        "collections": {
            "opportunities": {
                "added": [],
                "removed": [],
                "changed": ["OPP-004"],
                "fields": {"OPP-004": [{"path": "stage", "from": "proposal", "to": f"won {i}"}]},
            }
        },
    }
    checks = [["the deal is won", 1, f"stage=won {i}", 1]]
    return {"o": f"Booked OPP-004 (rollout {i}).", "s": steps, "k": checks, "d": diff}


def synthetic_eval(out: Path, *, tasks: int = 11, runs: int = 455, seed: int = 7) -> EvalSummary:
    """Write an eval directory of ``tasks`` × 2 agents × ``runs`` rollouts; its summary."""
    rng = random.Random(seed)
    task_objs = [
        silo.Task(f"TASK-{t:03d}", f"Task {t}", f"Do task {t}.", f"VER-{t:03d}", "easy")
        for t in range(1, tasks + 1)
    ]
    agents = ["a", "b"]
    records: list[RolloutRecord] = []
    refs: list[int] = []
    store = DetailStore()
    for t in task_objs:
        for agent in agents:
            for run in range(1, runs + 1):
                i = len(records)
                records.append(_record(rng, i, t.id, agent, run))
                refs.append(store.add(_details(rng, i)))
    task_ids = [t.id for t in task_objs]
    summary = EvalSummary(
        eval_id="eval_synthetic",
        environment="synthetic",
        tasks=task_objs,
        agents=agents,
        config={"tasks": task_ids, "agents": agents, "runs": runs, "concurrency": 1000},
        planned=len(records),
        records=records,
        comparison=compare(records, task_ids, agents, default_ks(runs)),
        complete=True,
        cancelled=False,
        started_at="2026-12-01T00:00:00.000Z",
        finished_at="2026-12-01T00:01:00.000Z",
        wall_ms=60_000.0,
        out_dir=out,
        compared=dict.fromkeys(task_ids, runs),
    )
    write_eval_dir(summary, (store.texts, refs))
    return summary
