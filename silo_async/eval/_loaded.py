"""An eval's summary read back from its directory, as the object the eval returned.

``summary.json`` holds the statistics as numbers; ``runs/index.jsonl`` holds every rollout's
record. From both, :func:`load_summary` rebuilds the :class:`EvalSummary` (its comparison
computed again from the records, as the eval did), so ``silo-async report`` and an eval stopped
with Ctrl-C print the same tables as a finished ``eval``.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._faults import Faults
from .._task import Task
from ._report._compare import compare, equal_work
from ._report._robustness import robustness
from ._report._stats import default_ks
from ._report._summary import EvalSummary
from ._store import read_index, read_summary

__all__ = ["load_summary"]


def load_summary(eval_dir: str | os.PathLike[str]) -> EvalSummary:
    """The summary of the eval in ``eval_dir``, as :func:`~silo_async.evaluate` returned it.

    ``resumed`` is None (it is not recorded); everything ``summary.json`` holds is equal.

    Raises:
        OSError: ``summary.json`` or the index cannot be read (an eval still running, or
            killed before its summary).
        ValueError: they are not an eval's summary and index of a version this code reads.
    """
    data = read_summary(eval_dir)
    config = dict(data["config"])
    indexed = read_index(eval_dir)
    # The index lists the rollouts a cancellation cut short too; they are in no statistic.
    interrupted = [r for r in indexed if r.termination_reason == "cancelled"]
    finished = [r for r in indexed if r.termination_reason != "cancelled"]
    records = [r for r in finished if not r.baseline]
    without = [r for r in finished if r.baseline]
    tasks = [Task.from_dict(t["task"], source="summary.json", instance=True) for t in data["tasks"]]
    task_ids, labels = [t.id for t in tasks], list(config["agents"])
    ks = default_ks(int(config["runs"]))
    fair, compared = equal_work(records, task_ids, labels)
    kept = {id(r) for r in fair}
    shown = [r for r in records if id(r) in kept or r.task_id not in compared]
    faults = config.get("faults")
    return EvalSummary(
        eval_id=data["evalId"],
        environment=data["environment"],
        tasks=tasks,
        agents=labels,
        config=config,
        planned=int(data["planned"]),
        records=records,
        comparison=compare(shown, task_ids, labels, ks, compared),
        complete=bool(data["complete"]),
        cancelled=bool(data["cancelled"]),
        started_at=data["startedAt"],
        finished_at=data["finishedAt"],
        wall_ms=float(data["wallMs"]),
        out_dir=Path(eval_dir),
        compared=compared,
        interrupted=interrupted,
        infra_retries=int(data.get("infraRetries", 0)),
        executor_start_ms=float(data.get("executorStartMs", 0.0)),
        fault_plan=None if faults is None else Faults.from_config(faults),
        baseline_records=without,
        robustness=robustness(records, without, labels, ks) if config.get("baseline") else None,
    )
