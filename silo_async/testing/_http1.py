"""Just enough HTTP/1.1 for :class:`~silo_async.testing.ScriptedModelServer`, read defensively.

A request is read whole (head, then a ``Content-Length`` body) before anything answers it, under
two clocks: a connection waits for a request's first byte at most ``idle`` seconds (between
requests of a keep-alive connection), then the client has ``deadline`` seconds to send the rest (a
connection's first request has ``deadline`` from its start). What this
reader cannot take is a :class:`BadRequestError` with the status to answer before closing: a head
over :data:`MAX_HEAD` bytes (431), a body without a length (411), a length that is no number
(400) or over :data:`MAX_BODY` (413).
"""

from __future__ import annotations

import http
from collections.abc import Mapping

import anyio
import anyio.abc
import attrs

__all__ = [
    "MAX_BODY",
    "MAX_HEAD",
    "BadRequestError",
    "Request",
    "RequestReader",
    "TooSlowError",
    "response_bytes",
]

#: The longest request head read.
MAX_HEAD = 64 * 1024
#: The largest request body read (a long conversation with its tools is a few MB).
MAX_BODY = 32 * 1024 * 1024
_CHUNK = 64 * 1024


class BadRequestError(Exception):
    """A request this server will not read: answer ``status`` with ``message``, then close."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class TooSlowError(Exception):
    """The client did not send a whole request within its deadline."""


@attrs.frozen
class Request:
    """One request, read whole.

    Attributes:
        method: ``POST``, ``GET``...
        path: the request target (path and query).
        headers: header names lower-cased (the first of a repeated name).
        body: the body's bytes.
        keep_alive: the client keeps the connection for another request.
    """

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    keep_alive: bool


class RequestReader:
    """Reads requests one after the other from one connection."""

    def __init__(self, stream: anyio.abc.ByteReceiveStream) -> None:
        self._stream = stream
        self._buffer = bytearray()

    async def next(self, *, idle: float | None, deadline: float) -> Request | None:
        """The next request, or ``None`` when the client closed or stayed idle ``idle`` seconds.

        ``idle=None``: no wait of its own, the deadline runs from now (a new connection).

        Raises:
            TooSlowError: the request was not whole within ``deadline`` seconds.
            BadRequestError: a request this server will not read.
        """
        if idle is not None and not self._buffer:
            with anyio.move_on_after(idle):
                if not await self._fill():
                    return None
            if not self._buffer:
                return None  # idle too long: the keep-alive ends
        with anyio.move_on_after(deadline):
            return await self._request()
        raise TooSlowError

    async def _fill(self) -> bool:
        """Read more bytes into the buffer; False at the end of the stream."""
        try:
            chunk = await self._stream.receive(_CHUNK)
        except anyio.EndOfStream:
            return False
        self._buffer += chunk
        return True

    async def _request(self) -> Request | None:
        while (end := self._buffer.find(b"\r\n\r\n")) < 0:
            if len(self._buffer) > MAX_HEAD:
                raise BadRequestError(431, f"The request head is over {MAX_HEAD} bytes.")
            if not await self._fill():
                return None  # closed before (or in the middle of) a head: nothing to answer
        head = bytes(self._buffer[:end]).decode("latin-1")
        del self._buffer[: end + 4]
        method, path, version, headers = _parse_head(head)
        length = _body_length(headers)
        while len(self._buffer) < length:
            if not await self._fill():
                return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        connection = headers.get("connection", "").lower()
        keep = connection != "close" and (version == "HTTP/1.1" or connection == "keep-alive")
        return Request(method, path, headers, body, keep)


def _parse_head(head: str) -> tuple[str, str, str, dict[str, str]]:
    request_line, *lines = head.split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequestError(400, "The request line is not METHOD PATH HTTP/1.x.")
    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequestError(400, "A request header has no colon.")
        headers.setdefault(name.strip().lower(), value.strip())
    return parts[0], parts[1], parts[2], headers


def _body_length(headers: Mapping[str, str]) -> int:
    if "transfer-encoding" in headers:
        raise BadRequestError(411, "Send the body with a Content-Length (no chunked bodies).")
    text = headers.get("content-length", "0")
    if not text.isascii() or not text.isdigit():
        raise BadRequestError(400, f"Content-Length {text!r} is not a number of bytes.")
    length = int(text)
    if length > MAX_BODY:
        raise BadRequestError(413, f"The body is over {MAX_BODY} bytes.")
    return length


def response_bytes(
    status: int, body: bytes, headers: Mapping[str, str] | None = None, *, close: bool = False
) -> bytes:
    """A whole JSON response: status line, headers, body."""
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:  # a status of a provider's own (Anthropic's 529 Overloaded)
        phrase = "Status"
    lines = [f"HTTP/1.1 {status} {phrase}"]
    lines += ["content-type: application/json", f"content-length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if close:
        lines.append("connection: close")
    return "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body
