"""``ScriptedModelServer``: a loopback model server that answers from a script.

It speaks OpenAI Chat Completions (``POST .../chat/completions``), OpenAI Responses
(``POST .../responses``) and Anthropic Messages (``POST .../messages``) well enough for the
official SDKs, so a model loop (ours, or yours) is
tested end to end offline: real SDK, real HTTP, real retries, scripted model. The server runs
on its own event loop in a background thread, so the same object serves sync tests, asyncio
and trio tests alike, and a slow script never blocks the loop under test.

Like every HTTP server of silo_async it gives a client ``read_timeout``
seconds to send each request (:mod:`._http1`), keeps at most ``max_connections`` open (one more
is answered 503 and closed at once), reports both on one line a second at most, and answers
what it cannot read with a 4xx: nothing a client sends stops it. ``history=False`` (what
``silo-async scripted-model`` runs) keeps counts only, so a long-lived server stays small.

Example::

    from silo_async import agents
    from silo_async.testing import Reply, ScriptedModelServer, ToolCall

    script = [Reply(tool_calls=[ToolCall("get_customer", {"customerId": "CUS-001"})]),
              Reply(text="Acme Industrial")]
    with ScriptedModelServer(script) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url)
        result = await silo.run(env, "TASK-001", agent)
    server.requests[1].last_results  # what the model was told the tool returned
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
import anyio.from_thread

from .._flood import DEFAULT_MAX_CONNECTIONS, DEFAULT_READ_TIMEOUT, FloodLog, check_limits
from .._jsonutil import compact_json, utf8
from ._http1 import BadRequestError, Request, RequestReader, TooSlowError, response_bytes
from ._model_script import ErrorReply, ModelRequest, Reply, Script, Step, error_body, render

__all__ = ["ScriptedModelServer"]

_ENDS = (("/chat/completions", "chat"), ("/responses", "responses"), ("/messages", "messages"))
_NO_RETRY = {"x-should-retry": "false"}
_Response = tuple[int, dict[str, Any], Mapping[str, str]]
#: What ``_next`` gives when a list script has no reply left.
_EXHAUSTED: Any = object()
#: Seconds a keep-alive connection may wait for its next request (an agent runs tools between
#: two model calls; the SDKs' pools reuse connections).
KEEP_ALIVE_S = 120.0
#: Seconds between two tries to accept when the process is out of files.
_ACCEPT_RETRY_S = 0.1

LOG = logging.getLogger("silo_async.testing")


class ScriptedModelServer:
    """A Chat Completions + Responses + Messages server on 127.0.0.1 that replies from a script.

    Args:
        script: the replies in order (each request takes the next one: retries included), or
            a function ``(ModelRequest) -> reply`` called for every request, which can follow
            many concurrent conversations by their content (``request.turn``,
            ``request.task``, ``request.last_results``). A reply is a :class:`Reply`, an
            :class:`ErrorReply` (an HTTP error, e.g. 429), a ``str`` (a text answer) or a
            ``dict`` (a raw JSON body, sent as-is).
        host: the loopback address to bind.
        port: the port (0: a free one).
        history: keep every request (:attr:`requests`) and every error of the script
            (:attr:`errors`); ``False`` keeps the first error and counts only, for a server
            that answers requests for days.
        read_timeout: seconds a client has to send a request's head and body (from its first
            byte; a connection's first request from its start), else it is disconnected.
        max_connections: connections open at once; one more is answered 503 and closed.

    Attributes:
        errors: exceptions raised by a script function (each answered with a 500); the first
            is re-raised when the ``with`` block exits without an error of its own.

    Use it as ``with`` or ``async with`` (or :meth:`start` / :meth:`stop`). When a list script
    runs out, requests get a 500 that the SDKs do not retry, whose message says so.

    Raises:
        ValueError: ``read_timeout`` not above 0 or ``max_connections`` below 1.
    """

    def __init__(
        self,
        script: Script,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        history: bool = True,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        check_limits(read_timeout, max_connections)
        self._script = script if callable(script) else list(script)
        self._host = host
        self._port = port
        self._history = history
        self._read_timeout = read_timeout
        self._max_connections = max_connections
        self._requests: list[ModelRequest] = []
        self._served = 0
        self._failed = 0
        self._open = 0
        self._lock = threading.Lock()
        self.errors: list[Exception] = []
        self._portal_cm: contextlib.AbstractContextManager[anyio.from_thread.BlockingPortal]
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._scope: anyio.CancelScope | None = None
        self._refused = FloodLog(
            LOG,
            lambda n: (
                f"scripted model: refused {n:,} connection(s): {max_connections} are "
                f"open (--max-connections {max_connections})."
            ),
        )
        ms = round(read_timeout * 1000)
        self._dropped = FloodLog(
            LOG,
            lambda n: (
                f"scripted model: disconnected {n:,} client(s) that did not send a whole "
                f"request within {ms} ms (--read-timeout-ms {ms})."
            ),
        )
        self._starved = FloodLog(
            LOG,
            lambda n: (
                f"scripted model: could not accept a connection {n:,} time(s): the "
                "process has no file left (ulimit -n); lower --max-connections."
            ),
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the ``base_url`` for Anthropic clients."""
        if self._portal is None:
            raise RuntimeError("ScriptedModelServer is not running; use it in a with block.")
        return f"http://{self._host}:{self._port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the ``base_url`` for OpenAI-compatible clients.

        Requests are routed by their path's end, so either URL works with either SDK.
        """
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[ModelRequest]:
        """The requests received so far, in arrival order (a copy; empty without history)."""
        with self._lock:
            return list(self._requests)

    @property
    def served(self) -> int:
        """How many requests reached the script (with or without history)."""
        return self._served

    @property
    def failed(self) -> int:
        """How many times the script raised (with or without history)."""
        return self._failed

    def start(self) -> Self:
        """Start serving in a background thread; returns once the port is bound."""
        if self._portal is not None:
            raise RuntimeError("ScriptedModelServer is already running.")
        cm = anyio.from_thread.start_blocking_portal(name="ScriptedModelServer")
        portal = cm.__enter__()
        try:
            _, self._port = portal.start_task(self._serve)
        except BaseException:
            cm.__exit__(None, None, None)
            raise
        self._portal_cm, self._portal = cm, portal
        return self

    def stop(self) -> None:
        """Stop serving and join the thread (open connections are closed)."""
        portal, self._portal = self._portal, None
        if portal is None:
            return
        if self._scope is not None:
            portal.call(self._scope.cancel)
        self._portal_cm.__exit__(None, None, None)
        for log in (self._refused, self._dropped, self._starved):
            log.flush()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        if kind is None and self.errors:
            raise self.errors[0]

    async def __aenter__(self) -> Self:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.stop)
        if kind is None and self.errors:
            raise self.errors[0]

    async def _serve(self, *, task_status: anyio.abc.TaskStatus[int]) -> None:
        listener = await anyio.create_tcp_listener(local_host=self._host, local_port=self._port)
        with anyio.CancelScope() as self._scope:
            async with listener, anyio.create_task_group() as group:
                for one in listener.listeners:  # one per address the host name has
                    assert isinstance(one, anyio.abc.SocketListener)  # what TCP listens with
                    group.start_soon(self._accept, one, group)
                task_status.started(listener.extra(anyio.abc.SocketAttribute.local_port))

    async def _accept(self, listener: anyio.abc.SocketListener, group: anyio.abc.TaskGroup) -> None:
        """Accept connections for ever: one beyond the cap is refused, each other served."""
        while True:
            try:
                stream = await listener.accept()
            except OSError:  # out of files: the client waits in the kernel's queue meanwhile
                self._starved.note()
                await anyio.sleep(_ACCEPT_RETRY_S)
                continue
            if self._open >= self._max_connections:
                group.start_soon(self._refuse, stream)
            else:
                self._open += 1
                group.start_soon(self._connection, stream)

    async def _refuse(self, stream: anyio.abc.SocketStream) -> None:
        self._refused.note()
        message = (
            f"{self._max_connections} connections are open, as many as this server takes "
            "(--max-connections). Try again once one has closed."
        )
        body = utf8(compact_json(error_body("chat", 503, message)))
        async with stream:
            with contextlib.suppress(anyio.BrokenResourceError), anyio.move_on_after(1):
                await stream.send(response_bytes(503, body, close=True))

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        try:
            async with stream:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await self._exchanges(stream)
        finally:
            self._open -= 1

    async def _exchanges(self, stream: anyio.abc.SocketStream) -> None:
        """Serve the requests of one keep-alive connection until either side ends it."""
        reader = RequestReader(stream)
        idle: float | None = None  # the first request's deadline runs from the connection's start
        while True:
            try:
                request = await reader.next(idle=idle, deadline=self._read_timeout)
            except TooSlowError:
                self._dropped.note()
                return
            except BadRequestError as exc:
                body = utf8(compact_json(error_body("chat", exc.status, exc.message)))
                await stream.send(response_bytes(exc.status, body, _NO_RETRY, close=True))
                return
            if request is None:
                return
            status, payload, extra = self._respond(request)
            body = utf8(compact_json(payload))
            close = not request.keep_alive
            await stream.send(response_bytes(status, body, extra, close=close))
            if close:
                return
            idle = KEEP_ALIVE_S

    def _respond(self, request: Request) -> _Response:
        method, path = request.method, request.path
        protocol = next((p for end, p in _ENDS if path.split("?")[0].endswith(end)), None)
        if method != "POST" or protocol is None:
            message = (
                "ScriptedModelServer serves POST .../chat/completions, .../responses and "
                ".../messages, "
                f"not {method} {path}."
            )
            return 404, error_body("chat", 404, message), _NO_RETRY
        try:
            body = json.loads(request.body or b"{}")
        except (ValueError, RecursionError):
            return 400, error_body(protocol, 400, "The body is not JSON."), _NO_RETRY
        if not isinstance(body, dict):
            return 400, error_body(protocol, 400, "The body must be a JSON object."), _NO_RETRY
        with self._lock:
            seen = ModelRequest(self._served, protocol, path, dict(request.headers), body)
            self._served += 1
            if self._history:
                self._requests.append(seen)
        try:
            return self._answer(seen, self._next(seen))
        except Exception as exc:  # a reply nothing can render (a broken script)
            self._failure(exc)
            text = f"ScriptedModelServer: the reply cannot be sent: {type(exc).__name__}: {exc}"
            return 500, error_body(protocol, 500, text), _NO_RETRY

    def _failure(self, exc: Exception) -> None:
        with self._lock:
            self._failed += 1
            if self._history or not self.errors:
                self.errors.append(exc)

    def _next(self, request: ModelRequest) -> Step | Exception:
        script = self._script
        if isinstance(script, list):
            with self._lock:
                return script.pop(0) if script else _EXHAUSTED
        try:
            return script(request)
        except Exception as exc:  # a broken script: answer, and report it at exit
            self._failure(exc)
            return exc

    def _answer(self, request: ModelRequest, step: Step | Exception) -> _Response:
        protocol = request.protocol
        if step is _EXHAUSTED:
            text = f"ScriptedModelServer: the script has no reply left (request {request.index})."
            return 500, error_body(protocol, 500, text), _NO_RETRY
        if isinstance(step, Exception):
            text = f"ScriptedModelServer: the script raised {type(step).__name__}: {step}"
            return 500, error_body(protocol, 500, text), _NO_RETRY
        if isinstance(step, ErrorReply):
            extra = dict(step.headers)
            if step.retry_after_ms is not None:
                extra.setdefault("retry-after-ms", str(step.retry_after_ms))
            return step.status, error_body(protocol, step.status, step.message), extra
        if isinstance(step, dict):
            return 200, step, {}
        reply = Reply(text=step) if isinstance(step, str) else step
        return 200, render(reply, request, request.index), {}
