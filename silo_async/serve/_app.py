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

from starlette.types import Receive, Scope, Send

from .._errors import SiloError
from ._asgi import BodyTooLarge, json_bytes, read_body, send_json
from ._host import EpisodeHost, Finished, Hosted

__all__ = ["LOOPBACK_NAMES", "ServeApp"]

#: Host names a loopback server answers to (anything else is a DNS-rebinding attempt).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

#: Largest JSON body the episode routes read (a task id, an answer).
MAX_BODY = 1024 * 1024


class _HttpError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


#: What a route answers: a status and a JSON body, already encoded.
_Answer = tuple[int, bytes]

#: The request headers the access checks read.
_CHECKED = frozenset((b"authorization", b"host", b"origin"))


def _error_body(exc: _HttpError) -> bytes:
    return json_bytes({"error": {"code": exc.code, "message": exc.message}})


def _checked_headers(scope: Scope) -> dict[bytes, bytes]:
    """The first ``authorization``, ``host`` and ``origin`` headers, in one pass."""
    found: dict[bytes, bytes] = {}
    for key, value in scope["headers"]:
        if key in _CHECKED and key not in found:
            found[key] = value
    return found


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
        headers = None
        try:
            self._check_access(scope)
            parts = [p for p in scope["path"].split("/") if p]
            if len(parts) == 3 and parts[0] == "episodes" and parts[2] == "mcp":
                await self._episode(parts[1]).serve(scope, receive, send)
                return
            status, body = await self._route(scope, receive, parts)
        except _HttpError as exc:
            status, body = exc.status, _error_body(exc)
            headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        await send_json(send, body, status, headers)

    def _check_access(self, scope: Scope) -> None:
        found = _checked_headers(scope)
        given = found.get(b"authorization", b"")
        if self._auth is not None and not hmac.compare_digest(given, self._auth):
            raise _HttpError(
                401,
                "unauthorized",
                "This server needs the header 'Authorization: Bearer <token>' "
                "(the token it was started with: --token or SILO_SERVE_TOKEN).",
            )
        if not self._loopback:
            return
        host, origin = found.get(b"host"), found.get(b"origin")
        if host is not None and not _is_loopback_authority(host.decode("latin-1")):
            shown = host.decode("latin-1")
            raise _HttpError(421, "host_not_allowed", f'Host "{shown}" is not this server.')
        if origin is not None:
            shown = origin.decode("latin-1")
            if not _is_loopback_authority(shown.partition("://")[2]):
                raise _HttpError(403, "origin_not_allowed", f'Origin "{shown}" may not call this.')

    async def _route(self, scope: Scope, receive: Receive, parts: list[str]) -> _Answer:
        method = scope["method"]
        if parts == ["episodes"]:
            if method == "POST":
                return await self._open(await _json_body(receive))
            if method == "GET":
                listed = b",".join(h.status() for h in self._host.all())
                return 200, b'{"episodes":[' + listed + b"]}"
            raise _method_not_allowed("GET, POST")
        if len(parts) == 2 and parts[0] == "episodes":
            if method != "GET":
                raise _method_not_allowed("GET")
            return 200, self._episode(parts[1]).status()
        if len(parts) == 3 and parts[0] == "episodes" and parts[2] == "finish":
            if method != "POST":
                raise _method_not_allowed("POST")
            hosted = self._episode(parts[1])
            return 200, await hosted.finish((await _json_body(receive)).get("answer"))
        raise _HttpError(
            404,
            "not_found",
            f"No route {method} {scope['path']}; routes: POST/GET /episodes, GET /episodes/<id>, "
            "POST /episodes/<id>/finish, /episodes/<id>/mcp.",
        )

    def _episode(self, episode_id: str) -> Hosted | Finished:
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

    async def _open(self, body: dict[str, Any]) -> _Answer:
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
        return 201, json_bytes(hosted.summary())


def _method_not_allowed(allowed: str) -> _HttpError:
    return _HttpError(405, "method_not_allowed", f"This route accepts {allowed}.")


async def _json_body(receive: Receive) -> dict[str, Any]:
    """The request's JSON object body; an empty body is ``{}``."""
    try:
        raw = await read_body(receive, MAX_BODY)
    except BodyTooLarge:
        raise _HttpError(413, "invalid_input", f"The body is over {MAX_BODY} bytes.") from None
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise _HttpError(400, "invalid_json", f"The body is not JSON: {exc}.") from None
    if not isinstance(value, dict):
        raise _HttpError(400, "invalid_input", "The body must be a JSON object.")
    return value
