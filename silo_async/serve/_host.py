"""Many episodes in one process: each owned by a task of its own, each with its MCP endpoint.

An episode's ``async with`` block is entered and left by one owner task (what ``silo.episode``
asks); the HTTP handlers only call into it. Once the episode has ended, its owner lets it go:
the host keeps a :class:`Finished` record (the status ``GET /episodes/<id>`` answers, already
encoded) and the endpoint is served from then on by a shared server for ended episodes of that
task, which answers every call as the episode did after its end (``invalid_state``). A
long-running server therefore holds no world, trace or result per finished episode: a few
hundred bytes. The shared servers are stateless, so a client still holding a session of the
ended episode carries on there without noticing.

Leaving :meth:`EpisodeHost.running` cancels the owners: open episodes end ``cancelled`` and are
graded and written before it returns.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import attrs
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from .. import Episode, episode
from .._environment import Environment
from .._result import RunResult
from .._tools import ToolResult, ToolSpec
from ._asgi import call_cancelled_on_disconnect, json_bytes
from ._lifecycle import EndReport
from ._server import SUBMIT, Ended, EpisodeServer, list_tools_result

__all__ = ["EpisodeHost", "Finished", "Hosted"]

#: Seconds an ended episode's owner waits for the requests still in flight on its endpoint
#: (the call that ended it, answering) before it stops that endpoint.
DRAIN_S = 30.0


def status_json(
    episode_id: str, task_id: str, run_id: str, *, finished: bool, result: RunResult | None
) -> bytes:
    """``{"id", "task", "status", "result", "runId"}``, encoded: ``GET /episodes/<id>``'s answer."""
    return json_bytes(
        {
            "id": episode_id,
            "task": task_id,
            "status": "finished" if finished else "open",
            "result": result.result_dict() if result is not None else None,
            "runId": run_id,
        }
    )


async def _serve(
    manager: StreamableHTTPSessionManager, scope: Scope, receive: Receive, send: Send
) -> None:
    await call_cancelled_on_disconnect(
        manager.handle_request, scope, receive, send, max_body=manager.max_request_body_size
    )


@attrs.define(eq=False)
class Hosted:
    """An open episode of the host: its id, task, MCP endpoint and session manager."""

    id: str
    task_id: str
    url: str
    episode: Episode
    manager: StreamableHTTPSessionManager
    _busy: int = attrs.field(default=0, init=False)
    _idle: anyio.Event | None = attrs.field(default=None, init=False)

    def summary(self) -> dict[str, Any]:
        """``{"id", "task", "url"}``: what ``POST /episodes`` answers."""
        return {"id": self.id, "task": self.task_id, "url": self.url}

    def status(self) -> bytes:
        """What ``GET /episodes/<id>`` answers (``finished`` once the episode has ended)."""
        ep = self.episode
        return status_json(self.id, self.task_id, ep.run_id, finished=ep.finished, result=ep.result)

    async def finish(self, answer: Any) -> bytes:
        """Finish the episode with ``answer``; its status, finished."""
        result = await self.episode.finish(answer)
        return status_json(self.id, self.task_id, result.run_id, finished=True, result=result)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request to the MCP endpoint."""
        counted = scope["method"] != "GET"  # a GET is an SSE stream that lasts: not waited for
        self._busy += counted
        try:
            await _serve(self.manager, scope, receive, send)
        finally:
            self._busy -= counted
            if not self._busy and self._idle is not None:
                self._idle.set()

    async def drained(self, limit: float) -> None:
        """Return once no request is in flight on the endpoint (at most ``limit`` seconds)."""
        if self._busy:
            self._idle = anyio.Event()
            with anyio.move_on_after(limit):
                await self._idle.wait()


@attrs.define(eq=False)
class Finished:
    """A finished episode, let go: its encoded status and the shared endpoint that answers it."""

    id: str
    task_id: str
    url: str
    status_bytes: bytes
    manager: StreamableHTTPSessionManager

    def summary(self) -> dict[str, Any]:
        """``{"id", "task", "url"}``."""
        return {"id": self.id, "task": self.task_id, "url": self.url}

    def status(self) -> bytes:
        """What ``GET /episodes/<id>`` answers."""
        return self.status_bytes

    async def finish(self, answer: Any) -> bytes:
        """Finishing again changes nothing (``finish`` is idempotent): the status."""
        return self.status_bytes

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request to the MCP endpoint: every call ``invalid_state``."""
        await _serve(self.manager, scope, receive, send)


@attrs.define(eq=False)
class _Shared:
    """The endpoint of every ended episode of one task that ended for one reason."""

    manager: StreamableHTTPSessionManager
    ready: anyio.Event = attrs.field(factory=anyio.Event)


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
    _episodes: dict[str, Hosted | Finished] = attrs.field(factory=dict, init=False)
    _ended: dict[tuple[str, str], _Shared] = attrs.field(factory=dict, init=False)
    _tools: dict[tuple[int, ...], tuple[Sequence[ToolSpec], types.ListToolsResult]] = attrs.field(
        factory=dict, init=False
    )
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

    def get(self, episode_id: str) -> Hosted | Finished | None:
        """The episode with this id, or ``None``."""
        return self._episodes.get(episode_id)

    def all(self) -> list[Hosted | Finished]:
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

    def endpoint(self, episode_id: str) -> str:
        """The MCP endpoint of an episode."""
        return f"{self.base_url}/episodes/{episode_id}/mcp"

    def _new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(4)
            if candidate not in self._episodes:
                return candidate

    def _manager(self, served: EpisodeServer, *, stateless: bool) -> StreamableHTTPSessionManager:
        # One JSON body per call instead of an SSE stream (see _asgi); nothing of ours sends
        # notifications or requests during a call, which only the stream could carry.
        return StreamableHTTPSessionManager(
            app=served.server,
            json_response=True,
            stateless=stateless,
            security_settings=self.security,
        )

    def _tools_result(self, specs: Sequence[ToolSpec]) -> types.ListToolsResult:
        """``tools/list``'s answer, built once per set of tools (every world of an environment)."""
        key = tuple(id(s) for s in specs)
        cached = self._tools.get(key)
        if cached is None:
            cached = self._tools[key] = (list(specs), list_tools_result(specs))  # keeps ids alive
        return cached[1]

    async def _own(self, task_id: str, *, task_status: TaskStatus[Hosted]) -> None:
        opened = episode(self.env, task_id, runs_dir=self.runs_dir, **self.limits)
        try:
            async with opened as ep:
                tools = self._tools_result(ep.tools)
                served = EpisodeServer(ep, name=self.env.name, reveal=self.reveal, tools=tools)
                manager = self._manager(served, stateless=False)
                async with manager.run():
                    episode_id = self._new_id()
                    hosted = Hosted(episode_id, task_id, self.endpoint(episode_id), ep, manager)
                    self._episodes[episode_id] = hosted
                    task_status.started(hosted)
                    result = await ep.wait_finished()
                    self.report(result)
                    await self._retire(hosted, result, await ep.call_tool(SUBMIT), tools)
                    await hosted.drained(DRAIN_S)
        finally:
            self.report(opened.result)  # an episode the shutdown cancelled is written by now

    async def _retire(
        self, hosted: Hosted, result: RunResult, refusal: ToolResult, tools: types.ListToolsResult
    ) -> None:
        """Swap an ended episode for its :class:`Finished` record, served by a shared endpoint."""
        key = (hosted.task_id, str(refusal.output))
        shared = self._ended.get(key)
        if shared is None:
            if self._group is None:  # shutting down: nothing more will be asked
                return
            ended = Ended(hosted.episode.task, refusal)
            served = EpisodeServer(ended, name=self.env.name, tools=tools)
            shared = self._ended[key] = _Shared(self._manager(served, stateless=True))
            await self._group.start(self._run_shared, shared)
        await shared.ready.wait()
        status = status_json(hosted.id, hosted.task_id, result.run_id, finished=True, result=result)
        self._episodes[hosted.id] = Finished(
            hosted.id, hosted.task_id, hosted.url, status, shared.manager
        )

    @staticmethod
    async def _run_shared(shared: _Shared, *, task_status: TaskStatus[None]) -> None:
        async with shared.manager.run():
            shared.ready.set()
            task_status.started()
            await anyio.sleep_forever()
