"""Slow clients and floods: one deadline per request, a cap on connections.

uvicorn reads the requests of every HTTP server of ``serve`` (MCP, OpenEnv, NeMo Gym). It gives a
request no deadline for its head or its body, and no cap on connections (its
``limit_concurrency`` accepts every connection and answers 503 only once a request has been
read: a client that sends nothing keeps its socket), so half-open connections once used up the
process's files and stopped the server. A :class:`Gate` adds both, before anything reads a
header (the token check included):

* :meth:`Gate.protocol` wraps uvicorn's own protocol (uvicorn's ``http=`` option takes an
  ``asyncio.Protocol`` class: the one place ``serve`` meets asyncio below anyio). A connection
  beyond ``max_connections`` open is answered 503 and closed as soon as it is accepted. Every
  other one must send a request's head and body within ``read_timeout`` seconds of the
  request's first byte (for its first request: of the connection's start), or it is closed.
  Between requests a connection waits under uvicorn's keep-alive timeout instead.
* :meth:`Gate.app` wraps the ASGI app: it tells the gate when a request's body has been read
  (the deadline stops there: a tool call then takes as long as it takes) and closes the
  connection after a response given before the body was read, which nothing would read.

The two halves meet by the client's address: the connection's peer name is what uvicorn puts
in ``scope["client"]``, and one address holds one connection at a time.

Refusals and disconnections are reported on one line a second at most
(:class:`~silo_async._flood.FloodLog`), whatever a flood does; so are asyncio's and uvicorn's
own complaints (:func:`~silo_async._flood.filtering`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import attrs
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._flood import FloodLog, check_limits, filtering
from ._asgi import json_bytes

__all__ = ["Gate", "GuardedProtocol"]

#: Files the process keeps for itself beyond its connections (run directories, logs, imports).
RESERVED_FILES = 64

LOG = logging.getLogger("silo_async.serve")

_Peer = tuple[str, int]


def _refusal(max_connections: int) -> bytes:
    body = json_bytes(
        {
            "error": {
                "code": "too_many_connections",
                "message": f"{max_connections} connections are open, as many as this server "
                "takes (--max-connections). Try again once one has closed.",
            }
        }
    )
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def _peer(transport: asyncio.BaseTransport) -> _Peer | None:
    """The client's ``(host, port)``, as uvicorn puts it in ``scope["client"]``."""
    info = transport.get_extra_info("peername")
    if isinstance(info, tuple | list) and len(info) >= 2:
        return str(info[0]), int(info[1])
    return None


def _has_body(scope: Scope) -> bool:
    for key, value in scope["headers"]:
        if key == b"transfer-encoding" or (key == b"content-length" and value.strip(b"0 ")):
            return True
    return False


class Gate:
    """The read deadline and the connection cap of one HTTP server.

    Args:
        read_timeout: seconds a client has to send a request's head and body.
        max_connections: connections open at once; one more is answered 503 and closed.
        backlog: connections the kernel queues before the server accepts them.
    """

    def __init__(self, read_timeout: float, max_connections: int, backlog: int) -> None:
        check_limits(read_timeout, max_connections)
        self.read_timeout = read_timeout
        self.max_connections = max_connections
        self.backlog = backlog
        self.watches: dict[_Peer, GuardedProtocol] = {}
        self.refusal = _refusal(max_connections)
        self.refused = FloodLog(
            LOG,
            lambda n: (
                f"silo-async serve: refused {_count(n, 'connection')}: "
                f"{max_connections} are open (--max-connections {max_connections})."
            ),
        )
        ms = round(read_timeout * 1000)
        self.dropped = FloodLog(
            LOG,
            lambda n: (
                f"silo-async serve: disconnected {_count(n, 'client')} that did not send "
                f"a whole request within {ms} ms (--read-timeout-ms {ms})."
            ),
        )

    def protocol(self, inner: type[asyncio.Protocol]) -> type[asyncio.Protocol]:
        """The protocol class to give uvicorn (``http=``): ``inner`` behind this gate."""
        return type("Gated", (GuardedProtocol,), {"gate": self, "inner": inner})

    def app(self, app: ASGIApp) -> ASGIApp:
        """``app``, telling this gate when each request has been read."""
        return _Reading(app, self)

    @contextmanager
    def serving(self) -> Iterator[None]:
        """While a server runs behind this gate: files enough for its connections.

        asyncio's and uvicorn's complaints are held to a line a second meanwhile; what the gate
        counted and has not said yet is said at the end.
        """
        self._files_for_connections()
        try:
            with filtering("asyncio", "uvicorn.error"):
                yield
        finally:
            self.refused.flush()
            self.dropped.flush()

    def _files_for_connections(self) -> None:
        """Let the process open enough files for ``max_connections`` (raising its soft limit).

        Beyond the connections themselves, asyncio may accept a whole queue of clients
        (``backlog``) before the first of them is refused: room for those is asked for too, up
        to the hard limit. A limit too low even for the connections is said once: connections
        beyond it then wait in the kernel's queue instead of being refused (and asyncio's
        complaint is held to a line a second by :func:`~silo_async._flood.filtering`).
        """
        try:
            import resource
        except ImportError:  # not POSIX (Windows): no per-process limit to raise
            return
        needed = self.max_connections + RESERVED_FILES
        wanted = needed + self.backlog
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft >= wanted:
            return
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(raised, soft), hard))
        except (ValueError, OSError):
            raised = soft
        if raised < needed:
            LOG.warning(
                "silo-async serve: --max-connections %d needs %d open files and this process "
                "may open %d (ulimit -n): lower --max-connections or raise the limit.",
                self.max_connections,
                needed,
                raised,
            )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


class GuardedProtocol(asyncio.Protocol):
    """uvicorn's protocol for one connection, behind the :class:`Gate` (a subclass names both)."""

    gate: ClassVar[Gate]
    inner: ClassVar[type[asyncio.Protocol]]

    def __init__(self, **uvicorn: Any) -> None:
        self._uvicorn = uvicorn  # config, server_state, app_state, _loop: for the inner protocol
        self._wrapped: asyncio.Protocol | None = None
        self._transport: asyncio.Transport | None = None
        self._peer: _Peer | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._between = False  # the last request was read: the next byte starts the next one

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Refuse the connection beyond the cap; else start its deadline and hand it on."""
        assert isinstance(transport, asyncio.Transport)
        if len(self._uvicorn["server_state"].connections) >= self.gate.max_connections:
            transport.write(self.gate.refusal)
            transport.close()
            self.gate.refused.note()
            return
        self._transport = transport
        self._peer = _peer(transport)
        if self._peer is not None:
            self.gate.watches[self._peer] = self
        self._arm()
        self._wrapped = self.inner(**self._uvicorn)
        self._wrapped.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        """A request's first byte after the last one was read starts its deadline."""
        if self._wrapped is None:
            return
        if self._between:
            self._between = False
            self._arm()
        self._wrapped.data_received(data)
        if self._transport is not None and self._transport.get_protocol() is not self:
            self._let_go()  # upgraded to a WebSocket: its own protocol reads from now on

    def eof_received(self) -> bool | None:
        """As uvicorn's protocol says."""
        return None if self._wrapped is None else self._wrapped.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the deadline; uvicorn's protocol cleans up."""
        self._let_go()
        if self._wrapped is not None:
            self._wrapped.connection_lost(exc)

    def pause_writing(self) -> None:
        """As uvicorn's protocol does."""
        if self._wrapped is not None:
            self._wrapped.pause_writing()

    def resume_writing(self) -> None:
        """As uvicorn's protocol does."""
        if self._wrapped is not None:
            self._wrapped.resume_writing()

    def request_read(self) -> None:
        """The request's body has been read: no deadline until the next request's first byte."""
        self._disarm()
        self._between = True

    def request_started(self) -> None:
        """A request with a body reached the app: it is read under a deadline, running or new.

        Its bytes may all have arrived before the last request was read (nothing then starts
        its deadline in :meth:`data_received`).
        """
        if self._timer is None:
            self._between = False
            self._arm()

    def _arm(self) -> None:
        self._disarm()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.gate.read_timeout, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self._transport is not None and not self._transport.is_closing():
            self.gate.dropped.note()
            self._transport.abort()  # close() would wait on a client that reads nothing

    def _let_go(self) -> None:
        self._disarm()
        if self._peer is not None and self.gate.watches.get(self._peer) is self:
            del self.gate.watches[self._peer]
        self._peer = None


@attrs.define
class _Reading:
    """The ASGI side of the gate: the end of each request's body stops its deadline."""

    app: ASGIApp
    gate: Gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        watch = self.gate.watches.get((client[0], client[1])) if client else None
        if watch is None or scope["type"] != "http" or not _has_body(scope):
            if watch is not None:
                watch.request_read()
            await self.app(scope, receive, send)
            return
        watch.request_started()
        read = False

        async def reading() -> Message:
            nonlocal read
            got = await receive()
            if got["type"] == "http.request" and not got.get("more_body", False):
                read = True
                watch.request_read()
            return got

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and not read:
                # Answered before its body was read (refused, not found): close after the
                # answer rather than wait for a body nothing reads, which a slow client could
                # send forever.
                headers = [*message.get("headers", ()), (b"connection", b"close")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, reading, sending)
