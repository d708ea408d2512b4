"""Executors: where an eval's rollouts run.

:func:`~silo_async.evaluate` builds the plan and keeps the books (records, progress, files); an
executor only runs plan entries and hands back each finished rollout's record (and, for the
report, its compact details). The local executor runs them in this event loop; the Ray executor
(:mod:`silo_async.eval.ray`) on a pool of Ray actors. Both run a rollout through
:func:`run_plan_entry`, so a rollout's files are the same wherever it ran.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import anyio.to_thread
import attrs

from .._environment import Environment
from .._many import run_pool
from .._options import RunOptions
from .._runner import Agent, run_agent
from .._setup import RolloutSetup
from .._task import Task
from .._verify import Verifier
from ..agents._replay import continuing
from ._report._details import compact_details
from ._report._prices import Prices
from ._report._records import RolloutRecord

__all__ = [
    "Books",
    "Details",
    "Executor",
    "ExecutorReport",
    "LocalExecutor",
    "PlanEntry",
    "PreparedRun",
    "RolloutJob",
    "run_plan_entry",
]

#: One rollout of the plan: ``(task_id, agent label, run number, baseline)``; a baseline
#: rollout (``eval --baseline``) runs without the eval's faults.
PlanEntry = tuple[str, str, int, bool]

#: A rollout's compact details for the report (None when the eval keeps none).
Details = dict[str, Any] | None


class Books(Protocol):
    """The eval's bookkeeping, as an executor sees it; called on the eval's event loop only."""

    def begin(self, slot: int) -> None:
        """Slot ``slot`` was handed to a worker (slots are begun in plan order, retries aside)."""
        ...

    def deliver(self, slot: int, record: RolloutRecord, details: Details) -> None:
        """Slot ``slot`` finished: its record and (when kept) details; once per slot."""
        ...


@attrs.frozen
class RolloutJob:
    """Everything an executor needs to run the plan.

    Attributes:
        env: the environment.
        agents: ``{label: agent}``.
        plan: the rollouts, by slot.
        concurrency: the most rollouts in flight at once, over the whole eval.
        options: how every rollout runs (limits, faults, user...), as for
            :func:`silo_async.run`; a baseline rollout runs without its faults.
        runs_dir: where rollouts write their run directories (None: nowhere).
        base: the eval directory; records name run directories relative to it.
        details: keep compact per-rollout details for the report.
        prices: the eval's price table, so records carry their cost (None: no cost).
        replays: for a resumed eval, the recording (an interrupted attempt's run directory,
            absolute) that the rerun of a model agent's rollout continues, by plan entry.
        keep: run ids of the directories under ``runs_dir`` that the eval kept from before
            it resumed (an executor never removes them).
    """

    env: Environment
    agents: Mapping[str, Agent]
    plan: list[PlanEntry]
    concurrency: int
    options: RunOptions
    runs_dir: Path | None
    base: Path | None
    details: bool
    prices: Prices | None = None
    replays: Mapping[PlanEntry, str] = attrs.field(factory=dict)
    keep: frozenset[str] = frozenset()
    # Each task and its verifier, looked up once (on its first rollout), not once per rollout.
    _tasks: dict[str, tuple[Task, Verifier]] = attrs.field(
        init=False, factory=dict, repr=False, eq=False
    )

    def setup(self, entry: PlanEntry) -> RolloutSetup:
        """The setup of the rollout ``entry`` names, starting now."""
        task_id, label, run_no, baseline = entry
        found = self._tasks.get(task_id)
        if found is None:
            task = self.env.task(task_id)
            found = self._tasks[task_id] = (task, self.env.verifier_for(task))
        task, verifier = found
        # A baseline rollout (eval --baseline) runs the same plan without the eval's faults.
        options = attrs.evolve(self.options, faults=None) if baseline else self.options
        return RolloutSetup.new(
            self.env,
            task,
            verifier,
            options,
            agent_name=label,
            runs_dir=self.runs_dir,
            run_index=run_no,
        )


@attrs.define
class ExecutorReport:
    """What an executor tells the summary about itself (filled in as it runs).

    Attributes:
        config: entries for ``summary.json``'s ``config`` (``executor`` and its settings).
        start_ms: time spent starting the executor before the first rollout could run.
        infra_retries: rollouts run again because the worker running them died.
    """

    config: dict[str, Any] = attrs.field(factory=lambda: {"executor": "local"})
    start_ms: float = 0.0
    infra_retries: int = 0


class PreparedRun(Protocol):
    """A job an executor accepted; running it delivers every rollout that finishes."""

    async def run(self, books: Books, report: ExecutorReport) -> None:
        """Run the plan, telling ``books`` (on the event loop) as rollouts begin and finish.

        On cancellation, rollouts in flight are cancelled (each writes its own artifacts),
        those that finished meanwhile are still delivered, and the cancellation propagates.
        """
        ...


class Executor(Protocol):
    """Runs the rollouts of an eval (see :class:`LocalExecutor`, ``silo.RayExecutor``)."""

    def prepare(self, job: RolloutJob) -> PreparedRun:
        """Check that ``job`` can run here, before anything is written.

        Raises:
            SiloError: ``executor_invalid`` (something cannot be used or shipped) or
                ``executor_unavailable`` (the executor's engine is missing or unreachable).
        """
        ...


async def run_plan_entry(job: RolloutJob, entry: PlanEntry) -> tuple[RolloutRecord, Details]:
    """Run one plan entry on the rollout core; its record and (if kept) details.

    The rerun of an interrupted model agent's rollout continues its recording (``replays``),
    which is removed once the rerun has written its own run directory.
    """
    task_id, label, run_no, baseline = entry
    agent = job.agents[label]
    recording = job.replays.get(entry)
    if recording is not None:
        agent = await continuing(agent, recording, job.env, task_id)
    result = await run_agent(job.setup(entry), agent)
    if recording is not None:
        await anyio.to_thread.run_sync(shutil.rmtree, recording, True)
    record = RolloutRecord.from_result(
        result, label, run_no, job.base, job.prices, baseline=baseline
    )
    return record, compact_details(result) if job.details else None


@attrs.frozen
class _LocalRun:
    job: RolloutJob

    async def run(self, books: Books, report: ExecutorReport) -> None:
        job = self.job

        async def one(slot: int) -> None:
            books.begin(slot)
            record, details = await run_plan_entry(job, job.plan[slot])
            books.deliver(slot, record, details)

        await run_pool(len(job.plan), job.concurrency, one)


class LocalExecutor:
    """Every rollout in the caller's event loop, under the eval's concurrency limit (default)."""

    def prepare(self, job: RolloutJob) -> PreparedRun:
        """Accept any job: nothing leaves this process."""
        return _LocalRun(job)
