"""Compact per-rollout details for the HTML report: tool calls, checks, state diff, output.

Built once per finished rollout from its in-memory trace, so the report never re-reads 10,000
run directories. Long inputs, outputs and diffs are cut with a note saying how much was cut;
the full record is always in the rollout's own ``trace.jsonl``.
"""

from __future__ import annotations

from typing import Any

from .._jsonutil import compact_json
from .._result import RunResult
from ._runs import pair_calls

__all__ = ["MAX_CALLS", "MAX_DIFF", "MAX_TEXT", "compact_details", "truncate"]

#: Characters kept of each tool input or output (as compact JSON) and of the agent's output.
MAX_TEXT = 400
#: Characters kept of the state diff (as compact JSON).
MAX_DIFF = 4000
#: Tool calls kept per rollout; the rest are counted in a note.
MAX_CALLS = 200


def truncate(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, with a note of how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [truncated: {len(text) - limit} more characters]"


def _calls(trace: list[dict[str, Any]]) -> tuple[list[list[Any]], int]:
    """``[[callId, tool, input, output, isError, durationMs, fault], ...]`` and calls omitted."""
    calls = pair_calls(trace)
    rows = [
        [
            c.call_id,
            c.tool,
            truncate(compact_json(c.input)),
            truncate(compact_json(c.output)) if c.has_result else None,
            1 if c.is_error else 0,
            c.duration_ms,
            _fault_text(c.fault),
        ]
        for c in calls[:MAX_CALLS]
    ]
    return rows, max(0, len(calls) - MAX_CALLS)


def _fault_text(fault: Any) -> str | None:
    if not isinstance(fault, dict):
        return None
    return truncate(f"{fault.get('type')}: {fault.get('message')}", 300)


def compact_details(result: RunResult) -> dict[str, Any]:
    """The report's record of one rollout (short keys: thousands of these are embedded).

    Keys: ``o`` output text, ``e`` error, ``c`` calls (see :func:`_calls`), ``n`` calls
    omitted, ``k`` checks as ``[label, passed, detail, required]``, ``d`` state diff (an object,
    or a truncated JSON string when large).
    """
    calls, omitted = _calls(result.trace)
    diff_text = result.state_diff_json
    details: dict[str, Any] = {
        "o": truncate(result.output_text, MAX_TEXT * 4),
        "c": calls,
        "k": [
            [c.label, 1 if c.passed else 0, truncate(c.detail), 1 if c.required else 0]
            for c in result.checks
        ],
        "d": result.state_diff if len(diff_text) <= MAX_DIFF else truncate(diff_text, MAX_DIFF),
    }
    if result.error:
        details["e"] = truncate(result.error, MAX_TEXT * 2)
    if omitted:
        details["n"] = omitted
    return details
