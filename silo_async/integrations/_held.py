"""An episode held open on the process's background loop, driven from any thread.

Harnesses whose rollouts are not one ``async with`` block in one task (TRL's synchronous
methods, verifiers' setup / harness / scoring hooks) open an episode here: an owner task on
:mod:`silo_async.integrations._portal`'s loop holds the episode's block until it is finished,
and every call crosses into that loop (blocking the calling thread).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import anyio

from .._environment import Environment
from .._episode import Episode, episode
from .._result import RunResult
from .._tools import ToolResult
from ._portal import call, portal

__all__ = ["HeldEpisode"]


class HeldEpisode:
    """One open episode and the owner task that holds its ``async with`` block.

    Args:
        env: the environment.
        task_id: the task to play.
        options: keywords of :func:`silo_async.episode` (limits, ``runs_dir``, ``agent_name``).
    """

    __slots__ = ("episode", "owner")

    def __init__(self, env: Environment, task_id: str, options: dict[str, Any]) -> None:
        async def hold(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            async with episode(env, task_id, **options) as ep:
                task_status.started(ep)
                await ep.wait_finished()

        self.owner: Future[None]
        self.episode: Episode
        self.owner, self.episode = portal().start_task(hold)

    def call_tool(self, name: str, tool_input: dict[str, Any]) -> ToolResult:
        """Call a tool of the episode (blocks until it returns)."""
        result: ToolResult = call(self.episode.call_tool, name, tool_input)
        return result

    def record_model_step(self, **fields: Any) -> None:
        """Record a model response (see :meth:`silo_async.Episode.record_model_step`)."""
        portal().call(lambda: self.episode.record_model_step(**fields))

    def close(self, answer: Any) -> RunResult:
        """Finish the episode with ``answer`` (idempotent) and wait until its block has left."""
        result: RunResult = call(self.episode.finish, answer)
        self.owner.result()
        return result
