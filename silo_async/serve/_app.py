"""The HTTP surface of ``silo-async serve --transport http``: a small ASGI app.

* ``POST /episodes`` ``{"task": ...}`` -> ``201 {"id", "task", "url"}`` (a fresh world);
  ``GET /episodes`` lists them.
* ``GET /episodes/<id>`` -> ``{"id", "task", "status", "result", "runId"}``;
  ``POST /episodes/<id>/finish`` ``{"answer": ...}`` -> the same object, finished.
* ``/episodes/<id>/mcp``: that episode's streamable-HTTP MCP endpoint.

Errors are ``{"error": {"code", "message"}}``: 404 ``episode_not_found`` / ``task_not_found``,
401 ``unauthorized`` without the bearer token. A class instance, not a function, so ASGI
servers call it as an app.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from .._errors import SiloError
from ._host import EpisodeHost, Hosted

__all__ = ["LOOPBACK_NAMES", "ServeApp"]

#: Host names a loopback server answers to (anything else is a DNS-rebinding attempt).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

#: Largest JSON body the episode routes read (a task id, an answer).
MAX_BODY = 1024 * 1024


class _HttpError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error_response(status: int, code: str, message: str) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _is_loopback_authority(value: str) -> bool:
    host = value if value.endswith("]") else value.rsplit(":", 1)[0]
    return host in LOOPBACK_NAMES


class ServeApp:
    """Routes requests to the episode host and to each episode's MCP endpoint.

    Args:
        host: the episodes.
        token: when set, every request needs ``Authorization: Bearer <token>``.
        default_task: the task ``POST /episodes`` opens when the body names none.
        loopback: the server listens on loopback only: refuse other Host and Origin headers,
            so a web page cannot reach it through DNS rebinding.
    """

    def __init__(
        self, host: EpisodeHost, *, token: str | None, default_task: str, loopback: bool
    ) -> None:
        self._host = host
        self._auth = f"Bearer {token}".encode() if token else None
        self._default_task = default_task
        self._loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request."""
        if scope["type"] != "http":
            return
        try:
            self._check_access(scope)
            parts = [p for p in scope["path"].split("/") if p]
            if len(parts) == 3 and parts[0] == "episodes" and parts[2] == "mcp":
                await self._episode(parts[1]).manager.handle_request(scope, receive, send)
                return
            response = await self._route(scope, receive, parts)
        except _HttpError as exc:
            response = _error_response(exc.status, exc.code, exc.message)
        await response(scope, receive, send)

    def _check_access(self, scope: Scope) -> None:
        if self._auth is not None:
            given = _header(scope, b"authorization") or ""
            if not hmac.compare_digest(given.encode("latin-1"), self._auth):
                raise _HttpError(
                    401,
                    "unauthorized",
                    "This server needs the header 'Authorization: Bearer <token>' "
                    "(the token it was started with: --token or SILO_SERVE_TOKEN).",
                )
        if not self._loopback:
            return
        host, origin = _header(scope, b"host"), _header(scope, b"origin")
        if host is not None and not _is_loopback_authority(host):
            raise _HttpError(421, "host_not_allowed", f'Host "{host}" is not this server.')
        if origin is not None and not _is_loopback_authority(origin.partition("://")[2]):
            raise _HttpError(403, "origin_not_allowed", f'Origin "{origin}" may not call this.')

    async def _route(self, scope: Scope, receive: Receive, parts: list[str]) -> JSONResponse:
        method = scope["method"]
        if parts == ["episodes"]:
            if method == "POST":
                return await self._open(await _json_body(receive))
            if method == "GET":
                return JSONResponse({"episodes": [h.status() for h in self._host.all()]})
            raise _method_not_allowed("GET, POST")
        if len(parts) == 2 and parts[0] == "episodes":
            if method != "GET":
                raise _method_not_allowed("GET")
            return JSONResponse(self._episode(parts[1]).status())
        if len(parts) == 3 and parts[0] == "episodes" and parts[2] == "finish":
            if method != "POST":
                raise _method_not_allowed("POST")
            return await self._finish(self._episode(parts[1]), await _json_body(receive))
        raise _HttpError(
            404,
            "not_found",
            f"No route {method} {scope['path']}; routes: POST/GET /episodes, GET /episodes/<id>, "
            "POST /episodes/<id>/finish, /episodes/<id>/mcp.",
        )

    def _episode(self, episode_id: str) -> Hosted:
        hosted = self._host.get(episode_id)
        if hosted is None:
            known = ", ".join(h.id for h in self._host.all()) or "none"
            raise _HttpError(
                404,
                "episode_not_found",
                f'Episode "{episode_id}" was not found on this server. Open episodes with '
                f"POST /episodes; existing ids: {known}.",
            )
        return hosted

    async def _open(self, body: dict[str, Any]) -> JSONResponse:
        task_id = body.get("task", self._default_task)
        if not isinstance(task_id, str):
            raise _HttpError(400, "invalid_input", '"task" must be a task id (a string).')
        try:
            hosted = await self._host.open(task_id)
        except SiloError as exc:
            status = 404 if exc.code == "task_not_found" else 400
            raise _HttpError(status, exc.code, exc.message) from None
        except RuntimeError as exc:
            raise _HttpError(503, "shutting_down", str(exc)) from None
        return JSONResponse(hosted.summary(), 201)

    async def _finish(self, hosted: Hosted, body: dict[str, Any]) -> JSONResponse:
        await hosted.episode.finish(body.get("answer"))
        return JSONResponse(hosted.status())


def _method_not_allowed(allowed: str) -> _HttpError:
    return _HttpError(405, "method_not_allowed", f"This route accepts {allowed}.")


async def _json_body(receive: Receive) -> dict[str, Any]:
    """The request's JSON object body; an empty body is ``{}``."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise _HttpError(413, "invalid_input", f"The body is over {MAX_BODY} bytes.")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise _HttpError(400, "invalid_json", f"The body is not JSON: {exc}.") from None
    if not isinstance(value, dict):
        raise _HttpError(400, "invalid_input", "The body must be a JSON object.")
    return value
