"""Many episodes in one process: each owned by a task of its own, each with its MCP endpoint.

An episode's ``async with`` block is entered and left by one owner task (what ``silo.episode``
asks); the HTTP handlers only call into it. The owner keeps the episode's MCP session manager
running after the end too, so a finished episode's endpoint still answers (``invalid_state``).
Leaving :meth:`EpisodeHost.running` cancels the owners: open episodes end ``cancelled`` and are
graded and written before it returns.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import attrs
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from .. import Episode, episode
from .._environment import Environment
from .._result import RunResult
from ._lifecycle import EndReport
from ._server import EpisodeServer

__all__ = ["EpisodeHost", "Hosted"]


@attrs.define(eq=False)
class Hosted:
    """One episode of the host: its id, task, MCP endpoint and session manager."""

    id: str
    task_id: str
    url: str
    episode: Episode
    manager: StreamableHTTPSessionManager

    def summary(self) -> dict[str, Any]:
        """``{"id", "task", "url"}``: what ``POST /episodes`` answers."""
        return {"id": self.id, "task": self.task_id, "url": self.url}

    def status(self) -> dict[str, Any]:
        """``{"id", "task", "status", "result", "runId"}``: what ``GET /episodes/<id>`` answers."""
        result = self.episode.result
        return {
            "id": self.id,
            "task": self.task_id,
            "status": "finished" if self.episode.finished else "open",
            "result": result.result_dict() if result is not None else None,
            "runId": self.episode.run_id,
        }


@attrs.define(eq=False)
class EpisodeHost:
    """The open and finished episodes of one HTTP server.

    Args:
        env: the environment every episode plays.
        base_url: ``http://host:port`` the server is reached at (for the endpoints' URLs).
        limits: ``max_tool_calls`` and ``timeout`` of every episode.
        runs_dir: where run directories go.
        reveal: what ``submit`` answers (``None``: ``Submitted.``).
        report: called once per episode when it ends.
        security: Host/Origin checks of the MCP endpoints (``None``: none).
    """

    env: Environment
    base_url: str
    limits: dict[str, Any]
    runs_dir: Path | None
    reveal: Callable[[RunResult], str] | None
    report: EndReport
    security: TransportSecuritySettings | None
    _episodes: dict[str, Hosted] = attrs.field(factory=dict, init=False)
    _group: TaskGroup | None = attrs.field(default=None, init=False)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[EpisodeHost]:
        """Hold the owner tasks; on the way out every open episode ends and is written."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield self
            finally:
                self._group = None
                group.cancel_scope.cancel()

    def get(self, episode_id: str) -> Hosted | None:
        """The episode with this id, or ``None``."""
        return self._episodes.get(episode_id)

    def all(self) -> list[Hosted]:
        """Every episode, in the order they were opened."""
        return list(self._episodes.values())

    async def open(self, task_id: str) -> Hosted:
        """Open a fresh episode of ``task_id`` and return it once its endpoint answers.

        Raises:
            SiloError: ``task_not_found`` or ``task_invalid``.
            RuntimeError: the host is shutting down.
        """
        self.env.verifier_for(self.env.task(task_id))  # fail here, not in the owner task
        if self._group is None:
            raise RuntimeError("The server is shutting down; no new episode can be opened.")
        hosted: Hosted = await self._group.start(self._own, task_id)
        return hosted

    def _new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(4)
            if candidate not in self._episodes:
                return candidate

    async def _own(self, task_id: str, *, task_status: TaskStatus[Hosted]) -> None:
        opened = episode(self.env, task_id, runs_dir=self.runs_dir, **self.limits)
        try:
            async with opened as ep:
                served = EpisodeServer(ep, name=self.env.name, reveal=self.reveal)
                manager = StreamableHTTPSessionManager(
                    app=served.server, security_settings=self.security
                )
                async with manager.run():
                    episode_id = self._new_id()
                    hosted = Hosted(episode_id, task_id, self.endpoint(episode_id), ep, manager)
                    self._episodes[episode_id] = hosted
                    task_status.started(hosted)
                    self.report(await ep.wait_finished())
                    await anyio.sleep_forever()  # the endpoint keeps answering invalid_state
        finally:
            self.report(opened.result)  # an episode the shutdown cancelled is written by now

    def endpoint(self, episode_id: str) -> str:
        """The MCP endpoint of an episode."""
        return f"{self.base_url}/episodes/{episode_id}/mcp"
