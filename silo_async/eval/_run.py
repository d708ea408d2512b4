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
from .._options import DEFAULT_OPTIONS, RunOptions
from .._runner import Agent
from .._trace import utc_now_iso
from .._user import UserFactory
from ..agents._replay import can_replay
from ..runs import EvalDir
from ._books import EvalBooks, EvalProgress
from ._digests import digests
from ._evalfile import EvalPlan
from ._executor import Executor, ExecutorReport, LocalExecutor, PlanEntry, RolloutJob
from ._interrupted import recover_interrupted
from ._report._compare import compare, equal_work
from ._report._prices import Prices
from ._report._records import RolloutRecord
from ._report._robustness import robustness
from ._report._stats import default_ks
from ._report._summary import EvalSummary, Resumed
from ._resume import ResumeState, remove_parked, survey, tidy
from ._store import write_eval_dir

__all__ = ["WRITE_GRACE_S", "EvalRun"]

#: How long writing the summary may take once the eval is cancelled.
WRITE_GRACE_S = 60.0


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
        options: RunOptions = DEFAULT_OPTIONS,
    ) -> None:
        self.env, self.agents, self.plan, self.eval_dir = env, dict(agents), plan, eval_dir
        self.concurrency, self.report, self.executor = concurrency, report, executor
        self.resumed = resumed
        # How every rollout runs: the plan's limits and faults (a resumed eval's are its
        # eval.json's), the users' factory, and any other option as given.
        self.options = attrs.evolve(
            options,
            limits=plan.limits,
            faults=plan.fault_plan,
            user=user,
            policy_version=plan.policy_version,
        )
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
        books = EvalBooks(len(self.entries), self.keep_details, todo, index)
        if state is not None:
            for slot, record in state.kept.items():
                books.keep(slot, record, state.details.get(slot))
        job = RolloutJob(
            env=self.env,
            agents=self.agents,
            plan=[self.entries[i] for i in todo],
            concurrency=self.concurrency,
            options=self.options,
            runs_dir=eval_dir / "runs" if eval_dir is not None else None,
            base=eval_dir,
            details=self.keep_details,
            prices=self.prices,
            replays={} if state is None else state.replays,
            keep=frozenset() if state is None else state.kept_ids,
        )
        prepared = (self.executor or LocalExecutor()).prepare(job)  # refuses before any write
        if eval_dir is not None:
            await self._prepare_dir(eval_dir, state)
        self.clock0, self.started = time.perf_counter(), time.time()
        books.clock0, books.on_progress = self.clock0, on_progress
        if on_progress is not None and self.resumed:  # what was kept, before anything runs
            on_progress(books.progress())
        try:
            return await self._run(prepared, books, len(todo))
        finally:
            books.close()

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
        base = self.base
        assert base is not None
        if state is not None:
            await anyio.to_thread.run_sync(tidy, eval_dir, state, self.entries)
        else:
            await anyio.to_thread.run_sync(_make, base, self.plan, self.env)
        await anyio.to_thread.run_sync(base.pin_runs)  # a runs/ made again is not this one

    async def _run(self, prepared: Any, books: EvalBooks, todo: int) -> EvalSummary:
        resumed = Resumed(books.kept, todo) if self.resumed else None
        try:
            await prepared.run(books, self.executor_report)
        except anyio.get_cancelled_exc_class():
            books.close()
            cut = [self.entries[i] for i in books.in_flight()]
            with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_GRACE_S):
                summary = self.summary(books, cancelled=True, resumed=resumed)
                if self._gone(books) is None:  # else nothing is left to write a summary in
                    await _write(summary, books, self.report, cut)
            raise
        except SiloError:
            if not self.resumed and books.started == 0 and self.eval_dir is not None:
                _unmake(self.base)  # refused before any rollout: leave nothing behind
                raise  # (an executor may have removed what it found empty: no loss to name)
            self._check_there(books)
            raise
        except Exception as error:
            self._check_there(books, error)  # a file gone under a rollout: say why, not how
            raise
        self._check_there(books)
        books.close()
        result = self.summary(books, cancelled=False, resumed=resumed)
        # Every rollout finished: a Ctrl-C now must not lose the files (bounded all the same).
        with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_GRACE_S):
            try:
                await _write(result, books, self.report)
            finally:  # removed while the summary was written: its runs are lost all the same
                self._check_there(books)
        return result

    def _gone(self, books: EvalBooks) -> str | None:
        """What of the eval directory was removed while the eval ran (None: nothing)."""
        base = self.base
        if base is None:
            return None
        if books.index is not None and books.index.removed():
            return EvalDir.INDEX if base.intact() else f"{EvalDir.INDEX} (and the runs/ holding it)"
        return None if base.intact() else "the directory (or its eval.json or runs/)"

    def _lost_run(self, error: BaseException | None) -> str | None:
        """The run directory a file missing in ``error`` (or its group) was in, if in this eval."""
        if error is None or self.eval_dir is None:
            return None
        runs = os.path.abspath(os.path.join(self.eval_dir, EvalDir.RUNS))
        for leaf in _leaves(error):
            name = leaf.filename if isinstance(leaf, FileNotFoundError) else None
            if isinstance(name, str) and os.path.abspath(name).startswith(runs + os.sep):
                run = os.path.relpath(os.path.abspath(name), runs).split(os.sep)[0]
                return f"{EvalDir.RUNS}/{run}/ (a run directory, removed while its rollout ran)"
        return None

    def _check_there(self, books: EvalBooks, error: BaseException | None = None) -> None:
        """Refuse to go on in an eval directory that was removed under the eval.

        ``error``, what stopped the rollouts, may name a run directory removed under its
        rollout (the directory around it left as it was).

        Raises:
            SiloError: ``eval_not_found`` naming what was removed; the eval stopped.
        """
        gone = self._gone(books) or self._lost_run(error)
        if gone is None:
            return
        assert self.base is not None
        if os.path.isfile(self.base.file(EvalDir.EVAL)):  # its plan is left: a resume reruns
            fix = (
                f"resume it (silo-async eval --resume {self.eval_dir}, or silo.resume) to run "
                "what was lost"
            )
        else:
            fix = "there is no plan left to resume: run the eval again"
        raise SiloError(
            "eval_not_found",
            f'The eval directory "{self.eval_dir}" lost {gone} while the eval ran, so the eval '
            f"stopped; {fix}, into a directory nothing else removes.",
            {"evalDir": str(self.eval_dir), "removed": gone},
        )

    def summary(self, books: EvalBooks, *, cancelled: bool, resumed: Resumed | None) -> EvalSummary:
        finished, _ = books.finished()
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


def _leaves(error: BaseException) -> list[BaseException]:
    """The exceptions ``error`` holds, groups opened (what many rollouts raised at once)."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


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
    if not base.holds_nothing():  # (another taker's file beside the lock is nothing)
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
    books: EvalBooks,
    report: bool,
    cut: list[PlanEntry] | None = None,
) -> None:
    out = summary.out_dir
    if out is None:
        return
    _, refs = books.finished()

    def write() -> None:
        done = summary
        if cut is not None:  # cancelled: index (or remove) what the cancellation cut short
            known = {r.run_id for r in (*summary.records, *summary.baseline_records)}
            faulted = summary.fault_plan is not None
            interrupted = recover_interrupted(out, cut, known, faulted=faulted)
            done = attrs.evolve(summary, interrupted=interrupted)
        write_eval_dir(done, (books.store.texts, refs) if report else None)
        if done.complete:
            remove_parked(out)  # every rerun finished: no recording is needed any more

    # Rendering 10,000 rollouts takes a moment: do it in a worker thread, off the event loop.
    await anyio.to_thread.run_sync(write, abandon_on_cancel=True)
