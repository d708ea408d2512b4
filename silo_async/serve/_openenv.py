"""``silo-async serve --protocol openenv``: episodes over OpenEnv's environment-server protocol.

OpenEnv (``openenv`` on PyPI; its ``openenv.core.env_server``) keeps one environment per
session. Here each session plays episodes of a silo world (:mod:`._openenv_session`):

* ``/ws``: a WebSocket session. Frames in: ``{"type": "reset", "data": {"task": ID}}``,
  ``{"type": "step", "data": <action>}`` (``list_tools``, ``call_tool``), ``{"type":
  "state"}``, ``{"type": "close"}``. Frames out: ``{"type": "observation", "data":
  {"observation", "reward", "done"}}``, ``{"type": "state", "data": {...}}`` and ``{"type":
  "error", "data": {"message", "code"}}``. Leaving (``close``, or the socket going away)
  finishes the open episode with the output so far.
* ``/ws?session_id=ID`` joins a session created over ``POST /mcp`` (OpenEnv's JSON-RPC:
  ``openenv/session/create``, ``tools/list``, ``tools/call``, ``openenv/session/close``;
  :mod:`._openenv_mcp`), which its ``MCPToolClient`` plays: the socket resets, ``/mcp`` calls
  the tools, and the session outlives the socket until it is closed over ``/mcp``.
* ``GET /health``, ``/metadata``, ``/schema`` and ``/openapi.json`` answer as OpenEnv's servers
  do, so ``openenv validate --url`` passes (production mode: no HTTP ``/reset``/``/step``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from .._environment import Environment
from .._faults import Faults
from .._flood import DEFAULT_MAX_CONNECTIONS, DEFAULT_READ_TIMEOUT
from .._limits import DEFAULT_LIMITS, Limits
from .._options import RunOptions, resolve_options
from .._result import RunResult
from .._tools import ToolSpec
from ._asgi import json_bytes, json_text, send_json
from ._harness_common import HeldEpisodes, serve_app, tool_specs
from ._openenv_mcp import McpEndpoint, Sessions, openapi_document
from ._openenv_session import (
    INVALID_JSON,
    VALIDATION_ERROR,
    ProtocolError,
    Session,
    error_frame,
)

__all__ = ["OpenEnvApp", "serve_openenv"]

_ACTION_SCHEMA: dict[str, Any] = {
    "title": "SiloAction",
    "oneOf": [
        {
            "type": "object",
            "properties": {"type": {"const": "list_tools"}},
            "required": ["type"],
        },
        {
            "type": "object",
            "properties": {
                "type": {"const": "call_tool"},
                "tool_name": {"type": "string"},
                "arguments": {"type": "object"},
            },
            "required": ["type", "tool_name"],
        },
    ],
}
_OBSERVATION_SCHEMA: dict[str, Any] = {
    "title": "SiloObservation",
    "type": "object",
    "properties": {
        "done": {"type": "boolean"},
        "reward": {"type": ["number", "null"]},
        "metadata": {"type": "object"},
        "tools": {"type": "array"},
        "tool_name": {"type": "string"},
        "result": {},
        "error": {"type": ["object", "null"]},
    },
}
_STATE_SCHEMA: dict[str, Any] = {
    "title": "SiloState",
    "type": "object",
    "properties": {
        "episode_id": {"type": ["string", "null"]},
        "step_count": {"type": "integer"},
        "task_id": {"type": ["string", "null"]},
        "done": {"type": "boolean"},
    },
}


class OpenEnvApp:
    """The ASGI app of ``serve --protocol openenv`` (a class instance: ASGI servers call it).

    Args:
        episodes: where episodes are opened and held.
        specs: the tools every episode offers, ``submit`` last.
        default_task: the task a ``reset`` without one plays (``None``: reset must name one).
    """

    def __init__(
        self, episodes: HeldEpisodes, specs: list[ToolSpec], default_task: str | None
    ) -> None:
        self.episodes = episodes
        self.specs = specs
        self.default_task = default_task
        # Sessions made over /mcp count against --max-episodes, as the episodes they hold do.
        self.sessions = Sessions(self.new_session, episodes.max_open)
        self._mcp = McpEndpoint(self.sessions, lambda: self.new_session().tools())
        self._openapi = openapi_document(episodes.env.name)

    def new_session(self) -> Session:
        """A session with no episode yet."""
        return Session(self.episodes, self.specs, self.default_task)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if scope["path"] == "/ws":
                await self._websocket(WebSocket(scope, receive, send))
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            return
        if scope["path"] == "/mcp":
            await self._mcp(scope, receive, send)
            return
        answer = self._get(scope["path"]) if scope["method"] in ("GET", "HEAD") else None
        if answer is None:
            body = {"error": {"code": "not_found", "message": f"No route {scope['path']}."}}
            await send_json(send, json_bytes(body), 404)
            return
        await send_json(send, json_bytes(answer))

    def _get(self, path: str) -> dict[str, Any] | None:
        env: Environment = self.episodes.env
        if path == "/health":
            return {"status": "healthy"}
        if path == "/openapi.json":
            return self._openapi
        if path == "/metadata":
            return {
                "name": env.name,
                "description": f'The silo world "{env.name}": {len(env.tasks)} tasks, graded '
                "by its verifiers. reset with {task}, then list_tools / call_tool; submit ends.",
                "readme_content": None,
                "version": None,
                "author": None,
                "documentation_url": None,
            }
        if path == "/schema":
            return {
                "action": _ACTION_SCHEMA,
                "observation": _OBSERVATION_SCHEMA,
                "state": _STATE_SCHEMA,
            }
        return None

    async def _websocket(self, ws: WebSocket) -> None:
        await ws.accept()
        joined = ws.query_params.get("session_id")
        try:
            session = self.sessions.attach(joined) if joined else self.new_session()
        except ProtocolError as exc:  # as OpenEnv: one error frame, then the socket closes
            await ws.send_text(json_text(error_frame(exc.code, exc.message)))
            await ws.close()
            return
        try:
            await self._play(ws, session)
        finally:
            if joined:  # the session is /mcp's: it outlives the socket
                await self.sessions.detach(joined, session)
            else:
                await session.close()
            with contextlib.suppress(Exception):
                await ws.close()

    async def _play(self, ws: WebSocket, session: Session) -> None:
        """Answer the socket's frames until it closes or sends ``close``."""
        with contextlib.suppress(WebSocketDisconnect):
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    return
                raw = message.get("text")
                if raw is None:
                    raw = (message.get("bytes") or b"").decode("utf-8", "replace")
                reply, stop = await self._answer(session, raw)
                if reply is not None:
                    await ws.send_text(json_text(reply))
                if stop:
                    return

    async def _answer(self, session: Session, raw: str) -> tuple[dict[str, Any] | None, bool]:
        try:
            frame = json.loads(raw)
        except RecursionError:
            return error_frame(INVALID_JSON, "Invalid JSON: the message nests too deeply."), False
        except ValueError as exc:
            return error_frame(INVALID_JSON, f"Invalid JSON: {exc}"), False
        if not isinstance(frame, dict):
            return error_frame(VALIDATION_ERROR, "A message is a JSON object with a type."), False
        try:
            reply = await session.handle(frame)
        except ProtocolError as exc:
            return error_frame(exc.code, exc.message), False
        return reply, reply is None


async def serve_openenv(
    env: Environment,
    task_id: str | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    allow_hosts: Iterable[str] = (),
    allow_origins: Iterable[str] = (),
    limits: Limits | None = None,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    runs_dir: Path | None = None,
    max_episodes: int = 1000,
    on_end: Callable[[RunResult], None] | None = None,
    on_ready: Callable[[dict[str, Any]], None] | None = None,
    faults: Faults | str | None = None,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    options: RunOptions | None = None,
) -> None:
    """Serve episodes of ``env`` over OpenEnv's protocol until SIGINT/SIGTERM (asyncio only).

    Args:
        env: the environment.
        task_id: the task a ``reset`` without one plays (``None``: every reset names one).
        host: address to bind (loopback by default).
        port: port to bind (0: any free port).
        token: bearer token every request must carry (required off loopback).
        allow_hosts: further ``Host`` values to accept (``--allow-host``).
        allow_origins: further ``Origin`` values to accept (``--allow-origin``).
        limits: the limits of each episode (or the keyword form below, as for ``run``).
        max_tool_calls: per episode, as for ``run``.
        timeout: seconds per episode from its reset (``None``: no limit).
        token_limit: recorded tokens that end an episode (``None``: no limit).
        runs_dir: where run directories go (``None``: nothing written).
        max_episodes: episodes open at once; a reset beyond it is ``CAPACITY_REACHED``.
        on_end: called with each episode's result when it ends.
        on_ready: called once listening, with ``{"url", "protocol", "ws", "episodes": []}``.
        faults: the faults every episode's tool calls meet (None: none).
        read_timeout: seconds a client has to send a request's head and body (from its first
            byte; a connection's first request from its start), else it is disconnected.
        max_connections: connections open at once; one more is answered 503 and closed.
        options: how every episode runs as one :class:`~silo_async.RunOptions` (instead of the
            limit keywords and ``faults``).

    Raises:
        SiloError: ``serve_unprotected``, ``address_unavailable``, ``task_not_found`` or
            ``tool_name_reserved``, before serving.
        ValueError: an ``allow_hosts`` / ``allow_origins`` entry is no host or origin, or
            ``read_timeout`` / ``max_connections`` no server can keep.
        TypeError: ``limits`` beside a keyword of the keyword form (or ``options`` beside
            any of the keywords it replaces).
    """
    if task_id is not None:
        env.verifier_for(env.task(task_id))
    specs = tool_specs(env)
    how = resolve_options(
        options,
        limits=limits,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        token_limit=token_limit,
        faults=faults,
    )
    episodes = HeldEpisodes(env, how, runs_dir, "openenv", on_end, max_episodes)

    def announce(url: str) -> dict[str, Any]:
        ws = "ws" + url.removeprefix("http") + "/ws"
        return {"url": url, "protocol": "openenv", "ws": ws, "episodes": []}

    await serve_app(
        OpenEnvApp(episodes, specs, task_id),
        episodes,
        host=host,
        port=port,
        token=token,
        allow_hosts=allow_hosts,
        allow_origins=allow_origins,
        announce=announce,
        on_ready=on_ready,
        read_timeout=read_timeout,
        max_connections=max_connections,
    )
