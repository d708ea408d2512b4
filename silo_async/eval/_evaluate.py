"""evaluate(): tasks × agents × runs under one concurrency limit, on an executor.

The plan is fixed up front (task, then agent, then run). By default the local executor runs it in
this event loop: one task group, a fixed pool of ``concurrency`` workers pulling rollouts from the
plan, so the limit is exact and nothing waits as a parked coroutine. ``executor=`` hands the same
plan to another executor (``silo.RayExecutor``); the books (records, progress, files) are kept
here either way.

Every rollout is a plain :func:`silo_async.run` with ``runs_dir=<eval dir>/runs``, so an eval
directory is self-contained: its ``runs/`` holds every rollout's artifacts next to the index that
points at them. Per rollout, the eval keeps a small record and (for the report) compact details;
the event loop pays nothing else: the progress callback is the caller's to keep cheap, and every
file of the eval is written once, at the end, off the loop.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import anyio
import anyio.to_thread
import attrs

from .._environment import Environment
from .._limits import Limits, resolve_limits
from .._many import check_counts, check_tasks
from .._runner import Agent
from .._trace import utc_now_iso
from ._compare import compare, equal_work
from ._executor import Details, Executor, ExecutorReport, LocalExecutor, RolloutJob
from ._interrupted import recover_interrupted
from ._prices import Prices
from ._records import RolloutRecord
from ._report_data import DetailStore
from ._stats import default_ks
from ._store import write_eval_dir
from ._summary import EvalSummary

__all__ = ["EvalProgress", "evaluate", "new_eval_id"]

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
        elapsed_s: seconds since the eval started.
        ended_early: finished rollouts that did not complete (agent error, timeout, a limit).
    """

    total: int
    done: int
    passes: int
    faults: int
    elapsed_s: float
    ended_early: int = 0

    @property
    def rate(self) -> float:
        """Rollouts finished per second so far."""
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0


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

    It is the executor's :class:`~silo_async.eval._executor.Books`: told when a slot starts and
    when it finishes (on the event loop).
    """

    def __init__(self, total: int, base: Path | None, details: bool) -> None:
        self.total = total
        self.base = base
        self.keep_details = details
        self.records: list[RolloutRecord | None] = [None] * total
        self.details: list[int] = [-1] * total  # ids in ``store``
        self.store = DetailStore()
        self.done = self.passes = self.faults = self.early = 0
        self.started = 0  # workers take slots in plan order: every slot below this has started
        self.clock0 = time.perf_counter()
        self.on_progress: Callable[[EvalProgress], None] | None = None

    def begin(self, slot: int) -> None:
        self.started = max(self.started, slot + 1)

    def deliver(self, slot: int, record: RolloutRecord, details: Details) -> None:
        progress = self.add(slot, record, details)
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
        elapsed = time.perf_counter() - self.clock0
        return EvalProgress(self.total, self.done, self.passes, self.faults, elapsed, self.early)

    def finished(self) -> tuple[list[RolloutRecord], list[int]]:
        """The finished rollouts in plan order, and each one's details id in ``store``."""
        pairs = [(r, d) for r, d in zip(self.records, self.details, strict=True) if r is not None]
        return [r for r, _ in pairs], [d for _, d in pairs]

    def in_flight(self) -> list[int]:
        """Slots that started and did not finish (a cancellation cut them short)."""
        return [i for i in range(self.started) if self.records[i] is None]


async def evaluate(
    env: Environment,
    tasks: Sequence[str] | str | None,
    agents: Mapping[str, Agent],
    *,
    runs: int = 1,
    concurrency: int = 64,
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
) -> EvalSummary:
    """Evaluate ``agents`` on ``tasks`` of ``env``, ``runs`` times each.

    Every rollout (tasks × agents × runs) is one :func:`silo_async.run` on a fresh world, at
    most ``concurrency`` at once (by default in this event loop: one task group, a fixed pool
    of workers; ``executor=silo.RayExecutor(...)`` runs them on Ray workers). When ``out_dir`` is
    given it becomes the eval directory: rollouts write ``out_dir/runs/<run_id>/``, and at the
    end ``summary.json``, ``summary.md``, ``runs/index.jsonl`` and (with ``report``)
    ``report.html`` are written.

    On cancellation (Ctrl-C, a cancelled scope) rollouts in flight write their own artifacts,
    the summary of the rollouts that finished is written (shielded, within ``WRITE_GRACE_S``),
    and the cancellation propagates.

    Args:
        env: the environment.
        tasks: task ids in the order to report them (a single id is accepted too; ``None``:
            every task of ``env``, in its order).
        agents: ``{label: agent}``; labels name the agents in every output.
        runs: rollouts per task and agent (>= 1).
        concurrency: the most rollouts in flight at once (>= 1).
        max_tool_calls: per rollout, as for :func:`silo_async.run`.
        timeout: per rollout, in seconds (``None``: no limit).
        token_limit: per rollout, recorded tokens that stop the agent (``None``: no limit).
        out_dir: the eval directory (created; must not exist or be empty); None writes nothing.
        eval_id: the eval's id (default: a fresh time-sortable id).
        on_progress: called on the event loop after each rollout with an :class:`EvalProgress`;
            it must be cheap (store the snapshot, render elsewhere).
        report: also write ``report.html`` (and keep compact per-rollout details for it).
        executor: where the rollouts run (default: this event loop). Checked before anything
            is written.
        prices: per-million-token prices by model (``{"MODEL": {"input": 0.4, "output":
            1.6}}``, ``"*"`` for any other model): the summary then carries the cost of every
            rollout's model steps.
        limits: per rollout, the three limits as one :class:`~silo_async.Limits` (instead of
            the keywords).

    Returns:
        The :class:`EvalSummary` of every rollout.

    Raises:
        SiloError: an unknown task or verifier, before any rollout starts; ``executor_invalid``
            or ``executor_unavailable`` when the executor cannot run this eval.
        ValueError: invalid arguments.
        TypeError: ``limits=`` given together with a limit keyword.
        FileExistsError: ``out_dir`` exists and is not empty.
    """
    if tasks is None:
        task_ids = [t.id for t in env.tasks]
    else:
        task_ids = [tasks] if isinstance(tasks, str) else list(tasks)
    _check_args(env, task_ids, agents, runs, concurrency)
    resolved = resolve_limits(limits, max_tool_calls, timeout, token_limit)
    if prices is not None and not isinstance(prices, Prices):
        prices = Prices.from_dict(prices)
    eval_dir = Path(out_dir) if out_dir is not None else None
    labels = list(agents)
    plan = [(t, a, n) for t in task_ids for a in labels for n in range(1, runs + 1)]
    collector = _Collector(len(plan), eval_dir, report and eval_dir is not None)
    job = RolloutJob(
        env=env,
        agents=dict(agents),
        plan=plan,
        concurrency=concurrency,
        limits=resolved,
        runs_dir=eval_dir / "runs" if eval_dir is not None else None,
        base=eval_dir,
        details=collector.keep_details,
        prices=prices,
    )
    prepared = (executor or LocalExecutor()).prepare(job)  # refuses before any file is written
    if eval_dir is not None:
        _prepare_dir(eval_dir)
    executor_report = ExecutorReport()
    started, clock0 = time.time(), time.perf_counter()
    eval_id = eval_id or new_eval_id(started)
    collector.on_progress = on_progress

    def summary(cancelled: bool) -> EvalSummary:
        records, _ = collector.finished()
        # A partial eval compares only the work every agent did equally (tasks and runs).
        fair, compared = equal_work(records, task_ids, labels)
        kept = {id(r) for r in fair}
        shown = [r for r in records if id(r) in kept or r.task_id not in compared]
        return EvalSummary(
            eval_id=eval_id,
            environment=env.name,
            tasks=[env.task(t) for t in task_ids],
            agents=labels,
            config={
                "tasks": task_ids,
                "agents": labels,
                "runs": runs,
                "concurrency": concurrency,
                **resolved.config(),
                **({} if prices is None else {"prices": prices.to_dict()}),
                **executor_report.config,
            },
            planned=len(plan),
            records=records,
            comparison=compare(shown, task_ids, labels, default_ks(runs), compared),
            complete=len(records) == len(plan),
            cancelled=cancelled,
            started_at=utc_now_iso(started),
            finished_at=utc_now_iso(),
            wall_ms=(time.perf_counter() - clock0) * 1000,
            out_dir=eval_dir,
            compared=compared,
            infra_retries=executor_report.infra_retries,
            executor_start_ms=executor_report.start_ms,
        )

    try:
        await prepared.run(collector, executor_report)
    except anyio.get_cancelled_exc_class():
        cut = [plan[i] for i in collector.in_flight()]
        with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_GRACE_S):
            await _write(summary(cancelled=True), collector, report, cut)
        raise
    result = summary(cancelled=False)
    # Every rollout finished: a Ctrl-C now must not lose the files (bounded all the same).
    with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_GRACE_S):
        await _write(result, collector, report)
    return result


def _prepare_dir(eval_dir: Path) -> None:
    if eval_dir.exists() and (not eval_dir.is_dir() or any(eval_dir.iterdir())):
        raise FileExistsError(f'Eval directory "{eval_dir}" already exists and is not empty.')
    (eval_dir / "runs").mkdir(parents=True, exist_ok=True)


async def _write(
    summary: EvalSummary,
    collector: _Collector,
    report: bool,
    cut: list[tuple[str, str, int]] | None = None,
) -> None:
    out = summary.out_dir
    if out is None:
        return
    _, refs = collector.finished()

    def write() -> None:
        done = summary
        if cut is not None:  # cancelled: index (or remove) what the cancellation cut short
            known = {r.run_id for r in summary.records}
            done = attrs.evolve(summary, interrupted=recover_interrupted(out, cut, known))
        write_eval_dir(done, (collector.store.texts, refs) if report else None)

    # Rendering 10,000 rollouts takes a moment: do it in a worker thread, off the event loop.
    await anyio.to_thread.run_sync(write, abandon_on_cancel=True)
