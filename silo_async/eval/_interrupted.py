"""Rollouts a cancellation cut short: indexed as ``cancelled``, or removed — never half-listed.

When an eval is cancelled, every rollout in flight still grades and writes its run directory
(under its own bounded shield) before the cancellation reaches the eval, but ``run()`` then
re-raises instead of returning, so the eval never sees those results. They are read back from
disk here: a whole run directory becomes an index record (``terminationReason: "cancelled"``,
kept out of the statistics), and one whose files were not all written (the grace period ran
out, a second Ctrl-C) is deleted, so ``runs/`` and ``runs/index.jsonl`` always agree.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection, Sequence
from pathlib import Path

from .._errors import SiloError
from ._recorded._runs import RunNotFoundError, load_run
from ._report._records import RolloutRecord

__all__ = ["recover_interrupted"]

#: A plan slot: task id, agent label, run number, baseline (run without the eval's faults).
Slot = tuple[str, str, int, bool]


#: Free run numbers of the interrupted slots, by task, agent and baseline.
Free = dict[tuple[str, str, bool], list[int]]


def _record(run_dir: Path, eval_dir: Path, slots: Free, faulted: bool) -> RolloutRecord:
    # Lenient: a trace line torn by the interruption does not make a graded rollout unusable.
    recorded = load_run(run_dir, strict=False)
    result = recorded.to_run_result()
    # Of an eval with faults, a rollout that met none is one of its baseline.
    baseline = faulted and result.faults is None
    free = slots.get((result.task.id, result.agent_name, baseline), [])
    if type(recorded.run.get("run")) is int:  # run.json says which run it was
        run_no = result.run_index
        if run_no in free:
            free.remove(run_no)
    else:
        # Written before run.json had "run": runs start in plan order and run ids sort by
        # start time, so the n-th orphan of a task and agent is its n-th interrupted slot.
        run_no = free.pop(0) if free else 0
    return RolloutRecord.from_result(result, result.agent_name, run_no, eval_dir, baseline=baseline)


def recover_interrupted(
    eval_dir: Path, in_flight: Sequence[Slot], indexed: Collection[str], *, faulted: bool = False
) -> list[RolloutRecord]:
    """Index or remove the run directories under ``eval_dir/runs`` that no record lists.

    Blocking (reads and deletes files): call it off the event loop.

    Args:
        eval_dir: the eval directory.
        in_flight: the plan slots that had started but not finished, in plan order.
        indexed: run ids already in the index.
        faulted: the eval ran under a fault plan (its rollouts without one are its baseline).

    Returns:
        The records of the whole interrupted rollouts, in run id (start) order.
    """
    runs = eval_dir / "runs"
    if not runs.is_dir():
        return []
    slots: Free = {}
    for task_id, agent, run_no, baseline in in_flight:
        slots.setdefault((task_id, agent, baseline), []).append(run_no)
    known = set(indexed)
    records = []
    for run_dir in sorted(p for p in runs.iterdir() if p.is_dir() and p.name not in known):
        try:
            records.append(_record(run_dir, eval_dir, slots, faulted))
        except (RunNotFoundError, SiloError, OSError, ValueError, KeyError, TypeError):
            shutil.rmtree(run_dir, ignore_errors=True)  # half-written: nothing to grade
    return records
