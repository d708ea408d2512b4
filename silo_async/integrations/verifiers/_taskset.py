"""The taskset: one verifiers task per silo task, whose state is an episode and reward its grade."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf

from ._episodes import close, open_session, served

__all__ = [
    "SiloState",
    "SiloTask",
    "SiloTaskConfig",
    "SiloTaskData",
    "SiloTaskset",
    "SiloTasksetConfig",
]


class SiloTaskConfig(vf.TaskConfig):
    """Where the world is and the limits of each episode (``--env.taskset.task.*``)."""

    project: str = "."
    env: str = ""
    max_tool_calls: int = 100
    timeout: float | None = 120.0


class SiloTasksetConfig(vf.TasksetConfig):
    """The taskset's config (``--env.taskset.*``): the project, environment and task ids."""

    project: str = "."
    env: str = ""
    tasks: list[str] | None = None
    max_tool_calls: int = 100
    timeout: float | None = 120.0


class SiloState(vf.State):
    """A rollout's state: the key of its episode (held in this process)."""

    episode: str = ""


class SiloTaskData(vf.TaskData):
    """A silo task as verifiers' task data: its id, title and instruction (the prompt)."""

    task: str


class SiloTask(vf.Task[SiloTaskData, SiloState, SiloTaskConfig]):
    """One silo task: ``setup`` opens an episode on a fresh world, the reward grades it."""

    async def setup(self, trace: Any, runtime: Any) -> None:
        """Open this rollout's episode; its key goes into the rollout's state."""
        config = self.config
        trace.state.episode = await open_session(
            config.project,
            config.env,
            self.data.task,
            {"max_tool_calls": config.max_tool_calls, "timeout": config.timeout},
        )

    @vf.reward(weight=1.0)
    async def silo(self, trace: Any) -> float:
        """The world's reward: the episode finished with the agent's answer and graded."""
        result = await close(trace.state.episode, trace.last_reply or None)
        trace.record_metric("passed", 1.0 if result.passed else 0.0)
        trace.record_metric("tool_calls", float(result.tool_calls))
        trace.info["silo"] = {
            "runId": result.run_id,
            "passed": result.passed,
            "terminationReason": result.termination_reason,
            "checks": [c.to_dict() for c in result.checks],
        }
        return float(result.reward)


class SiloTaskset(vf.Taskset[SiloTask, SiloTasksetConfig]):
    """The tasks of a silo environment (all, or ``tasks``), in the environment's order."""

    def load(self) -> Iterator[SiloTask]:
        """One :class:`SiloTask` per served task."""
        config = self.config
        world = served(config.project, config.env)
        task_config = SiloTaskConfig(
            project=config.project,
            env=config.env,
            max_tool_calls=config.max_tool_calls,
            timeout=config.timeout,
        )
        ids = world.tasks if config.tasks is None else tuple(config.tasks)
        for task_id in ids:
            spec = world.env.task(task_id)
            # With a user: the instruction and its opening, as ctx.task.
            data = SiloTaskData(id=task_id, name=spec.title, prompt=spec.prompt, task=task_id)
            yield SiloTask(data, task_config)
