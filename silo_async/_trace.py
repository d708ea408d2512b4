r"""The trace recorder: every event of a rollout, in memory and (optionally) on disk as it happens.

Events are JSON-ready dicts whose first keys are ``seq`` (1-based, strictly increasing) and
``type``; ``at`` is an ISO-8601 UTC timestamp. With a file, each event is appended as one line with
a single unbuffered ``os.write`` (no fsync: the page cache keeps the hot path fast, and a process
killed mid-run still leaves only whole lines on disk).

Every line is strict JSON that any reader can read back: non-finite numbers are ``null`` and lone
surrogates ``\uXXXX`` escapes (see ``silo_async._jsonutil``), and no value nests deeper than
:data:`TRACE_DEPTH` levels. A tool input that JSON cannot hold that way (circular, or deeper: it
is refused as ``invalid_input`` anyway) is recorded as its ``str()``.
"""

from __future__ import annotations

import functools
import json
import json.encoder
import marshal
import os
import time
from typing import TYPE_CHECKING, Any

from ._jsonutil import MAX_DEPTH, bounded_text, compact_json, text_form

if TYPE_CHECKING:
    from ._tools import ToolFault, ToolResult

__all__ = [
    "TRACE_DEPTH",
    "TraceRecorder",
    "encode_event",
    "open_trace_file",
    "unpack_lines",
    "utc_now_iso",
]

#: The deepest a value in a trace line may nest: twice what a tool input may, so every input a
#: tool accepts fits inside any event (a model step's tool calls) and every JSON reader, which
#: recurses once per level, reads the line back far from Python's recursion limit.
TRACE_DEPTH = 2 * MAX_DEPTH

#: A string as JSON (what the compact encoder writes for one: non-ASCII kept as it is).
_string = json.encoder.encode_basestring

#: A tool result this soon after its call has (almost always) the same millisecond timestamp.
_SAME_MS_S = 0.0001

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


#: An event kept in memory until the run is over, as the arguments of its line builder
#: (:func:`_call_line`: 5 items, :func:`_result_line`: 8, :func:`_plain_line`: 4), the variable
#: document frozen as marshal bytes (or JSON text when marshal cannot hold it). Tuples of
#: strings, numbers and bytes are invisible to the garbage collector.
_Deferred = tuple[Any, ...]


class TraceRecorder:
    """Collects a rollout's events as JSON lines; appends each to ``trace.jsonl`` once attached.

    With a file, every event is encoded and written the moment it happens. In memory, a tool
    call's input and output are frozen as ``marshal`` bytes until :meth:`freeze`: a snapshot of
    the values as they were (the agent may mutate them later) at a third of the cost of encoding
    them on the ``call_tool`` hot path. Either way a live rollout holds strings and bytes, which
    the garbage collector ignores.
    """

    __slots__ = ("_entries", "_fd")

    def __init__(self) -> None:
        self._entries: list[str | _Deferred] = []
        self._fd: int | None = None

    def attach(self, fd: int) -> None:
        """Append every event from now on to the open file ``fd`` (see :func:`open_trace_file`)."""
        self._fd = fd

    def emit(self, type: str, fields: dict[str, Any]) -> None:
        """Record one event: ``{"seq", "type", **fields, "at"}``.

        Raises:
            ValueError: a field holds a circular reference or nests deeper than
                :data:`TRACE_DEPTH` levels (nothing is recorded).
        """
        event = {"seq": len(self._entries) + 1, "type": type, **fields, "at": utc_now_iso()}
        self._record(encode_event(event))

    def emit_plain(self, type: str, fields: dict[str, Any]) -> None:
        """:meth:`emit` for an event of the rollout's own, built of plain data.

        ``fields`` hold only strings, numbers, booleans, ``None`` and lists and dicts of them
        (the rollout's start, its end, its output, its grade). In memory they are
        frozen as ``marshal`` bytes and encoded when the trace is read, as tool events are: a
        rollout whose trace nobody reads never pays for their JSON. The line is the one
        :meth:`emit` writes.
        """
        if self._fd is not None:
            self.emit(type, fields)
            return
        try:
            packed = marshal.dumps(fields)
        except ValueError:  # not plain after all: encoded now, as emit() does
            self.emit(type, fields)
            return
        self._entries.append((len(self._entries) + 1, type, packed, utc_now_iso()))

    def tool_call(self, call_id: int, tool_json: str, input: Any) -> str:
        """Record a ``tool_call`` event; ``tool_json`` is the tool name already JSON-encoded.

        Returns:
            The event's timestamp, for :meth:`tool_result` to reuse when the call was quick.
        """
        entries, at = self._entries, utc_now_iso()
        seq = len(entries) + 1
        if self._fd is None:
            try:  # marshal bytes, or the JSON text of what marshal cannot hold
                packed: bytes | str = marshal.dumps(input)
            except ValueError:
                packed = _json_text(input)
            entries.append((seq, call_id, tool_json, packed, at))
        else:
            self._record(_call_line(seq, call_id, tool_json, _json_text(input), at))
        return at

    def tool_result(
        self,
        call_id: int,
        tool_json: str,
        result: ToolResult,
        elapsed_s: float,
        fault: ToolFault | None,
        call_at: str | None = None,
    ) -> None:
        """Record a ``tool_result`` event (with the fault, if the tool broke).

        ``elapsed_s`` becomes ``durationMs`` (rounded to the microsecond when the line is
        encoded). A call quicker than a tenth of a millisecond shares ``call_at``, its call's
        millisecond timestamp, instead of reading the clock again.
        """
        at = call_at if call_at is not None and elapsed_s < _SAME_MS_S else utc_now_iso()
        seq, is_error = len(self._entries) + 1, result.is_error
        fault_json = "" if fault is None else f',"fault":{compact_json(fault.to_dict())}'
        if self._fd is None:
            output = result.output
            try:  # marshal bytes, or the JSON text of what marshal cannot hold
                packed: bytes | str = marshal.dumps(output)
            except ValueError:
                packed = _json_text(output)
            self._entries.append(
                (seq, call_id, tool_json, packed, at, is_error, elapsed_s, fault_json)
            )
        else:
            output = _json_text(result.output)
            self._record(
                _result_line(seq, call_id, tool_json, output, at, is_error, elapsed_s, fault_json)
            )

    def user_turn(
        self,
        agent_text: str,
        reply: str,
        ended: bool,
        actions: list[dict[str, Any]],
        usage: dict[str, int] | None,
    ) -> None:
        """Record a ``user_turn`` event ``{agentText, reply, ended, actions[, usage]}``.

        Assembled around its texts, like the tool events (the bytes :meth:`emit` gives for
        the same dict): a scripted user's turn costs no more than a tool call.
        """
        tail = "" if usage is None else f',"usage":{compact_json(usage)}'
        self._record(
            f'{{"seq":{len(self._entries) + 1},"type":"user_turn",'
            f'"agentText":{_string(agent_text)},"reply":{_string(reply)},'
            f'"ended":{"true" if ended else "false"},'
            f'"actions":{compact_json(actions) if actions else "[]"}{tail},'
            f'"at":"{utc_now_iso()}"}}'
        )

    def actor_call(self, actor: str, call_id: str, tool: str, input: Any) -> None:
        """Record a ``tool_call`` made by someone other than the agent (``"actor": "user"``).

        The event is the ordinary one with ``actor`` after ``type``; its ``callId`` is the
        actor's own (``"u1"``...), so it never collides with the agent's call numbers.
        """
        self._record(
            f'{{"seq":{len(self._entries) + 1},"type":"tool_call","actor":{compact_json(actor)},'
            f'"callId":{compact_json(call_id)},"tool":{compact_json(tool)},'
            f'"input":{_json_text(input)},"at":"{utc_now_iso()}"}}'
        )

    def actor_result(
        self,
        actor: str,
        call_id: str,
        tool: str,
        result: ToolResult,
        elapsed_s: float,
        fault: ToolFault | None,
    ) -> None:
        """Record the ``tool_result`` of an :meth:`actor_call`."""
        fault_json = "" if fault is None else f',"fault":{compact_json(fault.to_dict())}'
        self._record(
            f'{{"seq":{len(self._entries) + 1},"type":"tool_result","actor":{compact_json(actor)},'
            f'"callId":{compact_json(call_id)},"tool":{compact_json(tool)},'
            f'"output":{_json_text(result.output)},'
            f'"isError":{"true" if result.is_error else "false"},'
            f'"durationMs":{round(elapsed_s * 1000, 3)!r},"at":"{utc_now_iso()}"{fault_json}}}'
        )

    def _record(self, line: str) -> None:
        if self._fd is not None:
            try:
                raw = (line + "\n").encode()
            except UnicodeEncodeError:  # a lone surrogate: written (and kept) as its escape
                raw = (line + "\n").encode("utf-8", "backslashreplace")
                line = raw[:-1].decode()
            data = memoryview(raw)
            try:
                while data:
                    data = data[os.write(self._fd, data) :]
            except OSError as exc:  # a full disk says so without a file name: name the trace
                raise OSError(exc.errno, exc.strerror, getattr(self._fd, "path", None)) from None
        self._entries.append(line)

    def outline(self, types: frozenset[str]) -> list[dict[str, Any]]:
        """The events of these ``types`` as dicts, without encoding what is still deferred.

        For a reader of the trace's shape (OpenTelemetry's spans): a deferred tool call keeps
        its ``callId``, ``tool`` and ``at`` but not its input, a deferred result only a failed
        call's ``output``; a written line is decoded only when its type is asked for.
        """
        found: list[dict[str, Any]] = []
        for entry in self._entries:
            if isinstance(entry, str):
                if _line_type(entry) in types:
                    found.append(json.loads(entry))
            elif len(entry) == 4:  # an event of emit_plain()
                if entry[1] in types:
                    found.append({"type": entry[1], **marshal.loads(entry[2]), "at": entry[3]})
            elif ("tool_call" if len(entry) == 5 else "tool_result") in types:
                found.append(_deferred_outline(entry))
        return found

    def close(self) -> None:
        """Close the trace file (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def freeze(self) -> tuple[str, ...]:
        """The events as JSON lines, exactly as written to ``trace.jsonl``: what a run keeps."""
        return tuple(e if isinstance(e, str) else _encode_deferred(e) for e in self._entries)

    def frozen(self) -> tuple[str, ...] | bytes:
        """:meth:`freeze`, or (in memory) the events packed as one string of bytes.

        A finished in-memory result keeps its tool events as they were recorded, packed with
        ``marshal``: no work until someone reads the trace (:func:`unpack_lines` gives exactly
        the lines :meth:`freeze` would have), and nothing for the garbage collector to walk.
        """
        entries = tuple(self._entries)
        if self._fd is not None or all(type(e) is str for e in entries):
            return tuple(e for e in entries if isinstance(e, str))
        return marshal.dumps(entries)


def unpack_lines(packed: bytes) -> tuple[str, ...]:
    """The JSON lines of a trace :meth:`TraceRecorder.frozen` packed."""
    entries: tuple[str | _Deferred, ...] = marshal.loads(packed)
    return tuple(e if isinstance(e, str) else _encode_deferred(e) for e in entries)


def _encode_deferred(entry: _Deferred) -> str:
    if len(entry) == 4:  # an event of emit_plain()
        return _plain_line(*entry)
    seq, call_id, tool_json, packed, at, *result = entry
    text = _json_text(marshal.loads(packed)) if isinstance(packed, bytes) else packed
    if not result:
        return _call_line(seq, call_id, tool_json, text, at)
    return _result_line(seq, call_id, tool_json, text, at, *result)


def _line_type(line: str) -> str:
    """The ``type`` of an event line: its second key (``{"seq":N,"type":"..."``)."""
    start = line.find('"type":"') + 8
    return line[start : line.find('"', start)]


@functools.lru_cache(maxsize=1024)
def _tool_name(tool_json: str) -> str:
    """A tool's name from its JSON text (a world has few: each decoded once)."""
    name: str = json.loads(tool_json)
    return name


def _deferred_outline(entry: _Deferred) -> dict[str, Any]:
    """A deferred tool event as :meth:`TraceRecorder.outline` gives it."""
    call_id, tool, at = entry[1], _tool_name(entry[2]), entry[4]
    if len(entry) == 5:
        return {"type": "tool_call", "callId": call_id, "tool": tool, "at": at}
    packed, is_error, elapsed_s, fault_json = entry[3], entry[5], entry[6], entry[7]
    event = {"type": "tool_result", "callId": call_id, "tool": tool, "isError": is_error}
    event.update(durationMs=round(elapsed_s * 1000, 3), at=at)
    if is_error:  # what failed, and how
        event["output"] = marshal.loads(packed) if isinstance(packed, bytes) else json.loads(packed)
    if fault_json:
        event["fault"] = json.loads(fault_json[len(',"fault":') :])
    return event


def _plain_line(seq: int, type: str, packed: bytes, at: str) -> str:
    return encode_event({"seq": seq, "type": type, **marshal.loads(packed), "at": at})


# The two events of a tool call are assembled around their one variable document: the same
# bytes encode_event() gives for their dict form, for much less work.


def _call_line(seq: int, call_id: int, tool_json: str, input_json: str, at: str) -> str:
    return (
        f'{{"seq":{seq},"type":"tool_call","callId":{call_id},"tool":{tool_json},'
        f'"input":{input_json},"at":"{at}"}}'
    )


def _result_line(
    seq: int,
    call_id: int,
    tool_json: str,
    output_json: str,
    at: str,
    is_error: bool,
    elapsed_s: float,
    fault_json: str,
) -> str:
    return (
        f'{{"seq":{seq},"type":"tool_result","callId":{call_id},"tool":{tool_json},'
        f'"output":{output_json},"isError":{"true" if is_error else "false"},'
        f'"durationMs":{round(elapsed_s * 1000, 3)!r},"at":"{at}"{fault_json}}}'
    )


class TraceFile(int):
    """An open ``trace.jsonl``: its raw file descriptor, which also knows its path."""

    path: str

    def __new__(cls, fd: int, path: str) -> TraceFile:
        self = super().__new__(cls, fd)
        self.path = path
        return self


def open_trace_file(path: str | os.PathLike[str]) -> int:
    """Create ``trace.jsonl`` for appending; returns the raw file descriptor (a TraceFile)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    return TraceFile(fd, os.fspath(path))


def encode_event(event: dict[str, Any]) -> str:
    """One trace event as a compact JSON line (no newline); unknown objects become strings.

    Raises:
        ValueError: the event is circular or nests deeper than :data:`TRACE_DEPTH` levels.
    """
    return bounded_text(event, compact_json(event), TRACE_DEPTH)


def _json_text(value: Any) -> str:
    """Compact JSON of a tool input or output; circular or too deep, it is recorded as str()."""
    try:
        return bounded_text(value, compact_json(value), TRACE_DEPTH)
    except ValueError:
        return compact_json(text_form(value))
