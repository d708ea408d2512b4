"""The trace recorder: every event of a rollout, in memory and (optionally) on disk as it happens.

Events are JSON-ready dicts whose first keys are ``seq`` (1-based, strictly increasing) and
``type``; ``at`` is an ISO-8601 UTC timestamp. With a file, each event is appended as one line with
a single unbuffered ``os.write`` (no fsync: the page cache keeps the hot path fast, and a process
killed mid-run still leaves only whole lines on disk).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ._jsonutil import compact_json

__all__ = ["TraceRecorder", "encode_event", "open_trace_file", "utc_now_iso"]

_cached_ms = -1
_cached_text = ""
_cached_second = -1
_cached_prefix = ""


def utc_now_iso(now: float | None = None) -> str:
    """ISO-8601 UTC time with milliseconds, e.g. ``2026-11-30T01:27:30.123Z``.

    Cached per millisecond, and the formatted second per second: thousands of rollouts record
    events every millisecond, and ``strftime`` is the expensive part.
    """
    global _cached_ms, _cached_text, _cached_second, _cached_prefix
    ms = int((time.time() if now is None else now) * 1000)
    if ms != _cached_ms:
        second, millis = divmod(ms, 1000)
        if second != _cached_second:
            _cached_second = second
            _cached_prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _cached_ms, _cached_text = ms, f"{_cached_prefix}.{millis:03d}Z"
    return _cached_text


class TraceRecorder:
    """Collects a rollout's events as JSON lines; appends each to ``trace.jsonl`` once attached.

    Events are encoded the moment they are recorded: a mistake in an event (a circular
    structure) surfaces where it was made, the work is spread over the rollout instead of
    piling up at its end, and a live rollout holds strings, which the garbage collector ignores.
    """

    __slots__ = ("_fd", "lines")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._fd: int | None = None

    @property
    def next_seq(self) -> int:
        """The ``seq`` of the next event."""
        return len(self.lines) + 1

    def attach(self, fd: int) -> None:
        """Append every event from now on to the open file ``fd`` (see :func:`open_trace_file`)."""
        self._fd = fd

    def emit(self, type: str, fields: dict[str, Any]) -> None:
        """Record one event: ``{"seq", "type", **fields, "at"}``."""
        self.append({"seq": len(self.lines) + 1, "type": type, **fields, "at": utc_now_iso()})

    def append(self, event: dict[str, Any]) -> None:
        """Record a complete event whose ``seq`` is :attr:`next_seq` (the hot path).

        Raises:
            ValueError: the event holds a circular reference (nothing is recorded).
        """
        line = encode_event(event)
        self.lines.append(line)
        if self._fd is not None:
            data = memoryview((line + "\n").encode())
            while data:
                data = data[os.write(self._fd, data) :]

    def close(self) -> None:
        """Close the trace file (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def freeze(self) -> tuple[str, ...]:
        """The events as JSON lines, exactly as written to ``trace.jsonl``: what a run keeps."""
        return tuple(self.lines)


def open_trace_file(path: Path) -> int:
    """Create ``trace.jsonl`` for appending; returns the raw file descriptor."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def encode_event(event: dict[str, Any]) -> str:
    """One trace event as a compact JSON line (no newline); unknown objects become strings."""
    return compact_json(event)
