"""What the OpenEnv and NeMo Gym servers share: held episodes, access checks, the uvicorn run.

* :class:`HeldEpisodes` opens episodes that outlive one request: each is entered and left by
  its own holder task (an episode's block belongs to one task), finishes itself at its limits,
  and is reported once when it ends. ``max_open`` bounds the episodes open at once.
* :class:`Guard` is the ASGI wrapper of every route, WebSockets included: ``serve``'s access
  checks (``Host`` and ``Origin`` on every bind against DNS rebinding, then the token).
* :func:`serve_app` binds, announces and runs uvicorn until SIGINT/SIGTERM; open episodes are
  then finished (``cancelled``) and written before it returns.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from starlette.types import ASGIApp, Receive, Scope, Send

from .._environment import Environment
from .._episode import Episode, open_episode
from .._errors import SiloError
from .._flood import DEFAULT_MAX_CONNECTIONS, DEFAULT_READ_TIMEOUT, check_limits
from .._jsonutil import compact_json
from .._options import RunOptions
from .._result import RunResult
from .._tools import BoundTool, ToolResult, ToolSpec, tool
from .._user import MESSAGE_USER_TOOL
from ._access import Access
from ._asgi import json_bytes, send_json
from ._gate import Gate
from ._host import CapacityReachedError
from ._http import (
    BACKLOG,
    _base_url,
    _bind,
    _check_protected,
    _Server,
    gated_config,
    stop_on_signals,
)
from ._lifecycle import EndReport

__all__ = [
    "SUBMIT",
    "Guard",
    "HeldEpisodes",
    "output_text",
    "serve_app",
    "submit",
    "tool_specs",
]


class HeldEpisodes:
    """Episodes opened one request, played over many, each held by its own task.

    Args:
        env: the environment.
        options: how every episode runs (its limits, faults...).
        runs_dir: where run directories go (``None``: nothing written).
        agent_name: the label recorded in each trace (the protocol's name).
        on_end: called once with each episode's result when it ends.
        max_open: episodes open at once; beyond it :meth:`open` raises
            :class:`CapacityReachedError`.
    """

    def __init__(
        self,
        env: Environment,
        options: RunOptions,
        runs_dir: Path | None,
        agent_name: str,
        on_end: Callable[[RunResult], None] | None,
        max_open: int,
    ) -> None:
        self.env = env
        self._options = options
        self._runs_dir = runs_dir
        self._agent_name = agent_name
        self._report = EndReport(on_end)
        self.max_open = max_open
        self._held: set[Episode] = set()
        self._opening = 0
        self._group: TaskGroup | None = None
        self._idle: anyio.Event | None = None
        self._on_ended: Callable[[Episode], Awaitable[None]] | None = None

    def when_ended(self, callback: Callable[[Episode], Awaitable[None]]) -> None:
        """Await ``callback(episode)`` in its holder once an episode has ended and is written.

        Not for an episode the server's shutdown ends: nothing will ask about it any more.
        """
        self._on_ended = callback

    @property
    def open_now(self) -> int:
        """Episodes open (not yet ended) or being opened: an ended one frees its slot at once."""
        return self._opening + sum(1 for ep in self._held if not ep.ended)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Hold episodes while inside; on the way out, every open one ends ``cancelled``."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    async def close(self) -> None:
        """End every open episode now (``cancelled``, written); no episode opens after it."""
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
        if self._held:  # each holder writes its run (under a shield) before it leaves
            self._idle = anyio.Event()
            await self._idle.wait()

    async def open(self, task_id: str) -> Episode:
        """Open an episode of ``task_id`` on a fresh world; it is entered when this returns.

        Raises:
            SiloError: ``task_not_found`` (or ``task_invalid``).
            CapacityReachedError: ``max_open`` episodes are open.
        """
        self.env.verifier_for(self.env.task(task_id))  # unknown ids fail before a slot is used
        if self.open_now >= self.max_open:
            raise CapacityReachedError(
                f"The server holds {self.open_now} open episodes, its limit: finish one and "
                "try again."
            )
        if self._group is None:
            raise RuntimeError("HeldEpisodes.open() outside running().")
        self._opening += 1
        try:
            held: Episode = await self._group.start(self._hold, task_id)
        finally:
            self._opening -= 1
        return held

    async def _hold(self, task_id: str, *, task_status: TaskStatus[Episode]) -> None:
        ep = open_episode(
            self.env,
            task_id,
            self._options,
            runs_dir=self._runs_dir,
            agent_name=self._agent_name,
        )
        try:
            async with ep:
                self._held.add(ep)
                task_status.started(ep)
                await ep.wait_finished()
            if self._on_ended is not None:
                await self._on_ended(ep)
        finally:
            self._held.discard(ep)
            self._report.once()(ep.result)
            if not self._held and self._idle is not None:
                self._idle.set()


class Guard:
    """Checks every request and WebSocket before the app sees it (an ASGI wrapper).

    The checks are ``serve``'s own (:class:`~._access.Access`): ``Host`` and
    ``Origin`` on every bind, then the bearer token. A refused WebSocket is closed before its
    handshake completes (the client sees an HTTP 403).

    Args:
        app: the protocol's app.
        access: the checks.
    """

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self._app = app
        self._access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        refused = self._access.refusal(scope)
        if refused is None:
            await self._app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": refused.code})
        else:
            body = {"error": {"code": refused.code, "message": refused.message}}
            await send_json(send, json_bytes(body), refused.status)


async def serve_app(
    app: ASGIApp,
    episodes: HeldEpisodes,
    *,
    host: str,
    port: int,
    token: str | None,
    allow_hosts: Iterable[str],
    allow_origins: Iterable[str],
    announce: Callable[[str], dict[str, Any]],
    on_ready: Callable[[dict[str, Any]], None] | None,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> None:
    """Serve ``app`` (behind :class:`Guard`) on uvicorn until SIGINT/SIGTERM (asyncio only).

    ``announce(base_url)`` builds the startup information passed to ``on_ready``;
    ``read_timeout`` and ``max_connections`` are the :class:`~._gate.Gate`'s.

    Raises:
        SiloError: ``serve_unprotected`` or ``address_unavailable``, before serving.
        ValueError: an ``allow_hosts`` / ``allow_origins`` entry is no host or origin, or a
            limit of the gate that no server can keep.
    """
    check_limits(read_timeout, max_connections)
    Access.build(port=port, bound=host, allow_hosts=allow_hosts, allow_origins=allow_origins)
    _check_protected(host, token)
    sock = _bind(host, port)
    bound, bound_port = sock.getsockname()[:2]
    access = Access.build(
        port=bound_port,
        bound=bound,
        token=token,
        allow_hosts=allow_hosts,
        allow_origins=allow_origins,
    )
    gate = Gate(read_timeout, max_connections, BACKLOG)
    config = gated_config(
        Guard(app, access),
        gate,
        timeout_graceful_shutdown=1,
        ws_ping_interval=None,  # clients ping; an RL step may think for minutes
    )
    server = _Server(config)
    with sock, gate.serving():
        async with episodes.running(), anyio.create_task_group() as group:
            await group.start(stop_on_signals, server, episodes)
            if on_ready is not None:
                on_ready(announce(_base_url(sock)))
            await server.serve(sockets=[sock])
            await episodes.close()  # uvicorn stopped by itself: end what is open
            group.cancel_scope.cancel()


#: The tool that ends an episode with an answer, as over MCP: listed last.
SUBMIT = "submit"
SUBMIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string", "description": "Your final answer to the task."}},
    "required": ["answer"],
    "additionalProperties": False,
}
SUBMIT_DESCRIPTION = (
    "Submit your final answer and end the episode. Call it once, when the task is done: "
    "every call after it is refused."
)


@tool(name=SUBMIT, description=SUBMIT_DESCRIPTION, input_schema=SUBMIT_SCHEMA)
def _submit(state: Any, input: dict[str, Any]) -> Any:
    return input["answer"]


# Bound to no world: it only checks the arguments, with the same messages as a real tool.
_SUBMIT_CHECK = BoundTool(_submit, None)


async def submit(ep: Episode, arguments: Any) -> tuple[ToolResult, RunResult | None]:
    """``submit``: finish ``ep`` with the answer; a malformed call is refused and changes nothing.

    Returns:
        The call's result (``Submitted.``, or the refusal) and the episode's result once ended.
    """
    if ep.ended:  # refused by the episode itself ("The episode has ended (...)")
        return await ep.call_tool(SUBMIT, arguments), ep.result
    checked, _ = _SUBMIT_CHECK.invoke_sync(arguments if isinstance(arguments, dict) else {})
    if checked.is_error:
        return checked, None
    result = await ep.finish(checked.output)
    return ToolResult("Submitted."), result


def tool_specs(env: Environment) -> list[ToolSpec]:
    """The tools every episode of ``env`` offers (bound to a throwaway world), ``submit`` last.

    ``message_user`` comes before ``submit`` when a task of ``env`` has a user;
    an episode of a task without one answers it ``tool_not_found``.

    Raises:
        SiloError: ``tool_name_reserved`` when the environment has its own ``submit``.
    """
    specs = [t.spec for t in env.bind_tools(env.create_state())]
    if any(s.name == SUBMIT for s in specs):
        raise SiloError(
            "tool_name_reserved",
            f'Environment "{env.name}" has a tool named "{SUBMIT}", a name silo-async serve '
            f'reserves for the tool that ends an episode. Rename the tool (e.g. "{SUBMIT}_form") '
            "in the environment's tools registry.",
            {"environment": env.name, "tool": SUBMIT},
        )
    if any(task.user is not None for task in env.tasks):
        specs.append(MESSAGE_USER_TOOL.spec)
    return [*specs, _submit.spec]


def output_text(output: Any) -> str:
    """A tool output as text: a str as-is, anything else compact JSON."""
    return output if isinstance(output, str) else compact_json(output)
