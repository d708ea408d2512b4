"""One run of an eval's plan, a new eval or the rest of one resuming: its books, directory, summary.

:class:`EvalRun` fixes the plan's rollouts (task, then agent, then run; the baseline after),
locks and prepares the eval directory (a new eval's plan written first; a resume's survey and
tidy, :mod:`._resume`), hands the rollouts left to the executor, keeps the books as they
finish (a line of ``runs/index.jsonl`` each), and writes the summary files at the end — also
when it is cancelled (shielded, within :data:`WRITE_GRACE_S`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import attrs

from .._environment import Environment
from .._errors import SiloError
from .._jsonutil import compact_json
from .._runner import Agent
from .._trace import utc_now_iso
from .._user import UserFactory
from ..agents._replay import can_replay
from ..runs import EvalDir
from ..runs._appender import LineAppender
from ._digests import digests
from ._evalfile import EvalPlan
from ._executor import Details, Executor, ExecutorReport, LocalExecutor, PlanEntry, RolloutJob
from ._interrupted import recover_interrupted
from ._report._compare import compare, equal_work
from ._report._data import DetailStore
from ._report._prices import Prices
from ._report._records import RolloutRecord
from ._report._robustness import robustness
from ._report._stats import default_ks
from ._report._summary import EvalSummary, Resumed
from ._resume import ResumeState, remove_parked, survey, tidy
from ._store import write_eval_dir

__all__ = ["WRITE_GRACE_S", "EvalProgress", "EvalRun"]

#: How long writing the summary may take once the eval is cancelled.
WRITE_GRACE_S = 60.0


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


class _Collector:
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


class EvalRun:
    """One run of an eval's plan: a new eval, or the rest of one that resumes."""

    def __init__(
        self,
        env: Environment,
        agents: Mapping[str, Agent],
        plan: EvalPlan,
        eval_dir: Path | None,
        concurrency: int,
        report: bool,
        executor: Executor | None,
        *,
        resumed: bool,
        user: UserFactory | None = None,
    ) -> None:
        self.env, self.agents, self.plan, self.eval_dir = env, dict(agents), plan, eval_dir
        self.concurrency, self.report, self.executor = concurrency, report, executor
        self.resumed, self.user = resumed, user
        self.prices = None if plan.prices is None else Prices.from_dict(plan.prices)
        self.faults = plan.fault_plan
        # The baseline (the same plan without faults) follows the eval's own plan.
        self.entries: list[PlanEntry] = [
            (t, a, n, without)
            for without in ((False, True) if plan.baseline else (False,))
            for t in plan.tasks
            for a in plan.labels
            for n in range(1, plan.runs + 1)
        ]
        self.planned = sum(not entry[3] for entry in self.entries)
        self.base = EvalDir(eval_dir) if eval_dir is not None else None
        self.keep_details = report and eval_dir is not None
        self.executor_report = ExecutorReport()
        self.clock0 = time.perf_counter()
        self.started = time.time()

    async def start(self, on_progress: Callable[[EvalProgress], None] | None) -> EvalSummary:
        """Prepare the directory and the executor, run what is left, write the summary.

        The eval directory is locked from before it is read (a resume) or made (a new eval)
        until the summary is written: one process at a time writes it.
        """
        try:
            return await self._start(on_progress)
        finally:
            if self.base is not None:
                self.base.unlock()

    async def _start(self, on_progress: Callable[[EvalProgress], None] | None) -> EvalSummary:
        state = await self._survey()
        if state is not None and state.finished_summary is not None:
            return self._finished(state)
        todo = list(range(len(self.entries))) if state is None else state.todo
        eval_dir = self.eval_dir
        index = EvalDir(eval_dir).index_appender() if eval_dir else None
        collector = _Collector(len(self.entries), self.keep_details, todo, index)
        if state is not None:
            for slot, record in state.kept.items():
                collector.keep(slot, record, state.details.get(slot))
        job = RolloutJob(
            env=self.env,
            agents=self.agents,
            plan=[self.entries[i] for i in todo],
            concurrency=self.concurrency,
            limits=self.plan.limits,
            runs_dir=eval_dir / "runs" if eval_dir is not None else None,
            base=eval_dir,
            details=self.keep_details,
            prices=self.prices,
            faults=self.faults,
            replays={} if state is None else state.replays,
            keep=frozenset() if state is None else state.kept_ids,
            user=self.user,
        )
        prepared = (self.executor or LocalExecutor()).prepare(job)  # refuses before any write
        if eval_dir is not None:
            await self._prepare_dir(eval_dir, state)
        self.clock0, self.started = time.perf_counter(), time.time()
        collector.clock0, collector.on_progress = self.clock0, on_progress
        if on_progress is not None and self.resumed:  # what was kept, before anything runs
            on_progress(collector.progress())
        try:
            return await self._run(prepared, collector, len(todo))
        finally:
            collector.close()

    async def _survey(self) -> ResumeState | None:
        if not self.resumed or self.base is None:
            return None
        await anyio.to_thread.run_sync(self.base.lock)
        replayable = {label for label, agent in self.agents.items() if can_replay(agent)}
        return await anyio.to_thread.run_sync(
            lambda: survey(
                self.eval_dir,  # type: ignore[arg-type]
                self.plan.eval_id,
                self.entries,
                replayable,
                faulted=self.faults is not None,
                prices=self.prices,
                details=self.keep_details,
            )
        )

    async def _prepare_dir(self, eval_dir: Path, state: ResumeState | None) -> None:
        if state is not None:
            await anyio.to_thread.run_sync(tidy, eval_dir, state, self.entries)
            return
        assert self.base is not None
        await anyio.to_thread.run_sync(_make, self.base, self.plan, self.env)

    async def _run(self, prepared: Any, collector: _Collector, todo: int) -> EvalSummary:
        resumed = Resumed(collector.kept, todo) if self.resumed else None
        try:
            await prepared.run(collector, self.executor_report)
        except anyio.get_cancelled_exc_class():
            collector.close()
            cut = [self.entries[i] for i in collector.in_flight()]
            with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_GRACE_S):
                summary = self.summary(collector, cancelled=True, resumed=resumed)
                if self._gone(collector) is None:  # else nothing is left to write a summary in
                    await _write(summary, collector, self.report, cut)
            raise
        except SiloError:
            self._check_there(collector)
            if not self.resumed and collector.started == 0 and self.eval_dir is not None:
                _unmake(self.base)  # refused before any rollout: leave nothing behind
            raise
        except Exception:
            self._check_there(collector)  # a file gone under a rollout: say why, not how
            raise
        self._check_there(collector)
        collector.close()
        result = self.summary(collector, cancelled=False, resumed=resumed)
        # Every rollout finished: a Ctrl-C now must not lose the files (bounded all the same).
        with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_GRACE_S):
            await _write(result, collector, self.report)
        return result

    def _gone(self, collector: _Collector) -> str | None:
        """What of the eval directory was removed while the eval ran (None: nothing)."""
        base = self.base
        if base is None:
            return None
        if collector.index is not None and collector.index.removed():
            return f"{EvalDir.INDEX} (and the runs/ holding it)"
        return None if base.intact() else "the directory (or its eval.json or runs/)"

    def _check_there(self, collector: _Collector) -> None:
        """Refuse to go on in an eval directory that was removed under the eval.

        Raises:
            SiloError: ``eval_not_found`` naming what was removed; the eval stopped.
        """
        gone = self._gone(collector)
        if gone is None:
            return
        assert self.base is not None
        if os.path.isfile(self.base.file(EvalDir.EVAL)):  # its plan is left: a resume reruns
            fix = f"resume it (silo-async eval --resume {self.eval_dir}) to run what was lost"
        else:
            fix = "there is no plan left to resume: run the eval again"
        raise SiloError(
            "eval_not_found",
            f'The eval directory "{self.eval_dir}" lost {gone} while the eval ran, so the eval '
            f"stopped; {fix}, into a directory nothing else removes.",
            {"evalDir": str(self.eval_dir), "removed": gone},
        )

    def summary(
        self, collector: _Collector, *, cancelled: bool, resumed: Resumed | None
    ) -> EvalSummary:
        finished, _ = collector.finished()
        return self.summary_of(
            finished,
            config={
                "concurrency": self.concurrency,
                **self.executor_report.config,
            },
            cancelled=cancelled,
            # A resumed eval started when its plan was written; its wall time is this run's.
            timing=(
                self.plan.created_at if self.resumed else utc_now_iso(self.started),
                utc_now_iso(),
                time.perf_counter() - self.clock0,
            ),
            resumed=resumed,
        )

    def summary_of(
        self,
        finished: list[RolloutRecord],
        *,
        config: dict[str, Any],
        cancelled: bool,
        timing: tuple[str, str, float],
        resumed: Resumed | None,
        retries: int | None = None,
        start_ms: float | None = None,
    ) -> EvalSummary:
        plan, env = self.plan, self.env
        task_ids, labels = plan.tasks, plan.labels
        records = [r for r in finished if not r.baseline]
        without = [r for r in finished if r.baseline]
        # A partial eval compares only the work every agent did equally (tasks and runs).
        fair, compared = equal_work(records, task_ids, labels)
        kept = {id(r) for r in fair}
        shown = [r for r in records if id(r) in kept or r.task_id not in compared]
        report = self.executor_report
        return EvalSummary(
            eval_id=plan.eval_id,
            environment=env.name,
            tasks=[env.task(t) for t in task_ids],
            agents=labels,
            config={
                "tasks": task_ids,
                "agents": labels,
                "runs": plan.runs,
                "concurrency": config.pop("concurrency"),
                **plan.limits.config(),
                "faults": None if self.faults is None else self.faults.config(),
                "baseline": plan.baseline,
                **({} if plan.prices is None else {"prices": plan.prices}),
                **config,
            },
            planned=self.planned,
            records=records,
            comparison=compare(shown, task_ids, labels, default_ks(plan.runs), compared),
            complete=len(finished) == len(self.entries),
            cancelled=cancelled,
            started_at=timing[0],
            finished_at=timing[1],
            wall_ms=timing[2] * 1000,
            out_dir=self.eval_dir,
            compared=compared,
            infra_retries=report.infra_retries if retries is None else retries,
            executor_start_ms=report.start_ms if start_ms is None else start_ms,
            resumed=resumed,
            fault_plan=self.faults,
            baseline_records=without,
            robustness=(
                robustness(records, without, labels, default_ks(plan.runs))
                if plan.baseline
                else None
            ),
        )

    def _finished(self, state: ResumeState) -> EvalSummary:
        """The summary of an eval that had finished: read back, nothing run or written."""
        data = state.finished_summary or {}
        records = [state.kept[i] for i in range(len(self.entries))]
        config = dict(data.get("config") or {})
        for key in ("tasks", "agents", "runs", "maxToolCalls", "timeoutMs", "tokenLimit"):
            config.pop(key, None)
        for key in ("faults", "baseline"):
            config.pop(key, None)
        config.pop("prices", None)
        config.setdefault("concurrency", self.plan.concurrency)
        return self.summary_of(
            records,
            config=config,
            cancelled=False,
            timing=(
                str(data.get("startedAt", "")),
                str(data.get("finishedAt", "")),
                float(data.get("wallMs", 0.0)) / 1000,
            ),
            resumed=Resumed(len(records), 0, finished=True),
            retries=int(data.get("infraRetries", 0)),
            start_ms=float(data.get("executorStartMs", 0.0)),
        )


def _make(base: EvalDir, plan: EvalPlan, env: Environment) -> None:
    """Make a new eval's directory, locked: its plan first (without it, nothing ran), then runs/.

    The plan is written with the digests of what it runs (:mod:`._digests`), for a resume to
    check against.

    Raises:
        SiloError: ``eval_locked``: another eval writes the directory (the same ``--out``).
        FileExistsError: the directory holds files (an earlier eval's).
    """
    os.makedirs(base, exist_ok=True)
    base.lock()
    with os.scandir(base) as entries:
        taken = any(entry.name != EvalDir.LOCK for entry in entries)
    if taken:
        base.unlock()
        raise FileExistsError(
            f'Eval directory "{os.fspath(base)}" already exists and is not empty.'
        )
    base.write_plan(attrs.evolve(plan, digests=digests(env, plan.tasks)).to_dict())
    os.mkdir(base.runs)


def _unmake(base: EvalDir | None) -> None:
    """Remove what a new eval made before its executor refused it (nothing ran)."""
    if base is None:
        return
    for name in (EvalDir.INDEX, EvalDir.EVAL):
        with contextlib.suppress(OSError):
            os.unlink(base.file(name))
    base.unlock()
    for directory in (base.runs, os.fspath(base)):
        with contextlib.suppress(OSError):
            os.rmdir(directory)


async def _write(
    summary: EvalSummary,
    collector: _Collector,
    report: bool,
    cut: list[PlanEntry] | None = None,
) -> None:
    out = summary.out_dir
    if out is None:
        return
    _, refs = collector.finished()

    def write() -> None:
        done = summary
        if cut is not None:  # cancelled: index (or remove) what the cancellation cut short
            known = {r.run_id for r in (*summary.records, *summary.baseline_records)}
            faulted = summary.fault_plan is not None
            interrupted = recover_interrupted(out, cut, known, faulted=faulted)
            done = attrs.evolve(summary, interrupted=interrupted)
        write_eval_dir(done, (collector.store.texts, refs) if report else None)
        if done.complete:
            remove_parked(out)  # every rerun finished: no recording is needed any more

    # Rendering 10,000 rollouts takes a moment: do it in a worker thread, off the event loop.
    await anyio.to_thread.run_sync(write, abandon_on_cancel=True)
