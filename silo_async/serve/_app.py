"""The HTTP surface of ``silo-async serve --transport http``: access checks, then routes.

* ``POST /episodes`` ``{"task": ...}`` -> ``201 {"id", "task", "url"}`` (a fresh world; 503
  ``capacity_reached`` when ``--max-episodes`` are open); ``GET /episodes?limit=&after=`` ->
  ``{"episodes": [{"id", "task", "status", "runId"}...], "next"}``, a page in opening order.
* ``GET /episodes/<id>`` -> ``{"id", "task", "status", "result", "runId"}``;
  ``POST /episodes/<id>/finish`` ``{"answer": "..."}`` -> the same object, finished.
* ``/episodes/<id>/mcp``: that episode's streamable-HTTP MCP endpoint.

Every request passes :class:`~._access.Access` first (Host, Origin, token). Errors are
``{"error": {"code", "message"}}``. Routing is Starlette's: a hand-written router measured no
faster (bench_mcp's server CPU per call). A class instance, not a function, so ASGI servers
call it as an app.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, Router
from starlette.types import Receive, Scope, Send

from .._errors import SiloError
from .._schema import json_kind
from ._access import Access
from ._asgi import BodyTooLargeError, json_bytes, read_body, send_json
from ._host import CapacityReachedError, EpisodeFailedError, EpisodeHost, Finished, Hosted

__all__ = ["DEFAULT_PAGE", "ServeApp"]

#: Largest JSON body the episode routes read (a task id, an answer).
MAX_BODY = 1024 * 1024
#: Episodes per page of ``GET /episodes`` unless ``limit`` says otherwise.
DEFAULT_PAGE = 100


class _HttpError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error_body(code: str, message: str) -> bytes:
    return json_bytes({"error": {"code": code, "message": message}})


#: Every method reaches the JSON routes, which answer 405 themselves (in JSON, as every error).
_ANY = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

_Handler = Callable[[Request], Awaitable[tuple[int, bytes]]]


def _json_route(methods: str, handler: _Handler) -> Callable[[Request], Awaitable[Response]]:
    """A Starlette endpoint answering JSON: ``handler``'s body, or the error it raised."""
    allowed = frozenset(methods.split(", "))

    async def endpoint(request: Request) -> Response:
        try:
            if request.method not in allowed:
                raise _HttpError(405, "method_not_allowed", f"This route accepts {methods}.")
            status, body = await handler(request)
        except _HttpError as exc:
            status, body = exc.status, _error_body(exc.code, exc.message)
        return Response(body, status, media_type="application/json")

    return endpoint


class _McpEndpoint:
    """``/episodes/<id>/mcp``: hands the request to that episode's MCP session manager."""

    def __init__(self, app: ServeApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            hosted = self._app.episode(scope["path_params"]["id"])
        except _HttpError as exc:
            await send_json(send, _error_body(exc.code, exc.message), exc.status)
            return
        await hosted.serve(scope, receive, send)


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    message = (
        f"No route {scope.get('method', '')} {scope['path']}; routes: POST/GET /episodes, "
        "GET /episodes/<id>, POST /episodes/<id>/finish, /episodes/<id>/mcp."
    )
    await send_json(send, _error_body("not_found", message), 404)


class ServeApp:
    """Checks access, then routes requests to the episode host and each episode's endpoint.

    Args:
        host: the episodes.
        access: the Host, Origin and token checks every request passes first.
        default_task: the task ``POST /episodes`` opens when the body names none.
    """

    def __init__(self, host: EpisodeHost, *, access: Access, default_task: str) -> None:
        self._host = host
        self._access = access
        self._default_task = default_task
        self._router = Router(
            routes=[
                # The MCP endpoint first: it is the route every tool call takes.
                Route("/episodes/{id}/mcp", _McpEndpoint(self)),
                Route("/episodes", _json_route("GET, POST", self._episodes), methods=_ANY),
                Route("/episodes/{id}", _json_route("GET", self._status), methods=_ANY),
                Route("/episodes/{id}/finish", _json_route("POST", self._finish), methods=_ANY),
            ],
            default=_not_found,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request."""
        if scope["type"] != "http":  # no lifespan, no websockets
            return
        refused = self._access.refusal(scope)
        if refused is not None:
            headers = {"WWW-Authenticate": "Bearer"} if refused.status == 401 else None
            body = _error_body(refused.code, refused.message)
            await send_json(send, body, refused.status, headers)
            return
        await self._router(scope, receive, send)

    def episode(self, episode_id: str) -> Hosted | Finished:
        """The episode with this id.

        Raises:
            _HttpError: 404 ``episode_not_found`` (naming no other episode: ids are
                capabilities).
        """
        hosted = self._host.get(episode_id)
        if hosted is None:
            raise _HttpError(
                404,
                "episode_not_found",
                f'Episode "{episode_id}" was not found on this server. Open one with '
                "POST /episodes; GET /episodes lists them.",
            )
        return hosted

    async def _episodes(self, request: Request) -> tuple[int, bytes]:
        if request.method == "POST":
            return await self._open(await _json_body(request.receive))
        limit, after = _page_query(request)
        if after is not None and self._host.get(after) is None:
            raise _HttpError(400, "invalid_input", f'"after" names no episode ("{after}").')
        listed, following = self._host.page(limit, after)
        return 200, json_bytes({"episodes": listed, "next": following})

    async def _status(self, request: Request) -> tuple[int, bytes]:
        return 200, self.episode(request.path_params["id"]).status()

    async def _finish(self, request: Request) -> tuple[int, bytes]:
        hosted = self.episode(request.path_params["id"])
        body = await _json_body(request.receive)
        answer = body.get("answer")
        if not isinstance(answer, str):
            given = f"received {json_kind(answer)}" if "answer" in body else "none was given"
            raise _HttpError(
                400,
                "invalid_input",
                f'"answer" must be a string (the final answer, as submit takes it); {given}. '
                "The episode is still open.",
            )
        try:
            return 200, await hosted.finish(answer)
        except EpisodeFailedError as exc:
            raise _HttpError(500, "internal_error", str(exc)) from None

    async def _open(self, body: dict[str, Any]) -> tuple[int, bytes]:
        task_id = body.get("task", self._default_task)
        if not isinstance(task_id, str):
            raise _HttpError(400, "invalid_input", '"task" must be a task id (a string).')
        try:
            hosted = await self._host.open(task_id)
        except SiloError as exc:
            status = 404 if exc.code == "task_not_found" else 400
            raise _HttpError(status, exc.code, exc.message) from None
        except CapacityReachedError as exc:
            raise _HttpError(503, "capacity_reached", str(exc)) from None
        except EpisodeFailedError as exc:
            raise _HttpError(500, "internal_error", str(exc)) from None
        except RuntimeError as exc:
            raise _HttpError(503, "shutting_down", str(exc)) from None
        return 201, json_bytes(hosted.summary())


def _page_query(request: Request) -> tuple[int, str | None]:
    """``limit`` (a positive integer, default :data:`DEFAULT_PAGE`) and ``after``."""
    params = request.query_params
    raw = params.get("limit")
    limit = DEFAULT_PAGE
    if raw is not None:
        if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
            raise _HttpError(
                400, "invalid_input", f'"limit" must be a positive integer, received "{raw}".'
            )
        limit = int(raw)
    after = params.get("after")
    if after == "":
        raise _HttpError(400, "invalid_input", '"after" must be an episode id.')
    return limit, after


async def _json_body(receive: Receive) -> dict[str, Any]:
    """The request's JSON object body; an empty body is ``{}``."""
    try:
        raw = await read_body(receive, MAX_BODY)
    except BodyTooLargeError:
        raise _HttpError(413, "invalid_input", f"The body is over {MAX_BODY} bytes.") from None
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except RecursionError:
        raise _HttpError(400, "invalid_json", "The body nests too deeply to be read.") from None
    except ValueError as exc:
        raise _HttpError(400, "invalid_json", f"The body is not JSON: {exc}.") from None
    if not isinstance(value, dict):
        raise _HttpError(400, "invalid_input", "The body must be a JSON object.")
    return value
