"""``ScriptedModelServer``: a loopback model server that answers from a script.

It speaks OpenAI Chat Completions (``POST .../chat/completions``) and Anthropic Messages
(``POST .../messages``) well enough for the official SDKs, so a model loop (ours, or yours) is
tested end to end offline: real SDK, real HTTP, real retries, scripted model. The server runs
on its own event loop in a background thread, so the same object serves sync tests, asyncio
and trio tests alike, and a slow script never blocks the loop under test.

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
import http
import json
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
import anyio.from_thread
from anyio.streams.buffered import BufferedByteReceiveStream

from ._model_script import ErrorReply, ModelRequest, Reply, Script, Step, error_body, render

__all__ = ["ScriptedModelServer"]

_MAX_HEAD = 64 * 1024
_ENDS = (("/chat/completions", "chat"), ("/messages", "messages"))
_NO_RETRY = {"x-should-retry": "false"}
_Response = tuple[int, dict[str, Any], Mapping[str, str]]
#: What ``_next`` gives when a list script has no reply left.
_EXHAUSTED: Any = object()


class ScriptedModelServer:
    """A Chat Completions + Messages server on 127.0.0.1 that replies from a script.

    Args:
        script: the replies in order (each request takes the next one: retries included), or
            a function ``(ModelRequest) -> reply`` called for every request, which can follow
            many concurrent conversations by their content (``request.turn``,
            ``request.task``, ``request.last_results``). A reply is a :class:`Reply`, an
            :class:`ErrorReply` (an HTTP error, e.g. 429), a ``str`` (a text answer) or a
            ``dict`` (a raw JSON body, sent as-is).
        host: the loopback address to bind.
        port: the port (0: a free one).

    Attributes:
        errors: exceptions raised by a script function (each answered with a 500); the first
            is re-raised when the ``with`` block exits without an error of its own.

    Use it as ``with`` or ``async with`` (or :meth:`start` / :meth:`stop`). When a list script
    runs out, requests get a 500 that the SDKs do not retry, whose message says so.
    """

    def __init__(self, script: Script, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._script = script if callable(script) else list(script)
        self._host = host
        self._port = port
        self._requests: list[ModelRequest] = []
        self._lock = threading.Lock()
        self.errors: list[Exception] = []
        self._portal_cm: contextlib.AbstractContextManager[anyio.from_thread.BlockingPortal]
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._scope: anyio.CancelScope | None = None

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
        """The requests received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

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
            async with listener:
                task_status.started(listener.extra(anyio.abc.SocketAttribute.local_port))
                await listener.serve(self._connection)

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            reader = BufferedByteReceiveStream(stream)
            with contextlib.suppress(
                anyio.EndOfStream,
                anyio.IncompleteRead,
                anyio.DelimiterNotFound,
                anyio.BrokenResourceError,
                anyio.ClosedResourceError,
            ):
                while await self._exchange(reader, stream):
                    pass

    async def _exchange(
        self, reader: BufferedByteReceiveStream, stream: anyio.abc.SocketStream
    ) -> bool:
        """Serve one request of a keep-alive connection; False once the client wants it closed."""
        head = (await reader.receive_until(b"\r\n\r\n", _MAX_HEAD)).decode("latin-1")
        request_line, *lines = head.split("\r\n")
        method, _, rest = request_line.partition(" ")
        path = rest.rpartition(" ")[0] or rest
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.receive_exactly(int(headers.get("content-length") or 0))
        status, payload, extra = self._respond(method, path, headers, body)
        data = json.dumps(payload).encode()
        out = [f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}"]
        out += ["content-type: application/json", f"content-length: {len(data)}"]
        out += [f"{k}: {v}" for k, v in extra.items()]
        await stream.send("\r\n".join(out).encode("latin-1") + b"\r\n\r\n" + data)
        return headers.get("connection", "").lower() != "close"

    def _respond(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> _Response:
        protocol = next((p for end, p in _ENDS if path.split("?")[0].endswith(end)), None)
        if method != "POST" or protocol is None:
            message = (
                "ScriptedModelServer serves POST .../chat/completions and .../messages, "
                f"not {method} {path}."
            )
            return 404, error_body("chat", 404, message), _NO_RETRY
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return 400, error_body(protocol, 400, "The body is not JSON."), _NO_RETRY
        with self._lock:
            request = ModelRequest(len(self._requests), protocol, path, headers, body)
            self._requests.append(request)
        return self._answer(request, self._next(request))

    def _next(self, request: ModelRequest) -> Step | Exception:
        script = self._script
        if isinstance(script, list):
            with self._lock:
                return script.pop(0) if script else _EXHAUSTED
        try:
            return script(request)
        except Exception as exc:  # a broken script: answer, and report it at exit
            self.errors.append(exc)
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
