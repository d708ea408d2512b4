"""Resuming an eval: what its directory holds, decided rollout by rollout.

An eval killed at any moment leaves, per planned rollout, any of: a complete run directory
(``run.json`` written last, so present only when the rest is), an index line pointing at one,
a torn directory (killed before ``run.json``), a complete one whose rollout was cut short by a
Ctrl-C (``cancelled``), and, after an earlier resume, a model agent's interrupted attempt
parked under ``.resume/``. Of an eval with faults and a baseline, a directory whose
``run.json`` (or, torn, whose ``run_start``) records no fault plan is a baseline rollout.
:func:`survey` reads all of it (nothing is changed) and decides:

* a rollout with a complete, not cancelled run directory is **kept** (one per rollout: the one
  the index names, else the first; any other is removed), indexed or not: its record is read
  back from its files, so it is exactly the record the eval made when it ran;
* a rollout the Ray executor gave up on (``workerLost``: an index line and no directory) is
  kept as recorded;
* every other planned rollout is **run again**: its torn or cut-short directories are removed,
  except, for a model agent, the one that recorded the most model responses, parked under
  ``.resume/`` for the rerun to continue from (:mod:`silo_async.agents._replay`).

:func:`tidy` then carries that out in an order a second kill cannot spoil: recordings parked
first, then ``runs/index.jsonl`` rewritten (atomically) with the kept rollouts, then the
removals. Run again, it finds what it left and finishes the job.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import attrs

from .._errors import SiloError
from .._jsonutil import compact_json, parse_json
from ..agents._replay import read_recording
from ..runs import EvalDir, RunDir
from ._executor import Details, PlanEntry
from ._recorded._runs import RunNotFoundError, load_run
from ._report._details import compact_details
from ._report._prices import Prices
from ._report._records import RolloutRecord

__all__ = ["Found", "ResumeState", "remove_parked", "survey", "tidy"]


@attrs.frozen
class Found:
    """A run directory found in an eval directory.

    Attributes:
        run_dir: where it is.
        slot: its rollout ``(task, agent, run, baseline)``, from ``run.json`` or the trace's
            ``run_start`` (None: it cannot say).
        complete: ``run.json`` and the other summary files are there.
        cancelled: a complete rollout cut short by a cancellation.
        parked: under ``.resume/`` (an interrupted attempt kept for its recording).
    """

    run_dir: RunDir
    slot: PlanEntry | None
    complete: bool
    cancelled: bool = False
    parked: bool = False


@attrs.frozen
class ResumeState:
    """What a resume keeps, runs and removes.

    Attributes:
        kept: the kept rollouts' records, by plan slot.
        details: the kept rollouts' compact details for the report, by plan slot.
        todo: the plan slots to run, in plan order.
        replays: for a model agent's rollout to run again, the parked recording it continues.
        park: directories to move under ``.resume/``: ``(from, to)``.
        remove: directories to remove.
        finished_summary: the eval's ``summary.json`` when the eval had finished (then
            nothing is to be done).
    """

    kept: dict[int, RolloutRecord]
    details: dict[int, Details]
    todo: list[int]
    replays: dict[PlanEntry, str]
    park: list[tuple[str, str]]
    remove: list[str]
    finished_summary: dict[str, Any] | None = None

    @property
    def kept_ids(self) -> frozenset[str]:
        """The run ids of the kept rollouts' directories."""
        return frozenset(r.run_id for r in self.kept.values() if r.run_dir is not None)


def _indexed(eval_dir: Path) -> dict[PlanEntry, RolloutRecord]:
    records: dict[PlanEntry, RolloutRecord] = {}
    for line in EvalDir(eval_dir).index():
        if line.data is None:
            continue  # damaged: its rollout is found by its directory
        try:
            record = RolloutRecord.from_dict(line.data)
        except (KeyError, TypeError, ValueError):
            continue
        if record.termination_reason != "cancelled":
            slot = (record.task_id, record.agent, record.run, record.baseline)
            records.setdefault(slot, record)
    return records


def _still_whole(eval_dir: Path, record: RolloutRecord) -> bool:
    """The run directory ``record`` points at is still complete.

    A record without one (the Ray executor gave up on that rollout) is whole as recorded.
    """
    if record.run_dir is None:
        return True
    return EvalDir(eval_dir).run(record.run_dir).is_complete()


def _slot(task: Any, agent: Any, run: Any, baseline: bool) -> PlanEntry | None:
    if isinstance(task, str) and isinstance(agent, str) and type(run) is int:
        return (task, agent, run, baseline)
    return None


def _started_as(run_dir: RunDir, faulted: bool) -> PlanEntry | None:
    """The rollout a torn directory belongs to, from its trace's first event."""
    try:
        with open(run_dir.file(RunDir.TRACE), encoding="utf-8", errors="replace") as trace:
            first = parse_json(trace.readline())
    except (OSError, ValueError):
        return None
    if not isinstance(first, dict) or first.get("type") != "run_start":
        return None
    task = first.get("task")
    task_id = task.get("id") if isinstance(task, dict) else None
    baseline = faulted and first.get("faults") is None
    return _slot(task_id, first.get("agent"), first.get("run"), baseline)


def _classify(run_dir: RunDir, parked: bool, faulted: bool) -> Found | None:
    """What ``run_dir`` is (None: not a run directory: left alone)."""
    try:
        run = run_dir.read_run()
    except OSError:
        run = None
    except SiloError as exc:
        if exc.code == "run_format_unsupported":
            raise  # written by a newer silo_async: not ours to judge, let alone remove
        run = None
    if run is not None and all(
        os.path.isfile(run_dir.file(name)) for name in (RunDir.RESULT, RunDir.STATE_DIFF)
    ):
        baseline = faulted and run.get("faults") is None
        slot = _slot(run.get("taskId"), run.get("agent"), run.get("run"), baseline)
        cancelled = run.get("terminationReason") == "cancelled"
        return Found(run_dir, slot, True, cancelled, parked)
    if run is None and not run_dir.has_trace():
        # Killed between making the directory and creating its trace: an empty directory of
        # ours. Anything else without a trace is not a run directory: left alone.
        ours = parked or not any(os.scandir(run_dir))
        return Found(run_dir, None, False, parked=parked) if ours else None
    return Found(run_dir, _started_as(run_dir, faulted), False, parked=parked)


def _load(found: Found) -> Any:
    """The kept rollout's RunResult, or None when its files cannot be read after all."""
    try:
        return load_run(found.run_dir.path, strict=False).to_run_result()
    except (RunNotFoundError, SiloError, OSError, ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, SiloError) and exc.code == "run_format_unsupported":
            raise
        return None


def _lost_details(record: RolloutRecord) -> Details:
    return {"o": "", "c": [], "k": [], "d": {}, "e": record.error}


def _finished_summary(eval_dir: Path, eval_id: str, planned: int) -> dict[str, Any] | None:
    """``summary.json`` of this eval when it says the eval finished (written last: so it did)."""
    try:
        data = EvalDir(eval_dir).read_summary()
    except (OSError, ValueError):
        return None
    if (
        data.get("evalId") == eval_id
        and data.get("complete") is True
        and data.get("cancelled") is False
        and data.get("finished") == planned
    ):
        return data
    return None


def survey(
    eval_dir: Path,
    eval_id: str,
    plan: Sequence[PlanEntry],
    replayable: Collection[str],
    *,
    faulted: bool = False,
    prices: Prices | None,
    details: bool,
) -> ResumeState:
    """Decide what resuming the eval in ``eval_dir`` keeps, runs and removes (blocking, read-only).

    Args:
        eval_dir: the eval directory.
        eval_id: its id.
        plan: its rollouts, by slot.
        replayable: labels of the agents that continue a recording (model agents).
        faulted: the eval runs under a fault plan (its rollouts without one are its baseline).
        prices: the eval's price table (kept records carry their cost).
        details: also read the kept rollouts' compact details (for the report).

    Raises:
        SiloError: ``run_format_unsupported``: a run directory was written by a newer silo_async.
    """
    # summary.json counts the rollouts under the eval's own plan: its baseline apart.
    finished = _finished_summary(eval_dir, eval_id, sum(not entry[3] for entry in plan))
    indexed = _indexed(eval_dir)
    if finished is not None:
        kept = {i: indexed[e] for i, e in enumerate(plan) if e in indexed}
        if len(kept) == len(plan) and all(_still_whole(eval_dir, r) for r in kept.values()):
            return ResumeState(kept, {}, [], {}, [], [], finished)
        # A run directory removed or damaged since the summary: resumed like any other.
    base = EvalDir(eval_dir)
    found = [f for d in base.run_dirs() if (f := _classify(d, False, faulted)) is not None]
    found += [f for d in base.resume_dirs() if (f := _classify(d, True, faulted)) is not None]
    planned = set(plan)
    state = ResumeState({}, {}, [], {}, [], [])
    by_slot: dict[PlanEntry, list[Found]] = {}
    for item in found:
        if item.slot is not None and item.slot in planned:
            by_slot.setdefault(item.slot, []).append(item)
        else:  # no place in the plan (torn before it said, or not this eval's): nothing to keep
            state.remove.append(os.fspath(item.run_dir))
    for slot, entry in enumerate(plan):
        mine = by_slot.get(entry, [])
        if _keep(state, slot, entry, mine, indexed.get(entry), eval_dir, prices, details):
            continue
        state.todo.append(slot)
        _rerun(state, entry, mine, entry[1] in replayable, base)
    return state


def _keep(
    state: ResumeState,
    slot: int,
    entry: PlanEntry,
    mine: list[Found],
    record: RolloutRecord | None,
    eval_dir: Path,
    prices: Prices | None,
    details: bool,
) -> bool:
    """Keep the rollout at ``slot`` if it finished (its other directories go); False if not."""
    whole = [f for f in mine if f.complete and not f.cancelled and not f.parked]
    if record is not None:  # the indexed directory first
        whole.sort(key=lambda f: f.run_dir.name != record.run_id)
    for candidate in whole:
        indexed = record is not None and candidate.run_dir.name == record.run_id
        if indexed and prices is None and not details:
            assert record is not None
            kept = record  # the index line is the record (cost is rounded there: not with prices)
        else:
            result = _load(candidate)
            if result is None:
                continue
            kept = RolloutRecord.from_result(
                result, entry[1], entry[2], eval_dir, prices, baseline=entry[3]
            )
            if details:
                state.details[slot] = compact_details(result)
        state.kept[slot] = kept
        state.remove.extend(os.fspath(f.run_dir) for f in mine if f is not candidate)
        return True
    if record is not None and record.run_dir is None:  # the Ray executor gave up on it
        state.kept[slot] = record
        if details:
            state.details[slot] = _lost_details(record)
        state.remove.extend(os.fspath(f.run_dir) for f in mine)
        return True
    return False


def _rerun(
    state: ResumeState, entry: PlanEntry, mine: list[Found], replayable: bool, base: EvalDir
) -> None:
    """Clear the way for running ``entry`` again, keeping its best recording for a model agent."""
    best: Found | None = None
    if replayable and mine:
        steps = {id(f): len(read_recording(os.fspath(f.run_dir)).steps) for f in mine}
        best = max(mine, key=lambda f: (steps[id(f)], f.complete, f.run_dir.name))
        if steps[id(best)] == 0:
            best = None
    for item in mine:
        if item is not best:
            state.remove.append(os.fspath(item.run_dir))
    if best is None:
        return
    target = best.run_dir.path if best.parked else Path(base.resume) / best.run_dir.name
    if not best.parked:
        state.park.append((os.fspath(best.run_dir), os.fspath(target)))
    state.replays[entry] = os.fspath(target.absolute())


def tidy(eval_dir: Path, state: ResumeState, plan: Sequence[PlanEntry]) -> None:
    """Carry out ``state`` on disk: park, rewrite the index, remove (blocking; see the module)."""
    base = EvalDir(eval_dir)
    for source, target in state.park:
        os.makedirs(base.resume, exist_ok=True)
        os.replace(source, target)
    base.write_index(
        compact_json(state.kept[s].to_dict()) for s in range(len(plan)) if s in state.kept
    )
    for path in state.remove:
        shutil.rmtree(path, ignore_errors=True)
    if not state.replays:
        remove_parked(eval_dir)


def remove_parked(eval_dir: str | os.PathLike[str]) -> None:
    """Remove ``.resume/`` and whatever recordings are left in it (blocking)."""
    shutil.rmtree(EvalDir(eval_dir).resume, ignore_errors=True)
