"""An eval's books: each rollout's record and details by plan slot, and the progress they make.

:class:`EvalBooks` is what an executor tells (:class:`~silo_async.eval._executor.Books`: a slot
began, a slot finished) and what the summary reads back: records and details in plan order, the
counters behind :class:`EvalProgress`, and the line of ``runs/index.jsonl`` each finished
rollout gets, appended once its run directory is complete.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

from .._jsonutil import compact_json
from ..runs._appender import LineAppender
from ._executor import Details
from ._report._data import DetailStore
from ._report._records import RolloutRecord

__all__ = ["EvalBooks", "EvalProgress"]


@attrs.frozen
class EvalProgress:
    """A snapshot of a running eval, passed to ``on_progress`` after each rollout.

    Attributes:
        total: rollouts planned.
        done: rollouts finished.
        passes: finished rollouts that passed.
        faults: finished rollouts with an environment fault.
        elapsed_s: seconds since the eval started (or resumed).
        ended_early: finished rollouts that did not complete (agent error, timeout, a limit).
        kept: rollouts a resumed eval kept from before it was interrupted (counted in
            ``done``, ``passes``, ``faults`` and ``ended_early`` too); 0 for a new eval.
    """

    total: int
    done: int
    passes: int
    faults: int
    elapsed_s: float
    ended_early: int = 0
    kept: int = 0

    @property
    def left(self) -> int:
        """Rollouts still to run."""
        return self.total - self.done

    @property
    def rate(self) -> float:
        """Rollouts finished per second so far (by this run: kept ones aside)."""
        return (self.done - self.kept) / self.elapsed_s if self.elapsed_s > 0 else 0.0


class EvalBooks:
    """Per-rollout bookkeeping: records and details by plan slot, counters for progress.

    It is the executor's :class:`~silo_async.eval._executor.Books`: told when a slot of the
    executor's job starts and when it finishes (on the event loop). The job holds the plan
    slots left to run (``todo``: all of them, unless the eval resumed), in plan order.
    """

    def __init__(
        self, total: int, details: bool, todo: list[int], index: LineAppender | None
    ) -> None:
        self.total = total
        self.keep_details = details
        self.todo = todo  # the job's slot -> the plan's slot
        self.index = index
        self.records: list[RolloutRecord | None] = [None] * total
        self.details: list[int] = [-1] * total  # ids in ``store``
        self.store = DetailStore()
        self.done = self.passes = self.faults = self.early = self.kept = 0
        self.started = 0  # workers take slots in job order: every slot below this has started
        self.clock0 = time.perf_counter()
        self.on_progress: Callable[[EvalProgress], None] | None = None

    def keep(self, slot: int, record: RolloutRecord, details: Details) -> None:
        """Count in a rollout a resumed eval kept (plan slot ``slot``)."""
        self.add(slot, record, details)
        self.kept += 1

    def begin(self, slot: int) -> None:
        self.started = max(self.started, slot + 1)

    def deliver(self, slot: int, record: RolloutRecord, details: Details) -> None:
        if self.index is not None:  # its run directory is complete: now the index may say so
            self.index.append(compact_json(record.to_dict()))
        progress = self.add(self.todo[slot], record, details)
        if self.on_progress is not None:
            self.on_progress(progress)

    def add(self, slot: int, record: RolloutRecord, details: Details) -> EvalProgress:
        self.records[slot] = record
        if self.keep_details:
            self.details[slot] = self.store.add(details)
        self.done += 1
        self.passes += record.passed
        self.faults += record.env_fault
        self.early += record.termination_reason != "completed"
        return self.progress()

    def progress(self) -> EvalProgress:
        elapsed = time.perf_counter() - self.clock0
        return EvalProgress(
            self.total, self.done, self.passes, self.faults, elapsed, self.early, self.kept
        )

    def finished(self) -> tuple[list[RolloutRecord], list[int]]:
        """The finished rollouts in plan order, and each one's details id in ``store``."""
        pairs = [(r, d) for r, d in zip(self.records, self.details, strict=True) if r is not None]
        return [r for r, _ in pairs], [d for _, d in pairs]

    def in_flight(self) -> list[int]:
        """Plan slots that started and did not finish (a cancellation cut them short)."""
        return [s for s in self.todo[: self.started] if self.records[s] is None]

    def close(self) -> None:
        if self.index is not None:
            self.index.close()
