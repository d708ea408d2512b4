"""Many episodes in one process: each owned by a task of its own, each with its MCP endpoint.

An episode's ``async with`` block is entered and left by one owner task (what ``silo.episode``
asks); the HTTP handlers only call into it. Once the episode has ended, its owner lets it go:
the host keeps a :class:`Finished` record (the status ``GET /episodes/<id>`` answers, already
encoded) and the endpoint is served from then on by a shared server for ended episodes of that
task, which answers every call as the episode did after its end (``invalid_state``). The
shared servers are stateless, so a client still holding a session of the ended episode carries
on there without noticing. A finished episode therefore holds no world, trace or session, only
its record: 1.5-2.5 KB (mostly its status, the encoded ``result.json``). The newest
``keep_finished`` records are kept; older ones are forgotten (404
``episode_not_found``; their run directories stay), so a server that lives for days stays small.

Bounds: ids carry 128 random bits; at most ``max_episodes`` are
open at once (finished ones do not count); each ends itself at its deadline, called or not; at
most ``keep_finished`` finished (or failed) ones are remembered.

:meth:`EpisodeHost.close` ends every open episode (``cancelled``, graded and written) while
their endpoints still answer, so a call in flight gets its answer; leaving
:meth:`EpisodeHost.running` then stops what is left.
"""

from __future__ import annotations

import collections
import logging
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
from starlette.types import Receive, Scope, Send

from .._end import error_text
from .._environment import Environment
from .._episode import Episode, open_episode
from .._options import RunOptions
from .._result import RunResult
from .._tools import ToolResult, ToolSpec
from ._asgi import call_cancelled_on_disconnect, call_streamed, json_bytes, send_json
from ._lifecycle import EndReport
from ._server import SUBMIT, Ended, EpisodeServer, list_tools_result

__all__ = [
    "DEFAULT_KEEP_FINISHED",
    "DEFAULT_MAX_EPISODES",
    "CapacityReachedError",
    "EpisodeFailedError",
    "EpisodeHost",
    "Finished",
    "Hosted",
]

#: Seconds an ended episode's owner waits for the requests still in flight on its endpoint
#: (the call that ended it, answering) before it stops that endpoint.
DRAIN_S = 30.0
#: Open episodes a server holds at once unless told otherwise (``--max-episodes``).
DEFAULT_MAX_EPISODES = 1000
#: Finished episodes a server remembers unless told otherwise (``--keep-finished``).
DEFAULT_KEEP_FINISHED = 1000
#: Random bytes in an episode id: an id is a capability (whoever knows it may play).
ID_BYTES = 16


def _error(code: str, message: str) -> bytes:
    return json_bytes({"error": {"code": code, "message": message}})


#: What the endpoint of an episode ended by the shutdown answers until the process exits.
_STOPPED = _error("shutting_down", "The server is shutting down.")


#: Where an episode the server could not open, grade or write is reported (one line each).
LOG = logging.getLogger("silo_async.serve")


class CapacityReachedError(RuntimeError):
    """As many episodes are open as the server allows (HTTP 503 ``capacity_reached``)."""


class EpisodeFailedError(RuntimeError):
    """The server could not open, grade or write an episode (HTTP 500 ``internal_error``).

    The environment or the disk failed, not the client: the episode is over (``failed``), the
    other episodes and the server go on.
    """


def status_json(
    episode_id: str,
    task_id: str,
    run_id: str,
    *,
    finished: bool,
    result: RunResult | None,
    failure: str | None = None,
) -> bytes:
    """``{"id", "task", "status", "result", "runId"}``, encoded: ``GET /episodes/<id>``'s answer.

    An episode the server failed to grade or write is ``failed``, with an ``error``.
    """
    body: dict[str, Any] = {
        "id": episode_id,
        "task": task_id,
        "status": _status(finished, failure),
        "result": result.result_dict() if result is not None else None,
        "runId": run_id,
    }
    if failure is not None:
        body["error"] = {"code": "internal_error", "message": failure}
    return json_bytes(body)


def _status(finished: bool, failure: str | None) -> str:
    return "failed" if failure is not None else "finished" if finished else "open"


async def _serve(
    manager: StreamableHTTPSessionManager, scope: Scope, receive: Receive, send: Send
) -> None:
    # JSON responses take the fast path of _asgi; SSE responses (EpisodeHost(streamed=True))
    # the SDK's own, the reference both are tested against.
    call = call_cancelled_on_disconnect if manager.json_response else call_streamed
    await call(manager.handle_request, scope, receive, send, max_body=manager.max_request_body_size)


@attrs.define(eq=False)
class Hosted:
    """An open episode of the host: its id, task, MCP endpoint and session manager."""

    id: str
    task_id: str
    url: str
    episode: Episode
    manager: StreamableHTTPSessionManager
    scope: anyio.CancelScope
    """The episode's block: cancelling it ends the episode ``cancelled`` (shutdown)."""
    _busy: int = attrs.field(default=0, init=False)
    _idle: anyio.Event | None = attrs.field(default=None, init=False)
    stopped: bool = attrs.field(default=False, init=False)
    """The endpoint no longer answers (the server is shutting down)."""
    failure: str | None = attrs.field(default=None, init=False)
    """Why the server could not grade or write the episode, once that happened."""

    def summary(self) -> dict[str, Any]:
        """``{"id", "task", "url"}``: what ``POST /episodes`` answers."""
        return {"id": self.id, "task": self.task_id, "url": self.url}

    def listed(self) -> dict[str, Any]:
        """``{"id", "task", "status", "runId"}``: its entry in ``GET /episodes``."""
        status = _status(self.episode.finished, self.failure)
        return {"id": self.id, "task": self.task_id, "status": status, "runId": self.episode.run_id}

    def status(self) -> bytes:
        """What ``GET /episodes/<id>`` answers (``finished`` once the episode has ended)."""
        ep = self.episode
        return status_json(
            self.id,
            self.task_id,
            ep.run_id,
            finished=ep.finished,
            result=ep.result,
            failure=self.failure,
        )

    async def finish(self, answer: Any) -> bytes:
        """Finish the episode with ``answer``; its status, finished.

        Raises:
            EpisodeFailedError: the episode could not be graded or written.
        """
        if self.failure is not None:
            raise EpisodeFailedError(self.failure)
        try:
            result = await self.episode.finish(answer)
        except Exception as exc:
            self.failure = self.failure or error_text(exc)
            raise EpisodeFailedError(self.failure) from None
        return status_json(self.id, self.task_id, result.run_id, finished=True, result=result)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one request to the MCP endpoint."""
        if self.failure is not None:
            await send_json(send, _error("internal_error", self.failure), 500)
            return
        if self.stopped:
            await send_json(send, _STOPPED, 503)
            return
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
    run_id: str
    status_bytes: bytes
    manager: StreamableHTTPSessionManager

    def listed(self) -> dict[str, Any]:
        """``{"id", "task", "status", "runId"}``: its entry in ``GET /episodes``."""
        return {"id": self.id, "task": self.task_id, "status": "finished", "runId": self.run_id}

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


class _Slot:
    """One of the host's ``max_episodes`` places, taken at open and given back once."""

    def __init__(self, host: EpisodeHost) -> None:
        host._slots.add(self)
        self._host: EpisodeHost | None = host
        self.started = False
        self.episode: Episode | None = None

    def release(self) -> None:
        if self._host is not None:
            self._host._slots.discard(self)
            self._host = None


@attrs.define(eq=False)
class EpisodeHost:
    """The open and finished episodes of one HTTP server.

    Args:
        env: the environment every episode plays.
        base_url: ``http://host:port`` the server is reached at (for the endpoints' URLs).
        options: how every episode runs (its limits, faults...).
        runs_dir: where run directories go.
        reveal: what ``submit`` answers (``None``: ``Submitted.``).
        report: called once per episode when it ends.
        max_episodes: episodes open at once, at most.
        streamed: answer calls with the SDK's SSE streams (the reference path) instead of one
            JSON body each (the fast path: about 15% less server CPU per call).
        keep_finished: finished (or failed) episodes remembered; the oldest beyond it are
            forgotten (``get`` gives ``None``; their run directories stay).
    """

    env: Environment
    base_url: str
    options: RunOptions
    runs_dir: Path | None = None
    reveal: Callable[[RunResult], str] | None = None
    report: EndReport = attrs.field(factory=lambda: EndReport(None))
    max_episodes: int = DEFAULT_MAX_EPISODES
    streamed: bool = False
    keep_finished: int = DEFAULT_KEEP_FINISHED
    _episodes: dict[str, Hosted | Finished] = attrs.field(factory=dict, init=False)
    _ids: list[str] = attrs.field(factory=list, init=False)  # opening order, for the listing
    _finished: collections.deque[str] = attrs.field(factory=collections.deque, init=False)
    _slots: set[_Slot] = attrs.field(factory=set, init=False)
    _owners: int = attrs.field(default=0, init=False)
    _all_done: anyio.Event | None = attrs.field(default=None, init=False)
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

    async def close(self) -> None:
        """End every open episode (``cancelled``, graded, written) and wait for their owners.

        Their endpoints keep answering meanwhile, so a call in flight gets its answer (the
        episode's refusal). No episode can be opened any more.
        """
        self._group = None
        for hosted in list(self._episodes.values()):
            if isinstance(hosted, Hosted):
                hosted.scope.cancel()
        if self._owners:
            if self._all_done is None:  # one event for every caller (a second signal, the end)
                self._all_done = anyio.Event()
            await self._all_done.wait()

    def get(self, episode_id: str) -> Hosted | Finished | None:
        """The episode with this id, or ``None``."""
        return self._episodes.get(episode_id)

    def page(self, limit: int, after: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` entries of ``GET /episodes`` after the id ``after``, and the next id.

        The second value is the id to pass as ``after`` for the following page (``None`` at
        the end). ``after`` must be a known id.
        """
        # A linear search: the list holds at most max_episodes + keep_finished ids.
        start = 0 if after is None else self._ids.index(after) + 1
        ids = self._ids[start : start + limit]
        following = ids[-1] if ids and start + limit < len(self._ids) else None
        return [self._episodes[i].listed() for i in ids], following

    async def open(self, task_id: str) -> Hosted:
        """Open a fresh episode of ``task_id`` and return it once its endpoint answers.

        Raises:
            SiloError: ``task_not_found`` or ``task_invalid``.
            CapacityReachedError: ``max_episodes`` are open.
            RuntimeError: the host is shutting down.
        """
        self.env.verifier_for(self.env.task(task_id))  # fail here, not in the owner task
        if self._group is None:
            raise RuntimeError("The server is shutting down; no new episode can be opened.")
        if len(self._slots) >= self.max_episodes:
            # An episode that has just ended frees its place at once, before its owner wakes.
            for taken in [t for t in self._slots if t.episode is not None and t.episode.ended]:
                taken.release()
        if len(self._slots) >= self.max_episodes:
            raise CapacityReachedError(
                f"{len(self._slots)} episodes are open, as many as this server holds "
                f"(--max-episodes {self.max_episodes}). Finish one (submit, or POST "
                "/episodes/<id>/finish) or wait for one to time out, then try again."
            )
        slot = _Slot(self)  # taken now: concurrent opens cannot overshoot
        try:
            hosted: Hosted = await self._group.start(self._own, task_id, slot)
        finally:
            if not slot.started:
                slot.release()
        return hosted

    def endpoint(self, episode_id: str) -> str:
        """The MCP endpoint of an episode."""
        return f"{self.base_url}/episodes/{episode_id}/mcp"

    def _new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(ID_BYTES)
            if candidate not in self._episodes:
                return candidate

    def _add(self, hosted: Hosted) -> None:
        self._ids.append(hosted.id)
        self._episodes[hosted.id] = hosted

    def _done(self, episode_id: str) -> None:
        """Count an episode among the finished ones; forget the oldest beyond ``keep_finished``."""
        self._finished.append(episode_id)
        while len(self._finished) > self.keep_finished:
            oldest = self._finished.popleft()
            if self._episodes.pop(oldest, None) is not None:
                self._ids.remove(oldest)  # at most max_episodes + keep_finished ids to pass

    def _manager(self, served: EpisodeServer, *, stateless: bool) -> StreamableHTTPSessionManager:
        # One JSON body per call instead of an SSE stream (see _asgi); nothing of ours sends
        # notifications or requests during a call, which only the stream could carry. No
        # security settings: ServeApp has checked Host and Origin of every request already.
        return StreamableHTTPSessionManager(
            app=served.server, json_response=not self.streamed, stateless=stateless
        )

    def _tools_result(self, specs: Sequence[ToolSpec]) -> types.ListToolsResult:
        """``tools/list``'s answer, built once per set of tools (every world of an environment)."""
        key = tuple(id(s) for s in specs)
        cached = self._tools.get(key)
        if cached is None:
            cached = self._tools[key] = (list(specs), list_tools_result(specs))  # keeps ids alive
        return cached[1]

    async def _own(self, task_id: str, slot: _Slot, *, task_status: TaskStatus[Hosted]) -> None:
        slot.started = True
        self._owners += 1
        opened = open_episode(self.env, task_id, self.options, runs_dir=self.runs_dir)
        served = EpisodeServer(
            opened, name=self.env.name, reveal=self.reveal, tools_for=self._tools_result
        )
        manager = self._manager(served, stateless=False)
        report = self.report.once()
        owned: Hosted | None = None  # once the episode is open
        try:
            # The endpoint outlives the episode's block: a shutdown that ends the episode
            # (cancelling the block) leaves the endpoint up to answer the calls in flight.
            async with manager.run():
                with anyio.CancelScope() as scope:
                    async with opened as ep:
                        slot.episode = ep
                        ep.set_output("")  # a client that leaves without an answer gave ""
                        episode_id = self._new_id()
                        hosted = Hosted(
                            episode_id, task_id, self.endpoint(episode_id), ep, manager, scope
                        )
                        self._add(hosted)
                        owned = hosted
                        task_status.started(hosted)
                        await ep.wait_finished()
                result = opened.result
                slot.release()  # finished episodes do not count against max_episodes
                report(result)
                if result is not None:
                    await self._retire(hosted, result, await opened.call_tool(SUBMIT))
                await hosted.drained(DRAIN_S)
                hosted.stopped = True  # from now on answered without the manager
        except Exception as exc:  # the environment or the disk failed this episode, not the server
            self._failed(task_id, owned, error_text(exc))
        finally:
            slot.release()
            report(opened.result)  # an episode the shutdown cancelled is written by now
            self._owners -= 1
            if not self._owners and self._all_done is not None:
                self._all_done.set()

    def _failed(self, task_id: str, hosted: Hosted | None, failure: str) -> None:
        """Report an episode the server could not open, grade or write; the others go on.

        Raises:
            EpisodeFailedError: the episode had not opened (its ``POST /episodes`` answers 500).
        """
        if hosted is None:
            LOG.error("silo-async serve: could not open an episode of %s: %s", task_id, failure)
            raise EpisodeFailedError(f"Could not open an episode of {task_id}: {failure}")
        self._done(hosted.id)  # once per owner: a failed episode counts as a finished one
        hosted.failure = hosted.failure or failure
        hosted.stopped = True
        LOG.error("silo-async serve: episode %s failed: %s", hosted.id, hosted.failure)

    async def _retire(self, hosted: Hosted, result: RunResult, refusal: ToolResult) -> None:
        """Swap an ended episode for its :class:`Finished` record, served by a shared endpoint."""
        key = (hosted.task_id, str(refusal.output))
        shared = self._ended.get(key)
        if shared is None:
            if self._group is None:  # shutting down: nothing more will be asked
                return
            ended = Ended(hosted.episode.task, refusal, hosted.episode.tools)
            served = EpisodeServer(ended, name=self.env.name, tools_for=self._tools_result)
            shared = self._ended[key] = _Shared(self._manager(served, stateless=True))
            await self._group.start(self._run_shared, shared)
        await shared.ready.wait()
        status = status_json(hosted.id, hosted.task_id, result.run_id, finished=True, result=result)
        self._episodes[hosted.id] = Finished(
            hosted.id, hosted.task_id, hosted.url, result.run_id, status, shared.manager
        )
        self._done(hosted.id)

    @staticmethod
    async def _run_shared(shared: _Shared, *, task_status: TaskStatus[None]) -> None:
        async with shared.manager.run():
            shared.ready.set()
            task_status.started()
            await anyio.sleep_forever()
