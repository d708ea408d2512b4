"""The driver side of the Ray executor: keep every worker fed, collect results, survive deaths.

Runs in one thread of the driver (Ray's client calls block), and talks to the eval's event loop
only through ``anyio.from_thread``: the books hear of each slot that begins and each rollout
that finishes, in batches.

* **Pulling, not splitting.** A worker is handed new plan entries only when it reports finished
  ones (one ``pull`` in flight per worker), never more than its own concurrency in hand and never
  more than the eval's overall limit in all: a slow worker pulls less and holds nothing back.
* **Deaths.** When a worker dies (killed, out of memory), every entry it held goes back to the
  front of the queue and is counted in ``infraRetries``; Ray restarts the worker (its
  ``__init__`` loads everything again) and it is fed again once it answers a ping. Results are
  taken once per slot, so nothing is recorded twice.
* **A rollout that kills its worker** is found by isolation: from its second loss on, an entry
  runs alone on a worker; an entry lost :data:`MAX_TRIES` times is recorded as an environment
  fault (``workerLost``) and not run again. Its neighbours lost alongside it run again normally.
* **Dead attempts' files.** Run directories written by attempts that died are removed at the
  end, so ``runs/`` holds exactly one directory per recorded rollout.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import anyio.from_thread
import attrs

from ..._errors import SiloError
from ...runs import RunDir
from .._executor import Books, ExecutorReport, PlanEntry
from .._report._records import RolloutRecord
from ._shipping import load_problem
from ._worker import Finished

__all__ = ["ISOLATE_AFTER", "MAX_TRIES", "Dispatcher"]

#: Losses (worker deaths) after which a rollout is recorded as an environment fault.
MAX_TRIES = 3
#: From this many losses on, a rollout runs alone on a worker (so the culprit is certain).
ISOLATE_AFTER = 2
#: Failed restarts in a row (deaths while holding no rollout) before a worker is given up.
MAX_LOSSES = 5
#: How often the dispatcher looks up from Ray to check for a stop request.
POLL_S = 0.25
#: How long stopping may take (workers let cancelled rollouts write their files).
STOP_WAIT_S = 40.0


@attrs.define(eq=False)
class _Worker:
    handle: Any
    ready: bool = True
    dead: bool = False
    held: set[int] = attrs.Factory(set)
    pull: Any = None
    isolating: bool = False
    losses: int = 0
    fed: int = 0  # slots handed to it so far


class Dispatcher:
    """Runs the plan on ``handles`` (see the module docstring); :meth:`run` blocks until done.

    Args:
        ray: the ``ray`` module.
        handles: the workers, each already answered a ping.
        plan: the eval's plan, by slot.
        concurrency: the eval's overall limit.
        per_worker: each worker's own limit.
        books: the eval's books (called on the event loop).
        report: where ``infraRetries`` is counted.
        stop: set from the event loop to cancel the eval.
        names: shipped-object keys to the names messages use.
    """

    def __init__(
        self,
        ray: Any,
        handles: Sequence[Any],
        plan: Sequence[PlanEntry],
        *,
        concurrency: int,
        per_worker: int,
        books: Books,
        report: ExecutorReport,
        stop: threading.Event,
        names: dict[str, str],
    ) -> None:
        self.ray, self.plan, self.books, self.report, self.stop = ray, plan, books, report, stop
        self.names = names
        self.concurrency, self.per_worker = concurrency, per_worker
        self.workers = [_Worker(h) for h in handles]
        self.pending: deque[int] = deque(range(len(plan)))
        self.isolated: deque[int] = deque()
        self.done = [False] * len(plan)
        self.left = len(plan)
        self.losses: dict[int, int] = {}
        self.recorded: set[str] = set()
        self.calls: dict[Any, tuple[_Worker, str]] = {}

    # The loop ---------------------------------------------------------------------------

    def run(self) -> None:
        """Run every slot (or stop when asked); then remove dead attempts' run directories."""
        for worker in self.workers:
            self._call(worker, "serve")
        while self.left:
            if self.stop.is_set():
                self._stop_all()
                break
            self._feed()
            if not self.calls:
                raise SiloError(
                    "executor_unavailable",
                    f"Every Ray worker died and could not be restarted; {self.left} rollouts "
                    "did not run. Check the workers' memory and `ray status`.",
                )
            ready, _ = self.ray.wait(list(self.calls), num_returns=1, timeout=POLL_S)
            for ref in ready:
                self._handle(ref)

    def _call(self, worker: _Worker, method: str, *args: Any) -> Any:
        ref = getattr(worker.handle, method).remote(*args)
        self.calls[ref] = (worker, method)
        return ref

    def _handle(self, ref: Any) -> None:
        worker, method = self.calls.pop(ref, (None, ""))
        if worker is None:
            return  # a call of an incarnation already mourned
        if method == "pull":
            worker.pull = None
        try:
            value = self.ray.get(ref)
        except self.ray.exceptions.RayActorError:
            self._lost(worker)
            return
        except self.ray.exceptions.RayTaskError as exc:  # our code (or a bug) raised remotely
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, Exception) else exc) from None
        if method in ("pull", "stop"):
            self._finished(worker, value)
        elif method == "ping":
            self._answered(worker, value)

    # Feeding ----------------------------------------------------------------------------

    def _feed(self) -> None:
        # The least busy first (then the least fed): when the eval's limit is below the
        # workers' own, room freed by one worker goes to the one holding least, so every worker
        # gets its share.
        for worker in sorted(self.workers, key=lambda w: (len(w.held), w.fed)):
            if worker.dead or not worker.ready or worker.pull is not None:
                continue
            work = self._take(worker)
            if not work and not worker.held:
                continue
            worker.held.update(work)
            worker.fed += len(work)
            if work:
                self._post(self._begin, work)
            worker.pull = self._call(worker, "pull", [(slot, self.plan[slot]) for slot in work])

    def _take(self, worker: _Worker) -> list[int]:
        if worker.isolating:
            return []
        if self.isolated:
            if not worker.held:
                worker.isolating = True
                return [self.isolated.popleft()]
            if worker is self._drainer():
                return []  # let this one empty out to run an isolated rollout
        in_hand = sum(len(w.held) for w in self.workers)
        room = min(self.per_worker - len(worker.held), self.concurrency - in_hand)
        return [self.pending.popleft() for _ in range(min(room, len(self.pending)))]

    def _drainer(self) -> _Worker | None:
        return next((w for w in self.workers if w.ready and not w.isolating), None)

    # Results ----------------------------------------------------------------------------

    def _finished(self, worker: _Worker, results: list[Finished]) -> None:
        batch = []
        for slot, record, details in results:
            worker.held.discard(slot)
            if self.done[slot]:
                continue  # never expected: each slot runs on one worker at a time
            batch.append((slot, record, details))
            self._record(slot, record)
        if worker.isolating and not worker.held:
            worker.isolating = False
        if batch:
            self._post(self._deliver, batch)

    def _record(self, slot: int, record: RolloutRecord) -> None:
        self.done[slot] = True
        self.left -= 1
        if record.run_id:
            self.recorded.add(record.run_id)

    def _answered(self, worker: _Worker, info: dict[str, Any]) -> None:
        problems: dict[str, str] = info.get("problems") or {}
        if problems:  # loaded at the start, so this only changes if the files changed since
            key, problem = next(iter(problems.items()))
            raise load_problem(self.names.get(key, key), problem, str(info.get("host")))
        worker.ready = True
        self._call(worker, "serve")

    # Deaths -----------------------------------------------------------------------------

    def _lost(self, worker: _Worker) -> None:
        for ref, (owner, _) in list(self.calls.items()):
            if owner is worker:  # the dead incarnation's other calls fail too: ignore them
                del self.calls[ref]
        worker.pull, worker.ready, worker.isolating = None, False, False
        lost, worker.held = sorted(worker.held, reverse=True), set()
        if self.stop.is_set():
            worker.dead = True
            return
        for slot in lost:
            self._requeue(slot)
        # A death with rollouts in hand is charged to them (bounded by MAX_TRIES each); one
        # with none is a restart that failed.
        worker.losses = 0 if lost else worker.losses + 1
        if worker.losses > MAX_LOSSES:
            worker.dead = True
            self.ray.kill(worker.handle, no_restart=True)
            return
        self._call(worker, "ping")  # answered once Ray has restarted it

    def _requeue(self, slot: int) -> None:
        losses = self.losses[slot] = self.losses.get(slot, 0) + 1
        if losses >= MAX_TRIES:
            record = lost_record(self.plan[slot], losses)
            self._record(slot, record)
            details: dict[str, Any] = {"o": "", "c": [], "k": [], "d": {}, "e": record.error}
            self._post(self._deliver, [(slot, record, details)])
            return
        self.report.infra_retries += 1
        if losses >= ISOLATE_AFTER:
            self.isolated.append(slot)
        else:
            self.pending.appendleft(slot)

    # Stopping ---------------------------------------------------------------------------

    def _stop_all(self) -> None:
        """Cancel what runs; collect what finished meanwhile (bounded)."""
        for worker in self.workers:
            if worker.ready and not worker.dead:
                self._call(worker, "stop")
        deadline = time.monotonic() + STOP_WAIT_S
        while time.monotonic() < deadline:
            waiting = [r for r, (_, m) in self.calls.items() if m in ("pull", "stop")]
            if not waiting:
                return
            ready, _ = self.ray.wait(waiting, num_returns=1, timeout=POLL_S)
            for ref in ready:
                self._handle(ref)

    # Talking to the event loop ----------------------------------------------------------

    def _post(self, fn: Callable[[list[Any]], None], items: list[Any]) -> None:
        anyio.from_thread.run_sync(fn, items)

    def _begin(self, slots: list[int]) -> None:
        for slot in slots:
            self.books.begin(slot)

    def _deliver(self, batch: list[Finished]) -> None:
        for slot, record, details in batch:
            self.books.deliver(slot, record, details)

    # Files ------------------------------------------------------------------------------

    def remove_dead_attempts(
        self, runs_dir: Path | None, cancelled: bool, keep: Collection[str] = ()
    ) -> None:
        """Delete run directories that no recorded rollout owns (attempts whose worker died).

        After a cancellation, directories whose rollout was cancelled stay: the eval indexes
        them as ``cancelled``, as it does for the local executor. ``keep`` names directories
        a resumed eval kept from before: never removed.
        """
        if runs_dir is None or not self.losses or not runs_dir.is_dir():
            return
        for run_dir in runs_dir.iterdir():
            if not run_dir.is_dir() or run_dir.name in self.recorded or run_dir.name in keep:
                continue
            if cancelled and _was_cancelled(run_dir):
                continue
            shutil.rmtree(run_dir, ignore_errors=True)


def _was_cancelled(run_dir: Path) -> bool:
    try:
        result = RunDir(run_dir).read_result()
    except (OSError, SiloError):
        return False
    return result.get("terminationReason") == "cancelled"


def lost_record(entry: PlanEntry, losses: int) -> RolloutRecord:
    """The record of a rollout whose worker died every time it ran (an environment fault)."""
    task_id, label, run_no, baseline = entry
    return RolloutRecord(
        task_id=task_id,
        agent=label,
        run=run_no,
        run_id="",
        run_dir=None,
        passed=False,
        reward=0.0,
        termination_reason="worker_lost",
        tool_calls=0,
        tool_errors=0,
        tool_faults=0,
        verifier_error=False,
        error=(
            f"The Ray worker running this rollout died {losses} times (killed, out of memory, "
            "or a crash of the process); recorded as an environment fault, not run again."
        ),
        failed_required=[],
        checks_passed=0,
        checks_total=0,
        duration_ms=0.0,
        worker_lost=True,
        reward_valid=False,
        invalid_reason="worker_lost",
        baseline=baseline,
    )
