"""RolloutSetup: what one rollout is, fixed before it starts.

Everything a rollout is given — environment, task, verifier, how it runs (its
:class:`~silo_async.RunOptions`: limits, fault plan, user...), its label, its run number — and
its identity — run id, run directory, start time — in one frozen value: the rollout core reads
it and never changes it. A conversational task's setup also holds its user: a fresh simulator
made for this rollout alone (its state, a ``once`` rule spent, is the rollout's own).

The options travel here wherever a rollout is set up: ``run``, ``run_many``, an eval's job (and
so its Ray workers), an episode (and so ``serve``). A fault plan is shared by every rollout of
its plan: each draws its own faults from its task id and run index
(:meth:`~silo_async._faults.Faults.schedule`).
"""

from __future__ import annotations

import time
from pathlib import Path

import attrs

from ._environment import Environment
from ._faults import Faults
from ._limits import Limits
from ._options import RunOptions
from ._runid import new_run_id
from ._task import Task
from ._user import ScriptedUser, User, UserFactory
from ._verify import Verifier

__all__ = ["RolloutSetup"]


@attrs.frozen
class RolloutSetup:
    """What one rollout is, fixed before it starts.

    Attributes:
        env: the environment.
        task: the task.
        verifier: the task's verifier.
        options: how the rollout runs (its limits, faults, user factory...).
        agent_name: the label recorded in the trace and ``run.json``.
        run_index: the rollout's run number for its task, 1-based.
        run_id: the rollout's id (also its run directory's name).
        run_dir: where its artifacts go, or ``None``.
        started: when it was set up (``time.time()``).
        started_perf: the same moment on ``time.perf_counter()``, for durations.
        user: the task's user for this rollout (``None`` when the task has none).
    """

    env: Environment
    task: Task
    verifier: Verifier
    options: RunOptions
    agent_name: str
    run_index: int
    run_id: str
    run_dir: Path | None
    started: float
    started_perf: float
    user: User | None = None

    @property
    def limits(self) -> Limits:
        """The rollout's limits (``options.limits``)."""
        return self.options.limits

    @property
    def faults(self) -> Faults | None:
        """The fault plan (``options.faults``), or ``None``: no fault is injected."""
        return self.options.faults

    @classmethod
    def new(
        cls,
        env: Environment,
        task: Task,
        verifier: Verifier,
        options: RunOptions,
        *,
        agent_name: str,
        runs_dir: Path | None = None,
        run_index: int = 1,
    ) -> RolloutSetup:
        """A rollout of ``task`` starting now, with a fresh run id (and a fresh user).

        Raises:
            TypeError: ``user(task)`` returned something that is not a :class:`User`.
        """
        simulator = None if task.user_script is None else make_user(options.user, task)
        started, started_perf = time.time(), time.perf_counter()
        run_id = new_run_id(started)
        run_dir = runs_dir / run_id if runs_dir is not None else None
        identity = (run_index, run_id, run_dir, started, started_perf)
        return cls(env, task, verifier, options, agent_name, *identity, simulator)


def make_user(factory: UserFactory | None, task: Task) -> User:
    """The fresh user of one rollout of ``task``: ``factory(task)``, else its scripted user.

    Raises:
        TypeError: the factory's result has no ``async def reply(turn)``.
    """
    if factory is None:
        return ScriptedUser.from_task(task)
    made = factory(task)
    if not isinstance(made, User):
        raise TypeError(
            "user= must be a function of the task returning a fresh silo.User (an object with "
            f"async def reply(self, turn)); it returned {type(made).__name__}."
        )
    return made
