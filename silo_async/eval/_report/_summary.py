"""EvalSummary: the outcome of an eval, as an object, as ``summary.json`` and as Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from ..._faults import Faults
from ..._task import Task
from ...runs import EvalDir
from ._compare import Comparison
from ._families import FamilyGroup, family_groups
from ._markdown import render_markdown
from ._records import RolloutRecord
from ._robustness import AgentRobustness
from ._stats import GroupStats
from ._validity import validity_warnings

__all__ = [
    "FORMAT",
    "VERSION",
    "EvalSummary",
    "Resumed",
]

#: ``summary.json``'s ``format`` marker and schema version (docs/eval-summary.md).
FORMAT = "silo_async.eval"
VERSION = 1


@attrs.frozen
class Resumed:
    """What resuming an eval did (``EvalSummary.resumed``; not part of ``summary.json``).

    Attributes:
        kept: rollouts kept from before the eval was interrupted.
        rerun: rollouts this resume ran: torn, cut short or never started.
        finished: the eval had already finished: nothing was run or written.
    """

    kept: int
    rerun: int
    finished: bool = False

    def to_dict(self) -> dict[str, int]:
        """``{"kept", "rerun"}``, as ``eval --resume --json`` prints it."""
        return {"kept": self.kept, "rerun": self.rerun}


@attrs.frozen
class EvalSummary:
    """What an eval produced.

    Attributes:
        eval_id: the eval's id (also its directory name by default).
        environment: the environment's name.
        tasks: the tasks evaluated, in order.
        agents: the agent labels, in the order given.
        config: ``runs``, ``concurrency``, ``maxToolCalls``, ``timeoutMs``, ``executor`` (and
            the Ray executor's ``workers``, ``workerConcurrency``).
        planned: rollouts planned (tasks × agents × runs).
        records: finished rollouts in plan order (task, agent, run).
        comparison: the statistics and the side-by-side table.
        complete: every planned rollout finished.
        cancelled: the eval was cancelled (the summary covers what finished).
        started_at: ISO-8601 UTC start time.
        finished_at: ISO-8601 UTC end time.
        wall_ms: wall time of the whole eval.
        out_dir: the eval directory, or None when nothing was written.
        compared: ``{task_id: runs}``: the tasks the comparison covers and how many runs of
            each agent it uses (see :func:`~silo_async.eval._report._compare.equal_work`);
            every task with ``config["runs"]`` when the eval is complete.
        interrupted: rollouts the cancellation cut short (indexed as ``cancelled``, never in
            the statistics).
        infra_retries: rollouts run again because the worker running them died (0 locally).
        executor_start_ms: time the executor took to start (Ray and its workers; 0 locally).
        resumed: what a resume kept and ran (None for an eval that did not resume). Left out
            of ``summary.json``, which is the same as an uninterrupted eval's.
        fault_plan: the faults the rollouts met (None: none).
        baseline_records: with ``--baseline``, the finished rollouts of the same plan run
            without faults (in plan order; in no statistic but the robustness comparison).
        robustness: with ``--baseline``, each agent with and without faults (None otherwise).
    """

    eval_id: str
    environment: str
    tasks: list[Task]
    agents: list[str]
    config: dict[str, Any]
    planned: int
    records: list[RolloutRecord]
    comparison: Comparison
    complete: bool
    cancelled: bool
    started_at: str
    finished_at: str
    wall_ms: float
    out_dir: Path | None = None
    compared: dict[str, int] = attrs.field(factory=dict)
    interrupted: list[RolloutRecord] = attrs.field(factory=list)
    infra_retries: int = 0
    executor_start_ms: float = 0.0
    resumed: Resumed | None = None
    fault_plan: Faults | None = None
    baseline_records: list[RolloutRecord] = attrs.field(factory=list)
    robustness: list[AgentRobustness] | None = None

    @property
    def finished(self) -> int:
        """Rollouts that finished."""
        return len(self.records)

    def faults_text(self) -> str:
        """What the header says of the faults: ``""``, or the plan (and the baseline's size)."""
        plan = self.fault_plan
        if plan is None:
            return ""
        text = f"Faults {plan.spec} (seed {plan.seed})"
        if self.robustness is not None:
            text += f" · baseline without faults: {len(self.baseline_records)} rollouts"
        return text

    @property
    def partial(self) -> bool:
        """Not every planned rollout finished: the comparison covers equal work only."""
        return not self.complete

    @property
    def compared_rollouts(self) -> int:
        """Rollouts the comparison uses (every agent the same runs of the same tasks)."""
        return sum(self.compared.values()) * len(self.agents)

    def partial_note(self) -> str | None:
        """One plain sentence on what a partial eval compared (None when it is complete)."""
        if self.complete:
            return None
        why = "cancelled" if self.cancelled else "incomplete"
        left = self.finished - self.compared_rollouts
        cut = f"; {_count(len(self.interrupted), 'rollout')} cut short" if self.interrupted else ""
        return (
            f"Partial eval ({why}): {self.finished} of {self.planned} rollouts finished{cut}. "
            f"Comparisons use only the work every agent completed equally: {self._equal_work()} "
            f"({self.compared_rollouts} rollouts); {_count(left, 'finished rollout')} left out."
        )

    def _equal_work(self) -> str:
        """What the comparison covers, in words: "each agent's first 3 runs of 2 tasks"."""
        runs = sorted(set(self.compared.values()))
        tasks = _count(len(self.compared), "task")
        if not runs:
            return "no task (no task has a finished rollout of every agent)"
        if len(runs) == 1:
            first = "run" if runs[0] == 1 else f"{runs[0]} runs"
            return f"each agent's first {first} of {tasks}"
        return f"each agent's first {runs[0]} to {runs[-1]} runs (varying by task) of {tasks}"

    def warnings(self) -> list[str]:
        """Lines on agents whose numbers rest on too little evidence (invalid rollouts)."""
        covered = self.compared if self.partial else [t.id for t in self.tasks]
        return validity_warnings(self.comparison, covered)

    @property
    def ranking(self) -> list[str]:
        """Agents from best to worst (pass rate, then mean reward)."""
        return list(self.comparison.ranking)

    def agent(self, label: str) -> GroupStats:
        """The statistics of one agent over all tasks."""
        return self.comparison.overall[label]

    def below(self, rate: float) -> list[str]:
        """Agents whose pass rate is below ``rate`` (``--fail-under``), in ranking order.

        The rate is over valid rollouts only; an agent without any valid rollout has no rate,
        so it cannot be shown to reach ``rate`` and is listed too.
        """
        overall = self.comparison.overall
        return [a for a in self.ranking if (r := overall[a].pass_rate) is None or r < rate]

    def cell(self, task_id: str, agent: str) -> GroupStats | None:
        """The statistics of one task and agent (None when it has no finished rollout)."""
        for row in self.comparison.rows:
            if row.task_id == task_id:
                return row.cells.get(agent)
        return None

    def to_dict(self) -> dict[str, Any]:
        """The ``summary.json`` document (schema: docs/eval-summary.md)."""
        comparison = self.comparison
        return {
            "format": FORMAT,
            "version": VERSION,
            "evalId": self.eval_id,
            "environment": self.environment,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "wallMs": round(self.wall_ms, 3),
            "executorStartMs": round(self.executor_start_ms, 3),
            "complete": self.complete,
            "cancelled": self.cancelled,
            "partial": self.partial,
            "planned": self.planned,
            "finished": self.finished,
            "interrupted": len(self.interrupted),
            "infraRetries": self.infra_retries,
            "compared": {
                "tasks": list(self.compared),
                "runs": dict(self.compared),
                "rollouts": self.compared_rollouts,
                "leftOut": self.finished - self.compared_rollouts,
            },
            "note": self.partial_note(),
            "warnings": self.warnings(),
            "config": dict(self.config),
            "statistics": {
                "passRateCI": "wilson",
                "rewardCI": "t",
                "level": 0.95,
                "passAtK": "unbiased: 1 - C(n-c,k)/C(n,k); agent level: mean over tasks",
                "passHatK": "unbiased: C(c,k)/C(n,k); agent level: mean over tasks",
            },
            "invalid": sum(1 for r in self.records if not r.reward_valid),
            "ranking": list(comparison.ranking),
            "best": comparison.overall_best,
            "agents": [{"agent": a, **comparison.overall[a].to_dict()} for a in comparison.agents],
            "tasks": [
                {
                    "task": task.to_dict(),
                    "compared": task.id in self.compared,
                    "best": row.best,
                    "agents": {a: s.to_dict() for a, s in row.cells.items()},
                }
                for task, row in zip(self.tasks, comparison.rows, strict=True)
            ],
            "families": [group.to_dict() for group in self.families],
            "baseline": self._baseline_dict(),
            "index": EvalDir.INDEX,
        }

    @property
    def families(self) -> list[FamilyGroup]:
        """The instances evaluated, grouped by family and split (empty without instances)."""
        return family_groups(self.tasks, self.records, self.agents)

    def baseline_plan(self) -> dict[str, Any] | None:
        """``{"spec", "seed"}`` of the fault plan an eval with a baseline ran (else None)."""
        plan = self.fault_plan
        if self.robustness is None or plan is None:
            return None
        return {"spec": plan.spec, "seed": plan.seed}

    def _baseline_dict(self) -> dict[str, Any] | None:
        plan = self.baseline_plan()
        if plan is None or self.robustness is None:
            return None
        return {
            "faults": plan["spec"],
            "faultSeed": plan["seed"],
            "runs": len(self.baseline_records),
            "agents": [a.to_dict() for a in self.robustness],
        }

    def markdown(self) -> str:
        """``summary.md``: the ranking and the side-by-side table (best cell in bold)."""
        return render_markdown(self)

    def indexed(self) -> list[RolloutRecord]:
        """What ``runs/index.jsonl`` lists: finished and interrupted rollouts, in plan order.

        A baseline's rollouts come after the others (its plan follows the eval's).
        """
        if not self.interrupted and not self.baseline_records:
            return list(self.records)
        tasks = {t.id: i for i, t in enumerate(self.tasks)}
        agents = {a: i for i, a in enumerate(self.agents)}
        return sorted(
            [*self.records, *self.interrupted, *self.baseline_records],
            key=lambda r: (
                r.baseline,
                tasks.get(r.task_id, len(tasks)),
                agents.get(r.agent, len(agents)),
                r.run,
            ),
        )

    @property
    def has_tokens(self) -> bool:
        """Some rollout recorded model tokens (the token columns are worth showing)."""
        return any(
            s.total_input_tokens or s.total_output_tokens for s in self.comparison.overall.values()
        )

    @property
    def has_cost(self) -> bool:
        """The eval had a price table (the cost columns are worth showing)."""
        return "prices" in self.config


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
