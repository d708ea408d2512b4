"""The trace recorder: every event of a rollout, in memory and (optionally) on disk as it happens.

Events are JSON-ready dicts whose first keys are ``seq`` (1-based, strictly increasing) and
``type``; ``at`` is an ISO-8601 UTC timestamp. With a file, each event is appended as one line with
a single unbuffered ``os.write`` (no fsync: the page cache keeps the hot path fast, and a process
killed mid-run still leaves only whole lines on disk).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

__all__ = ["TraceRecorder", "encode_event", "open_trace_file", "utc_now_iso"]

_cached_ms = -1
_cached_text = ""


def utc_now_iso(now: float | None = None) -> str:
    """ISO-8601 UTC time with milliseconds, e.g. ``2026-11-30T01:27:30.123Z``.

    Cached per millisecond: events recorded in a burst cost one ``time.time()`` each.
    """
    global _cached_ms, _cached_text
    ms = int((time.time() if now is None else now) * 1000)
    if ms != _cached_ms:
        second, millis = divmod(ms, 1000)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _cached_ms, _cached_text = ms, f"{stamp}.{millis:03d}Z"
    return _cached_text


class TraceRecorder:
    """Collects a rollout's events; appends each to ``trace.jsonl`` once a file is attached."""

    __slots__ = ("_fd", "_lines", "events")

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._fd: int | None = None
        self._lines: list[str] = []

    def attach(self, fd: int) -> None:
        """Append every event from now on to the open file ``fd`` (see :func:`open_trace_file`)."""
        self._fd = fd

    def emit(self, type: str, fields: dict[str, Any]) -> None:
        """Record one event: ``{"seq", "type", **fields, "at"}``."""
        self.append({"seq": len(self.events) + 1, "type": type, **fields, "at": utc_now_iso()})

    def append(self, event: dict[str, Any]) -> None:
        """Record a complete event whose ``seq`` is ``len(events) + 1`` (the hot path)."""
        self.events.append(event)
        if self._fd is not None:
            line = encode_event(event)
            self._lines.append(line)
            data = memoryview((line + "\n").encode())
            while data:
                data = data[os.write(self._fd, data) :]

    def close(self) -> None:
        """Close the trace file (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def freeze(self) -> tuple[str, ...]:
        """The events as JSON lines: what a finished run keeps.

        Strings are compact, immutable and invisible to the garbage collector, so thousands of
        finished rollouts held in memory cost neither much RAM nor GC time; the lines already
        written to ``trace.jsonl`` are reused.
        """
        if len(self._lines) == len(self.events):
            return tuple(self._lines)
        return tuple(encode_event(event) for event in self.events)


def open_trace_file(path: Path) -> int:
    """Create ``trace.jsonl`` for appending; returns the raw file descriptor."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


# One encoder for every event: json.dumps() with options builds a new encoder per call.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def encode_event(event: dict[str, Any]) -> str:
    """One trace event as a compact JSON line (no newline)."""
    return _encode(event)
