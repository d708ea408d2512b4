"""RolloutSetup: what one rollout is, fixed before it starts.

Everything a rollout is given — environment, task, verifier, limits, its label, its run number —
and its identity — run id, run directory, start time — in one frozen value: the rollout core
reads it and never changes it. Issue 25 adds the task's user (a fresh simulator per rollout).
"""

from __future__ import annotations

import time
from pathlib import Path

import attrs

from ._environment import Environment
from ._limits import Limits
from ._runid import new_run_id
from ._task import Task
from ._verify import Verifier

__all__ = ["RolloutSetup"]


@attrs.frozen
class RolloutSetup:
    """What one rollout is, fixed before it starts.

    Attributes:
        env: the environment.
        task: the task.
        verifier: the task's verifier.
        limits: the rollout's limits.
        agent_name: the label recorded in the trace and ``run.json``.
        run_index: the rollout's run number for its task, 1-based.
        run_id: the rollout's id (also its run directory's name).
        run_dir: where its artifacts go, or ``None``.
        started: when it was set up (``time.time()``).
        started_perf: the same moment on ``time.perf_counter()``, for durations.
    """

    env: Environment
    task: Task
    verifier: Verifier
    limits: Limits
    agent_name: str
    run_index: int
    run_id: str
    run_dir: Path | None
    started: float
    started_perf: float

    @classmethod
    def new(
        cls,
        env: Environment,
        task: Task,
        verifier: Verifier,
        limits: Limits,
        *,
        agent_name: str,
        runs_dir: Path | None = None,
        run_index: int = 1,
    ) -> RolloutSetup:
        """A rollout of ``task`` starting now, with a fresh run id."""
        started, started_perf = time.time(), time.perf_counter()
        run_id = new_run_id(started)
        run_dir = runs_dir / run_id if runs_dir is not None else None
        identity = (run_index, run_id, run_dir, started, started_perf)
        return cls(env, task, verifier, limits, agent_name, *identity)
