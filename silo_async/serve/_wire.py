r"""The stdio wire: one JSON-RPC message per line on stdin and stdout, every line answered.

The ``mcp`` SDK's own stdio transport hands an unparseable line to the server as an exception,
which answers nothing: the client waits for its own timeout. It also reads stdin in a worker
thread, which no signal can interrupt while the client keeps stdin open. This wire:

* answers every line it cannot take with a JSON-RPC error: ``-32700``
  for bytes that are not UTF-8 JSON (also truncated or too deep), ``-32600`` for JSON that is
  not one message (``[]``, an object ``id``); ``id`` is the request's when it has a valid one,
  else ``null``. Requests among bad lines are served as usual;
* reads stdin without a thread (waiting until it is readable), so cancelling the wire stops it
  at once;
* writes any string the server sends (a lone surrogate becomes its ``\uXXXX`` escape);
* keeps the requests not yet answered, so a shutdown can let them be answered first
  (:meth:`StdioWire.settle`).

While it runs, fd 0 reads the null device and fd 1 writes to stderr: a tool that prints cannot
corrupt the wire; both are restored at the end.
"""

from __future__ import annotations

import json
import os
import sys
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from .._jsonutil import utf8

__all__ = ["MAX_LINE", "NOT_ONE_MESSAGE", "Refused", "StdioWire", "parse_line"]

#: The longest line read; a longer one is refused (-32700) and skipped.
MAX_LINE = 4 * 1024 * 1024
_CHUNK = 64 * 1024
#: What answers JSON that is not one JSON-RPC message, on every transport (``-32600``).
NOT_ONE_MESSAGE = "Invalid request: not one JSON-RPC 2.0 message (a batch, or a missing field)."


class Refused(SessionMessage):
    """The JSON-RPC error that answers a line the server never sees."""


def _error(code: int, message: str, request_id: Any = None) -> Refused:
    valid = type(request_id) is int or type(request_id) is str
    error = types.ErrorData(code=code, message=message)
    return Refused(types.JSONRPCError(jsonrpc="2.0", id=request_id if valid else None, error=error))


def parse_line(line: bytes) -> SessionMessage:
    """The message on ``line`` for the server, or the :class:`Refused` error answering it."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:  # pydantic's ValidationError included
        return _slow_parse(line)
    if isinstance(message, types.JSONRPCNotification) and b'"id"' in line:
        return _slow_parse(line)  # maybe a request whose id is not an id
    return SessionMessage(message)


def _slow_parse(line: bytes) -> SessionMessage:
    r"""What the fast parser refused (or could not judge): a message after all, or an error.

    pydantic's JSON parser refuses a lone surrogate escape (``"\ud800"``), which ``json``
    reads; a notification-shaped object with an ``id`` member is a request whose id is not a
    string or an integer.
    """
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return _error(types.PARSE_ERROR, "Parse error: the line is not UTF-8.")
    except (ValueError, RecursionError):
        return _error(types.PARSE_ERROR, "Parse error: the line is not one JSON value.")
    request_id = value.get("id") if isinstance(value, dict) else None
    if isinstance(value, dict) and "id" in value and type(request_id) not in (int, str):
        return _error(types.INVALID_REQUEST, "Invalid request: id must be a string or an integer.")
    try:
        message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValueError:
        return _error(types.INVALID_REQUEST, NOT_ONE_MESSAGE, request_id)
    return SessionMessage(message)


def _encode(message: SessionMessage) -> bytes:
    try:
        text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # a lone surrogate somewhere: JSON can carry it escaped
        dumped = message.message.model_dump(mode="python", by_alias=True, exclude_unset=True)
        text = json.dumps(dumped, ensure_ascii=False, default=str)
    return utf8(text) + b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class StdioWire:
    """The stdio transport of :func:`serve_stdio`: use as ``async with StdioWire() as wire``.

    Attributes:
        read: the stream the server reads messages from.
        write: the stream the server writes messages to (the server closes it when done).
    """

    def __init__(self, stdin: int = 0, stdout: int = 1) -> None:
        self._fds = (stdin, stdout)
        self._private: tuple[int, int] | None = None
        self._restore: list[tuple[int, int]] = []
        self._to_server: MemoryObjectSendStream[SessionMessage | Exception]
        self.read: MemoryObjectReceiveStream[SessionMessage | Exception]
        self.write: MemoryObjectSendStream[SessionMessage]
        self._from_server: MemoryObjectReceiveStream[SessionMessage]
        self._pending: set[int | str] = set()
        self._answered: anyio.Event | None = None
        self._group: TaskGroup | None = None
        self._reading = anyio.CancelScope()
        self._writing = anyio.Lock()

    async def __aenter__(self) -> StdioWire:
        self._claim()
        self._to_server, self.read = anyio.create_memory_object_stream[SessionMessage | Exception](
            0
        )
        self.write, self._from_server = anyio.create_memory_object_stream[SessionMessage](0)
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._reader)
        self._group.start_soon(self._writer)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._group is not None
        self._reading.cancel()
        self.write.close()  # the writer ends once what was sent is written
        try:
            return await self._group.__aexit__(exc_type, exc, tb)
        finally:
            self._release()

    async def settle(self, limit: float) -> None:
        """Wait until every request read so far is answered (at most ``limit`` seconds)."""
        with anyio.move_on_after(limit):
            while self._pending:
                self._answered = anyio.Event()
                await self._answered.wait()

    def stop_reading(self) -> None:
        """Read no more: the server sees the end of its input (as when stdin closes)."""
        self._reading.cancel()

    # -- the descriptors ----------------------------------------------------------------------

    def _claim(self) -> None:
        """Serve the wire on private copies of fd 0/1; point 0 at null and 1 at stderr."""
        stdin, stdout = self._fds
        sys.stdout.flush()
        self._private = (os.dup(stdin), os.dup(stdout))
        try:
            for fd, target in ((stdin, os.open(os.devnull, os.O_RDONLY)), (stdout, os.dup(2))):
                self._restore.append((fd, os.dup(fd)))
                os.dup2(target, fd)
                os.close(target)
        except OSError:  # cannot divert: serve in place (a print may then reach the wire)
            self._release()
            self._private = (stdin, stdout)

    def _release(self) -> None:
        sys.stdout.flush()
        for fd, saved in reversed(self._restore):
            os.dup2(saved, fd)
            os.close(saved)
        self._restore.clear()
        if self._private is not None and self._private != self._fds:
            for fd in self._private:
                os.close(fd)
        self._private = None

    # -- reading ------------------------------------------------------------------------------

    async def _reader(self) -> None:
        assert self._private is not None
        fd = self._private[0]
        async with self._to_server:
            with self._reading:
                buffer = b""
                skipping = False
                while True:
                    chunk = await self._chunk(fd)
                    if not chunk:
                        break
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if not skipping:
                            await self._take(line)
                        skipping = False
                    if len(buffer) > MAX_LINE:
                        await self._answer(_error(types.PARSE_ERROR, "Parse error: line too long."))
                        buffer, skipping = b"", True
                if buffer.strip() and not skipping:
                    await self._take(buffer)  # the last line, without its newline

    async def _chunk(self, fd: int) -> bytes:
        try:
            await anyio.wait_readable(fd)
        except (OSError, NotImplementedError, ValueError):
            # Not pollable (a regular file): a read never waits long there.
            return await anyio.to_thread.run_sync(os.read, fd, _CHUNK)
        return os.read(fd, _CHUNK)

    async def _take(self, line: bytes) -> None:
        if not line.strip():
            return
        parsed = parse_line(line)
        if isinstance(parsed, Refused):
            await self._answer(parsed)  # a line that is no message: answered here
            return
        message = parsed.message
        if isinstance(message, types.JSONRPCRequest):
            self._pending.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == (
            "notifications/cancelled"
        ):
            self._answer_of((message.params or {}).get("requestId"))  # never answered
        await self._to_server.send(parsed)

    async def _answer(self, message: SessionMessage) -> None:
        """Write an answer of the wire's own (an error for a line the server never saw)."""
        await self._send(_encode(message))

    async def _send(self, data: bytes) -> None:
        """Write one line; one at a time, so lines never interleave."""
        assert self._private is not None
        async with self._writing:
            await anyio.to_thread.run_sync(_write_all, self._private[1], data)

    # -- writing ------------------------------------------------------------------------------

    async def _writer(self) -> None:
        async with self._from_server:
            async for message in self._from_server:
                await self._send(_encode(message))
                inner = message.message
                if isinstance(inner, types.JSONRPCResponse | types.JSONRPCError):
                    self._answer_of(inner.id)

    def _answer_of(self, request_id: Any) -> None:
        self._pending.discard(request_id)
        if not self._pending and self._answered is not None:
            self._answered.set()
