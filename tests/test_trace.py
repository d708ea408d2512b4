"""Trace timestamps: ISO-8601 UTC with milliseconds, cached without going stale."""

from __future__ import annotations

import json
from typing import Any

import pytest

from silo_async._jsonutil import JSONDepthError
from silo_async._tools import ToolResult
from silo_async._trace import TRACE_DEPTH, TraceRecorder, encode_event, utc_now_iso


def test_timestamps_change_with_the_millisecond_and_the_second() -> None:
    assert utc_now_iso(0.0) == "1970-01-01T00:00:00.000Z"
    assert utc_now_iso(0.0) == "1970-01-01T00:00:00.000Z"  # served from the cache
    assert utc_now_iso(1.5) == "1970-01-01T00:00:01.500Z"
    assert utc_now_iso(1.999) == "1970-01-01T00:00:01.999Z"  # same second, new millisecond
    assert utc_now_iso(86400.001) == "1970-01-02T00:00:00.001Z"
    assert utc_now_iso(1_796_000_000.25) == "2026-11-30T00:53:20.250Z"


def test_recorder_numbers_events_and_keeps_them_as_json_lines() -> None:
    trace = TraceRecorder()
    trace.emit("run_start", {"runId": "r"})
    assert len(trace.freeze()) == 1  # the tool call below is event 2
    output: dict[str, Any] = {"tags": ["a"], "set": (1, 2)}
    trace.tool_call(1, '"t"', {"x": "é"})
    trace.tool_result(1, '"t"', ToolResult(output), 0.00025, None)  # seconds
    output["tags"].append("later")  # frozen at the call: the trace does not see this
    first, call, result = trace.freeze()
    assert first.startswith('{"seq":1,"type":"run_start","runId":"r","at":"')
    assert call.startswith('{"seq":2,"type":"tool_call","callId":1,"tool":"t","input":{"x":"é"},')
    assert json.loads(result)["output"] == {"tags": ["a"], "set": [1, 2]}
    assert '"isError":false,"durationMs":0.25,"at":"' in result


def test_a_circular_tool_input_is_recorded_as_text() -> None:
    loop: dict[str, Any] = {}
    loop["me"] = loop
    trace = TraceRecorder()
    trace.tool_call(1, '"t"', loop)
    assert json.loads(trace.freeze()[0])["input"] == "{'me': {...}}"


def _nested(depth: int) -> Any:
    value: Any = 1
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def test_an_event_nested_deeper_than_the_trace_depth_is_refused_at_any_length() -> None:
    assert json.loads(encode_event({"type": "x", "v": _nested(TRACE_DEPTH - 1)}))["type"] == "x"
    with pytest.raises(JSONDepthError):
        encode_event({"type": "x", "v": _nested(TRACE_DEPTH)})
    # Long and shallow (the brackets are inside strings): written as it is.
    wide = {"type": "x", "v": ["[{" * 200, {"k": list(range(500))}]}
    assert json.loads(encode_event(wide)) == wide


def test_the_rollouts_own_events_are_frozen_then_written_as_emit_writes_them() -> None:
    fields: dict[str, Any] = {"task": {"id": "T-1", "tags": ["a"]}, "ratio": 0.5, "x": "\ud83d"}
    plain, eager = TraceRecorder(), TraceRecorder()
    plain.emit_plain("run_start", fields)
    eager.emit("run_start", fields)
    fields["task"]["tags"].append("later")  # frozen when emitted: the trace does not see it
    plain.emit_plain("odd", {"value": object()})  # not plain data: encoded at once instead
    eager.emit("odd", {"value": object()})
    strip = [line.rsplit(',"at":', 1)[0] for line in plain.freeze()]
    assert strip == [line.rsplit(',"at":', 1)[0] for line in eager.freeze()]
    assert json.loads(plain.freeze()[0])["task"]["tags"] == ["a"]
    assert not isinstance(plain.frozen(), tuple)  # kept packed until someone reads it
