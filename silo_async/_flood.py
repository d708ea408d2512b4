"""Slow clients and floods: the limits every HTTP server keeps, and its log.

Every HTTP server of silo_async (``serve``'s MCP, OpenEnv and NeMo Gym servers, the scripted
model server) gives a client :data:`DEFAULT_READ_TIMEOUT` seconds to send a request's head and
body, and keeps at most :data:`DEFAULT_MAX_CONNECTIONS` connections open (:func:`check_limits`).

A server that writes a line for every connection it refuses or drops lets any client fill its
disk: 1,100 half-open connections once wrote 225,241 tracebacks in 20 seconds. Two tools keep
such reports to a line a second:

* :class:`FloodLog` reports events the server counts itself (a connection refused, a slow client
  dropped): the first at once, those after it in the same second together on the next line.
* :class:`FloodFilter` does the same to the records of a library's logger (asyncio's "out of
  system resource" on ``accept``, uvicorn's warnings), one line each: an error of the machine's
  resources loses its traceback (it is not a bug), any other keeps it.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = [
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_READ_TIMEOUT",
    "INTERVAL_S",
    "FloodFilter",
    "FloodLog",
    "check_limits",
    "closed_listener_retry",
    "filtering",
]

#: Seconds a client has to send a request's head and body (``--read-timeout-ms 30000``).
DEFAULT_READ_TIMEOUT = 30.0
#: Connections open at once (``--max-connections``): well under the usual 1,024 open files.
DEFAULT_MAX_CONNECTIONS = 512
#: Seconds between two lines about one kind of event.
INTERVAL_S = 1.0


def check_limits(read_timeout: float, max_connections: int) -> None:
    """Refuse a read timeout or a connection cap no server can keep.

    Raises:
        ValueError: ``read_timeout`` not above 0, or ``max_connections`` below 1.
    """
    if not read_timeout > 0:
        raise ValueError(f"read_timeout must be above 0 seconds, not {read_timeout}.")
    if max_connections < 1:
        raise ValueError(f"max_connections must be at least 1, not {max_connections}.")


class FloodLog:
    """Counts events of one kind and writes them on one line a second at most.

    Args:
        logger: where the lines go (at WARNING).
        describe: the line for ``n`` events (``n`` >= 1).
        interval: seconds between two lines.
        clock: the clock (``time.monotonic``).
    """

    def __init__(
        self,
        logger: logging.Logger,
        describe: Callable[[int], str],
        *,
        interval: float = INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._describe = describe
        self._interval = interval
        self._clock = clock
        self._last = -interval  # nothing written yet: the first event is written at once
        self._pending = 0

    def note(self) -> None:
        """Count one event; write the count when a second has passed since the last line."""
        self._pending += 1
        now = self._clock()
        if now - self._last >= self._interval:
            self._write(now)

    def flush(self) -> None:
        """Write the events counted since the last line, if any (a server stopping)."""
        if self._pending:
            self._write(self._clock())

    def _write(self, now: float) -> None:
        self._logger.warning(self._describe(self._pending))
        self._pending, self._last = 0, now


#: ``errno`` values of the machine's resources running out: a flood, not a bug.
_EXHAUSTED = frozenset({errno.ENFILE, errno.EMFILE, errno.ENOBUFS, errno.ENOMEM})


class FloodFilter(logging.Filter):
    """Lets one record a second through per message (its first line), with a count of the rest.

    A record whose exception is an ``OSError`` of exhausted resources (too many open files, no
    buffer space, no memory) becomes one line: the message's first line and the error.

    Args:
        interval: seconds between two records of one message.
        clock: the clock (``time.monotonic``).
    """

    def __init__(
        self, interval: float = INTERVAL_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self._interval = interval
        self._clock = clock
        self._seen: dict[str, tuple[float, int]] = {}  # first line -> (last written, held back)

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a record held back; the record rewritten when it is let through."""
        first = record.getMessage().split("\n", 1)[0]
        now = self._clock()
        last, held = self._seen.get(first, (now - self._interval, 0))
        if now - last < self._interval:
            self._seen[first] = (last, held + 1)
            return False
        if len(self._seen) > 1000:  # messages that carry ids: never grow without bound
            self._seen.clear()
        self._seen[first] = (now, 0)
        error = record.exc_info[1] if record.exc_info else None
        exhausted = isinstance(error, OSError) and error.errno in _EXHAUSTED
        if not exhausted and not held:
            return True
        text = f"{first}: {error}" if exhausted else record.getMessage()
        if held:
            text += f" ({held} more like it in the last {now - last:.0f} s)"
        record.msg, record.args = text, ()
        if exhausted:
            record.exc_info, record.exc_text = None, None
        return True


def closed_listener_retry(record: logging.LogRecord) -> bool:
    """False for asyncio's retry of a paused ``accept`` on a listener closed since.

    When files run out, asyncio stops accepting and schedules ``_start_serving`` a second later;
    a server stopped meanwhile has closed that socket, and the retry fails on its file
    descriptor (-1) with a traceback, after the server's own log has ended. Nothing is lost: the
    server is gone. Installed on the ``asyncio`` logger for good by :func:`filtering`.
    """
    error = record.exc_info[1] if record.exc_info else None
    first = record.getMessage().split("\n", 1)[0]
    return not (
        isinstance(error, ValueError)
        and first.startswith("Exception in callback")
        and "_start_serving" in first
    )


@contextmanager
def filtering(*names: str) -> Iterator[FloodFilter]:
    """Hold the loggers ``names`` to one line a second per message while inside."""
    asyncio_logger = logging.getLogger("asyncio")
    if closed_listener_retry not in asyncio_logger.filters:  # it fires after the server ends
        asyncio_logger.addFilter(closed_listener_retry)
    flood = FloodFilter()
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.addFilter(flood)
    try:
        yield flood
    finally:
        for logger in loggers:
            logger.removeFilter(flood)
