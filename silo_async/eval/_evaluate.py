"""evaluate(): tasks × agents × runs under one concurrency limit, on an executor.

The plan is fixed up front (task, then agent, then run). By default the local executor runs it in
this event loop: one task group, a fixed pool of ``concurrency`` workers pulling rollouts from the
plan, so the limit is exact and nothing waits as a parked coroutine. ``executor=`` hands the same
plan to another executor (``silo.RayExecutor``); the books (records, progress, files) are kept
here either way.

Every rollout is a plain :func:`silo_async.run` with ``runs_dir=<eval dir>/runs``, so an eval
directory is self-contained: its ``runs/`` holds every rollout's artifacts next to the index that
points at them. Per rollout, the eval keeps a small record and (for the report) compact details;
the event loop pays one small append to ``runs/index.jsonl`` per finished rollout and nothing
else: the progress callback is the caller's to keep cheap, and the summary files are written
once, at the end, off the loop.

An eval survives being killed (DESIGN §15): ``eval.json`` (:mod:`._evalfile`) holds its plan
before the first rollout starts, the index grows as rollouts finish, and ``resume=EVAL_DIR``
continues it (:mod:`._resume`): finished rollouts kept, the others run, the summary written.

With ``faults=`` every rollout meets the fault plan (each draws its own faults from its task and
run number, so the executor and the concurrency change nothing); with ``baseline=True`` the plan
runs a second time without faults, and the summary sets each agent's two pass rates side by side
(:mod:`._robustness`). Both are part of the plan (``eval.json``), so a resume meets the same
faults.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import attrs

from .._environment import Environment
from .._errors import SiloError
from .._faults import Faults, resolve_faults
from .._jsonutil import compact_json
from .._limits import DEFAULT_LIMITS, Limits, resolve_limits
from .._many import check_counts, check_tasks
from .._runner import Agent
from .._trace import utc_now_iso
from .._user import UserFactory
from ..agents._replay import can_replay
from ..runs import EvalDir
from ..runs._appender import LineAppender
from ._evalfile import (
    OPTIONS,
    EvalPlan,
    agent_ref,
    check_given,
    new_plan,
    read_plan,
    rebuilt_user,
    user_ref,
)
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

__all__ = ["EvalProgress", "evaluate", "new_eval_id"]

#: How long writing the summary may take once the eval is cancelled.
WRITE_GRACE_S = 60.0

#: ``evaluate``'s defaults: a resume takes the plan's value for an argument left at its default.
DEFAULT_RUNS = 1
DEFAULT_CONCURRENCY = 64


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


def new_eval_id(now: float | None = None) -> str:
    """A fresh eval id, ``eval_<YYYYMMDDTHHMMSS>_<random hex>`` (sorts by start time)."""
    t = time.time() if now is None else now
    return f"eval_{time.strftime('%Y%m%dT%H%M%S', time.gmtime(t))}_{os.urandom(3).hex()}"


def _check_args(
    env: Environment, task_ids: list[str], agents: Mapping[str, Agent], runs: int, conc: int
) -> None:
    if not agents:
        raise ValueError("evaluate needs at least one agent.")
    for label, agent in agents.items():
        if not isinstance(label, str) or not label:
            raise ValueError(f"agent labels must be non-empty strings, got {label!r}.")
        if not callable(agent):
            raise ValueError(f'agent "{label}" is not callable.')
    check_counts(runs, conc)
    if not task_ids:
        raise ValueError(f'environment "{env.name}" has no tasks to evaluate.')
    if len(set(task_ids)) != len(task_ids):
        raise ValueError("each task may be listed only once (use runs= for repetitions).")
    check_tasks(env, task_ids)


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


async def evaluate(
    env: Environment,
    tasks: Sequence[str] | str | None,
    agents: Mapping[str, Agent],
    *,
    runs: int = DEFAULT_RUNS,
    concurrency: int = DEFAULT_CONCURRENCY,
    max_tool_calls: int = 100,
    timeout: float | None = 120.0,
    token_limit: int | None = None,
    out_dir: str | Path | None = None,
    eval_id: str | None = None,
    on_progress: Callable[[EvalProgress], None] | None = None,
    report: bool = True,
    executor: Executor | None = None,
    prices: Prices | Mapping[str, Mapping[str, float]] | None = None,
    limits: Limits | None = None,
    resume: str | Path | None = None,
    user: UserFactory | None = None,
    faults: Faults | str | None = None,
    baseline: bool = False,
    families: Mapping[str, int] | None = None,
    split: str = "test",
    start: int = 0,
) -> EvalSummary:
    """Evaluate ``agents`` on ``tasks`` of ``env``, ``runs`` times each.

    Every rollout (tasks × agents × runs) is one :func:`silo_async.run` on a fresh world, at
    most ``concurrency`` at once (by default in this event loop: one task group, a fixed pool
    of workers; ``executor=silo.RayExecutor(...)`` runs them on Ray workers). When ``out_dir`` is
    given it becomes the eval directory: ``eval.json`` (the plan) is written first, rollouts
    write ``out_dir/runs/<run_id>/`` and a line of ``runs/index.jsonl`` each as they finish,
    and at the end ``summary.md``, (with ``report``) ``report.html`` and, last,
    ``summary.json`` are written.

    On cancellation (Ctrl-C, a cancelled scope) rollouts in flight write their own artifacts,
    the summary of the rollouts that finished is written (shielded, within ``WRITE_GRACE_S``),
    and the cancellation propagates.

    ``resume=EVAL_DIR`` continues an eval that was killed or cancelled (DESIGN §15): its
    finished rollouts are kept, torn and cut-short ones removed and run again (a model
    agent's continuing from its recorded responses), the missing ones run, and the summary is
    written into ``EVAL_DIR``, which keeps its ``evalId``. The plan comes from its
    ``eval.json``: pass the same ``env`` and ``agents`` (same labels, same order); any other
    argument left at its default takes the plan's value, and one given with another value is
    refused (``resume_conflict``); ``concurrency``, ``executor``, ``report`` and
    ``on_progress`` may differ. Resuming an eval that finished runs and writes nothing
    (``summary.resumed.finished``).

    Args:
        env: the environment.
        tasks: task ids in the order to report them (a single id is accepted too; ``None``:
            every task of ``env``, in its order, unless ``families`` is given: then no
            hand-written task; with ``resume``: the plan's). Instance ids ``FAMILY#SEED``
            are task ids too.
        agents: ``{label: agent}``; labels name the agents in every output.
        runs: rollouts per task and agent (>= 1).
        concurrency: the most rollouts in flight at once (>= 1).
        max_tool_calls: per rollout, as for :func:`silo_async.run`.
        timeout: per rollout, in seconds (``None``: no limit).
        token_limit: per rollout, recorded tokens that stop the agent (``None``: no limit).
        out_dir: the eval directory (created; must not exist or be empty); None writes nothing.
        eval_id: the eval's id (default: a fresh time-sortable id).
        on_progress: called on the event loop after each rollout with an :class:`EvalProgress`
            (and once at the start of a resumed eval, with what it kept); it must be cheap
            (store the snapshot, render elsewhere).
        report: also write ``report.html`` (and keep compact per-rollout details for it).
        executor: where the rollouts run (default: this event loop). Checked before anything
            is written.
        prices: per-million-token prices by model (``{"MODEL": {"input": 0.4, "output":
            1.6}}``, ``"*"`` for any other model): the summary then carries the cost of every
            rollout's model steps.
        limits: per rollout, the three limits as one :class:`~silo_async.Limits` (instead of
            the keywords).
        resume: an eval directory to continue (it is also the output: ``out_dir`` may only
            name the same directory).
        user: for tasks with a user, a function of the task returning a fresh
            :class:`~silo_async.User` for each rollout (default:
            :meth:`~silo_async.ScriptedUser.from_task`; a model user:
            :func:`silo_async.users.model_user`).
        faults: faults to inject into the tool calls (a :class:`~silo_async.Faults`, or a
            SPEC string read with seed 0): the same plan meets the same faults wherever and
            however concurrently it runs.
        baseline: also run the plan without faults (needs ``faults``): the summary then
            compares each agent's pass rates without and with them (``summary.robustness``,
            ``summary.json``'s ``baseline``), and the baseline's rollouts are indexed with
            ``"baseline": true``.
        families: ``{family id: N}``: also play the first N distinct instances of each
            family in ``split`` from seed ``start`` (:meth:`Environment.instances`), after
            ``tasks``; the summary groups them by family and split.
        split: the split ``families`` takes instances from (``train`` or ``test``).
        start: the seed ``families``' scans start from.

    Returns:
        The :class:`EvalSummary` of every rollout (``resumed`` says what a resume kept and ran).

    Raises:
        SiloError: an unknown task or verifier, before any rollout starts; ``executor_invalid``
            or ``executor_unavailable`` when the executor cannot run this eval;
            ``eval_not_found`` (``resume`` is not an eval directory) or ``resume_conflict``
            (an argument differs from the resumed eval's plan); ``faults_invalid`` for a SPEC
            that cannot be read.
        ValueError: invalid arguments (``baseline`` without ``faults``).
        TypeError: ``limits=`` given together with a limit keyword.
        FileExistsError: ``out_dir`` exists and is not empty.
    """
    limits = resolve_limits(limits, max_tool_calls, timeout, token_limit)
    if prices is not None and not isinstance(prices, Prices):
        prices = Prices.from_dict(prices)
    fault_plan = resolve_faults(faults)
    if baseline and fault_plan is None:
        raise ValueError("baseline=True compares runs with and without faults: give faults= too.")
    options = _options(runs, prices, fault_plan, baseline, user_ref(user))
    if resume is None:
        if tasks is None:
            task_ids = [] if families else [t.id for t in env.tasks]
        else:
            task_ids = [tasks] if isinstance(tasks, str) else list(tasks)
        task_ids += family_instances(env, families, split, start, task_ids)
        _check_args(env, task_ids, agents, runs, concurrency)
        eval_dir = Path(out_dir) if out_dir is not None else None
        eval_id = eval_id or new_eval_id()
        plan = new_plan(
            eval_id,
            env,
            task_ids,
            agents,
            limits=limits,
            concurrency=concurrency,
            options=options,
            executor=executor,
        )
    else:
        eval_dir = Path(resume)
        if families:  # given again: they must name the plan's instances
            listed = [] if tasks is None else [tasks] if isinstance(tasks, str) else list(tasks)
            tasks = listed + family_instances(env, families, split, start, listed)
        plan = _resumed_plan(eval_dir, env, tasks, agents, limits, options, out_dir, eval_id)
        if user is None:  # the plan's users play again: a model user is rebuilt from eval.json
            user = rebuilt_user(plan.options["user"])
        if concurrency == DEFAULT_CONCURRENCY:
            concurrency = plan.concurrency
        _check_args(env, plan.tasks, agents, plan.runs, concurrency)
    resumed = resume is not None
    run = _Run(
        env, agents, plan, eval_dir, concurrency, report, executor, resumed=resumed, user=user
    )
    return await run.start(on_progress)


def family_instances(
    env: Environment,
    families: Mapping[str, int] | None,
    split: str,
    start: int,
    listed: Sequence[str] = (),
) -> list[str]:
    """The instance ids ``families`` (``{family id: N}``) stand for, by the scan rule.

    Instances already ``listed`` are not listed twice.

    Raises:
        SiloError: ``task_not_found`` (an unknown family; too few instances).
        ValueError: a count below 1, a start below 0, an unknown split.
    """
    if not families:
        return []
    if not isinstance(families, Mapping):
        raise ValueError(
            f'families must map family ids to counts, e.g. {{"f": 10}}; got {families!r}.'
        )
    found: list[str] = []
    seen = set(listed)
    for family, count in families.items():
        for task in env.instances(family, count, split=split, start=start):
            if task.id not in seen:
                seen.add(task.id)
                found.append(task.id)
    return found


def _options(
    runs: int,
    prices: Prices | None,
    faults: Faults | None,
    baseline: bool,
    user: dict[str, Any] | None,
) -> dict[str, Any]:
    """The plan's one-value settings (:data:`~._evalfile.OPTIONS`) as this call gives them."""
    return {
        "runs": runs,
        "prices": None if prices is None else prices.to_dict(),
        "faults": None if faults is None else faults.to_dict()["faults"],
        "faultSeed": 0 if faults is None else faults.seed,
        "baseline": baseline,
        "user": user,
    }


def _resumed_plan(
    eval_dir: Path,
    env: Environment,
    tasks: Sequence[str] | str | None,
    agents: Mapping[str, Agent],
    limits: Limits,
    options: Mapping[str, Any],
    out_dir: str | Path | None,
    eval_id: str | None,
) -> EvalPlan:
    """The plan of the eval in ``eval_dir``, once the arguments given agree with it."""
    plan = read_plan(eval_dir)
    if out_dir is not None and Path(out_dir).absolute() != eval_dir.absolute():
        raise _conflict(plan, "out_dir=", os.fspath(out_dir), os.fspath(eval_dir))
    if eval_id is not None and eval_id != plan.eval_id:
        raise _conflict(plan, "eval_id=", eval_id, plan.eval_id)
    given: dict[str, Any] = {
        "environment": env.name,
        "agents": [agent_ref(label, agent) for label, agent in agents.items()],
    }
    if tasks is not None:
        given["tasks"] = [tasks] if isinstance(tasks, str) else list(tasks)
    defaults = DEFAULT_LIMITS.config()
    given.update({k: v for k, v in limits.config().items() if v != defaults[k]})
    # An argument left at its default takes the plan's value; one given must be the plan's.
    given.update({k: v for k, v in options.items() if v != OPTIONS[k].default})
    if options["faults"] is not None:  # a fault plan given is given with its seed
        given["faultSeed"] = options["faultSeed"]
    check_given(plan, given, eval_dir, cli=False)
    return plan


def _conflict(plan: EvalPlan, name: str, given: str, planned: str) -> SiloError:
    return SiloError(
        "resume_conflict",
        f"{name} {given} differs from eval {plan.eval_id}, which resumes in {planned}: a "
        f"resumed eval writes into its own directory. Leave {name.rstrip('=')} out.",
        {"setting": name.rstrip("="), "given": given, "planned": planned},
    )


class _Run:
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
        await anyio.to_thread.run_sync(_make, self.base, self.plan)

    async def _run(self, prepared: Any, collector: _Collector, todo: int) -> EvalSummary:
        resumed = Resumed(collector.kept, todo) if self.resumed else None
        try:
            await prepared.run(collector, self.executor_report)
        except anyio.get_cancelled_exc_class():
            collector.close()
            cut = [self.entries[i] for i in collector.in_flight()]
            with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_GRACE_S):
                summary = self.summary(collector, cancelled=True, resumed=resumed)
                await _write(summary, collector, self.report, cut)
            raise
        except SiloError:
            if not self.resumed and collector.started == 0 and self.eval_dir is not None:
                _unmake(self.base)  # refused before any rollout: leave nothing behind
            raise
        collector.close()
        result = self.summary(collector, cancelled=False, resumed=resumed)
        # Every rollout finished: a Ctrl-C now must not lose the files (bounded all the same).
        with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_GRACE_S):
            await _write(result, collector, self.report)
        return result

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


def _make(base: EvalDir, plan: EvalPlan) -> None:
    """Make a new eval's directory, locked: its plan first (without it, nothing ran), then runs/.

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
    base.write_plan(plan.to_dict())
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
