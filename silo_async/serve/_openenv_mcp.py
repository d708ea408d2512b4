"""OpenEnv's HTTP face of ``serve --protocol openenv``: ``POST /mcp`` and ``GET /openapi.json``.

``/mcp`` speaks OpenEnv's JSON-RPC 2.0 (its ``HTTPEnvServer``'s, not MCP's streamable HTTP):
one request per POST, always answered 200 with a JSON-RPC response.

* ``openenv/session/create`` → ``{"session_id"}``: a session (:class:`Sessions`) that a
  WebSocket joins with ``/ws?session_id=ID`` to ``reset`` and ``step``, and that ``/mcp``
  plays with ``params.session_id``. Beyond ``--max-episodes`` sessions, ``-32000``.
* ``tools/list`` → ``{"tools": [Tool...]}``: the session's tools, or without a session the
  environment's (discovery).
* ``tools/call`` ``{"name", "arguments", "session_id"}`` → the observation of that call
  (``tool_name``, ``result``, ``error``, ``metadata``, ``done``, ``reward``), as OpenEnv's
  servers answer a tool-calling environment's ``step``: ``submit`` gives the world's ``reward``
  with ``done: true``.
* ``openenv/session/close`` ``{"session_id"}`` finishes the session's episode (the output so
  far) and forgets it → ``{"session_id", "closed": true}``; while a WebSocket holds the session,
  ``{"closed": false, "closing": true}`` and it closes when the WebSocket leaves.

Errors are JSON-RPC errors: ``-32700`` not JSON, ``-32600`` not a request, ``-32601`` an unknown
method, ``-32602`` bad params or an unknown session, ``-32000`` a session that cannot play the
call (no episode yet, capacity).

``/openapi.json`` describes the HTTP routes (OpenEnv HTTP API 1.0.0). Without ``/reset``,
``/step`` and ``/state`` over HTTP — OpenEnv's stateless simulation controls, which would open a
world and drop it in one request — the server is in OpenEnv's *production* mode: episodes are
reset and stepped over ``/ws``, tools called over ``/ws`` or ``/mcp``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from starlette.types import Receive, Scope, Send

from ._asgi import BodyTooLargeError, json_bytes, read_body, send_json
from ._host import CapacityReachedError
from ._openenv_session import SESSION_ERROR, VALIDATION_ERROR, ProtocolError, Session

__all__ = ["OPENAPI_VERSION", "McpEndpoint", "Sessions", "openapi_document"]

#: The OpenEnv HTTP API this server speaks (``openenv validate``'s standard version).
OPENAPI_VERSION = "1.0.0"
#: Largest ``/mcp`` body read (a tool's arguments).
MAX_BODY = 8 * 1024 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_ERROR = -32000


class _RpcError(Exception):
    """A JSON-RPC error answering one request."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Sessions:
    """The sessions created over ``/mcp``, each played by ``/mcp`` and at most one WebSocket.

    Args:
        make: a new, empty session.
        limit: sessions held at once; beyond it, those whose episode has ended and that no
            WebSocket holds are forgotten, and if none is, creating one is refused.
    """

    def __init__(self, make: Callable[[], Session], limit: int) -> None:
        self._make = make
        self._limit = limit
        self._held: dict[str, Session] = {}

    def create(self) -> str:
        """A new session's id (128 random bits: whoever knows it may play the session).

        Raises:
            CapacityReachedError: ``limit`` sessions are held and none can be forgotten.
        """
        if len(self._held) >= self._limit:
            for sid in [k for k, s in self._held.items() if s.played_out and not s.attached]:
                del self._held[sid]
        if len(self._held) >= self._limit:
            raise CapacityReachedError(
                f"The server holds {len(self._held)} sessions, its limit: close one "
                "(openenv/session/close) and try again."
            )
        sid = secrets.token_hex(16)
        self._held[sid] = self._make()
        return sid

    def get(self, sid: Any) -> Session:
        """The session ``sid``.

        Raises:
            _RpcError: ``-32602``, no such session.
        """
        session = self._held.get(sid) if isinstance(sid, str) else None
        if session is None:
            raise _RpcError(
                INVALID_PARAMS,
                f"Unknown session_id: {sid} (never created, or closed). Create one with "
                "openenv/session/create.",
            )
        return session

    def attach(self, sid: str) -> Session:
        """Hand session ``sid`` to a WebSocket.

        Raises:
            ProtocolError: no such session, or a WebSocket holds it already.
        """
        session = self._held.get(sid)
        if session is None:
            raise ProtocolError(
                SESSION_ERROR,
                f"Unknown session_id: {sid} (never created, or closed). Create one with "
                "openenv/session/create over POST /mcp.",
            )
        if session.attached:
            raise ProtocolError(
                SESSION_ERROR,
                f"Session {sid} already has a WebSocket attached: one socket per session "
                "(close it first, or create another session).",
            )
        session.attached = True
        return session

    async def detach(self, sid: str, session: Session) -> None:
        """The WebSocket holding ``sid`` left: close the session if that was asked meanwhile."""
        session.attached = False
        if session.closing:
            self._held.pop(sid, None)
            await session.close()

    async def close(self, sid: Any) -> dict[str, Any]:
        """Close session ``sid`` and finish its episode (while a socket holds it: closing).

        Raises:
            _RpcError: ``-32602``, no such session.
        """
        session = self.get(sid)
        if session.attached:
            session.closing = True
            return {"session_id": sid, "closed": False, "closing": True}
        self._held.pop(sid, None)
        await session.close()
        return {"session_id": sid, "closed": True}


def _parse(raw: bytes) -> Any:
    """The body's JSON value.

    Raises:
        _RpcError: ``-32700``.
    """
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise _RpcError(PARSE_ERROR, "Parse error: the body is not JSON.") from None


def _request(value: Any) -> tuple[str, dict[str, Any]]:
    """The request's method and params.

    Raises:
        _RpcError: ``-32600`` (not a request object), ``-32602`` (params not an object).
    """
    if not isinstance(value, dict):
        raise _RpcError(INVALID_REQUEST, "Invalid Request: the body is one JSON-RPC request.")
    method, params = value.get("method"), value.get("params", {})
    request_id = value.get("id")
    valid_id = request_id is None or type(request_id) in (int, str)
    if value.get("jsonrpc") != "2.0" or not isinstance(method, str) or not valid_id:
        raise _RpcError(
            INVALID_REQUEST,
            'Invalid Request: {"jsonrpc": "2.0", "method": str, "params": {...}, "id": int|str}.',
        )
    if not isinstance(params, dict):
        raise _RpcError(INVALID_PARAMS, "Params must be an object.")
    return method, params


def _id_of(value: Any) -> Any:
    """The request's id when it is a valid one (a string or an integer), else null."""
    found = value.get("id") if isinstance(value, dict) else None
    return found if type(found) in (int, str) else None


class McpEndpoint:
    """``POST /mcp``: OpenEnv's JSON-RPC over the server's sessions (see the module).

    Args:
        sessions: the sessions created over ``/mcp``.
        discovery: the environment's tools, as ``tools/list`` lists them without a session.
    """

    def __init__(self, sessions: Sessions, discovery: Callable[[], list[dict[str, Any]]]) -> None:
        self._sessions = sessions
        self._discovery = discovery

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            body = {"error": {"code": "method_not_allowed", "message": "/mcp takes POST."}}
            await send_json(send, json_bytes(body), 405, {"allow": "POST"})
            return
        try:
            raw = await read_body(receive, MAX_BODY)
        except BodyTooLargeError:
            answer = _error(None, _RpcError(INVALID_REQUEST, "The body is over 8 MiB."))
        else:
            if raw is None:  # the client is gone
                return
            answer = await self.answer(raw)
        await send_json(send, json_bytes(answer))

    async def answer(self, raw: bytes) -> dict[str, Any]:
        """The JSON-RPC response to one request body."""
        request_id = None
        try:
            value = _parse(raw)
            request_id = _id_of(value)
            method, params = _request(value)
            result = await self._dispatch(method, params)
        except _RpcError as exc:
            return _error(request_id, exc)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "openenv/session/create":
            try:
                return {"session_id": self._sessions.create()}
            except CapacityReachedError as exc:
                raise _RpcError(SERVER_ERROR, str(exc)) from None
        if method == "openenv/session/close":
            if not params.get("session_id"):
                raise _RpcError(INVALID_PARAMS, "Invalid params: 'session_id' is required.")
            return await self._sessions.close(params["session_id"])
        if method == "tools/list":
            sid = params.get("session_id")
            tools = self._discovery() if sid is None else self._sessions.get(sid).tools()
            return {"tools": tools}
        if method == "tools/call":
            return await self._call(params)
        raise _RpcError(METHOD_NOT_FOUND, f"Method not found: {method}.")

    async def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str) or not name:
            raise _RpcError(INVALID_PARAMS, "Invalid params: 'name' (the tool) is required.")
        sid = params.get("session_id")
        if sid is None:
            raise _RpcError(
                SERVER_ERROR,
                "A tool call needs a session with an episode: openenv/session/create, then "
                'reset over /ws?session_id=ID ({"type": "reset", "data": {"task"}}), then '
                "tools/call with its session_id.",
            )
        action = {"type": "call_tool", "tool_name": name, "arguments": params.get("arguments", {})}
        try:
            frame = await self._sessions.get(sid).step(action)
        except ProtocolError as exc:
            code = INVALID_PARAMS if exc.code == VALIDATION_ERROR else SERVER_ERROR
            raise _RpcError(code, exc.message, {"code": exc.code}) from None
        data = frame["data"]
        return {**data["observation"], "done": data["done"], "reward": data["reward"]}


def _error(request_id: Any, exc: _RpcError) -> dict[str, Any]:
    error = {"code": exc.code, "message": exc.message, "data": exc.data}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _route(summary: str, method: str = "get") -> dict[str, Any]:
    return {method: {"summary": summary, "responses": {"200": {"description": "OK"}}}}


def openapi_document(env_name: str) -> dict[str, Any]:
    """What ``GET /openapi.json`` answers: the HTTP routes of this server (production mode)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f'OpenEnv Environment HTTP API: the silo world "{env_name}"',
            "version": OPENAPI_VERSION,
            "description": "Episodes are reset and stepped over the WebSocket /ws (one "
            "episode per session; /ws?session_id=ID joins a session created over /mcp); "
            "tools are called over /ws or /mcp.",
        },
        "paths": {
            "/health": _route("Health check"),
            "/metadata": _route("Environment metadata"),
            "/schema": _route("Action, observation and state JSON schemas"),
            "/mcp": _route("OpenEnv's JSON-RPC: sessions, tools/list, tools/call", "post"),
        },
    }
