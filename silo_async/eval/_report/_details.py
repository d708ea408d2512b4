"""Compact per-rollout details for the HTML report: the timeline, checks, state diff, output.

Built once per finished rollout from its in-memory trace, so the report never re-reads 10,000
run directories. The timeline keeps the trace's order: model turns (``model_step`` events,
with their tokens and text), tool calls (with inputs, outputs, errors and faults), a
conversational task's user turns and the user's own tool calls, and notes (an agent's crash,
a loop held past the deadline, a user that failed). Texts are kept up to a few thousand
characters (the report shows 400 and expands the rest on a click); beyond that they are cut
with a note of how much was cut, and the full record is the rollout's own ``trace.jsonl``.
No timing is kept here, so identical rollouts have identical details (the report stores them
once).
"""

from __future__ import annotations

import json
from typing import Any

from ..._jsonutil import compact_json
from ..._result import RunResult

__all__ = [
    "MAX_DIFF",
    "MAX_OUTPUT",
    "MAX_STEPS",
    "MAX_TEXT",
    "compact_details",
    "shrink_diff",
    "truncate",
]

#: Characters kept of each tool input or output (as compact JSON) and model text.
MAX_TEXT = 4000
#: Characters kept of the agent's output.
MAX_OUTPUT = 16_000
#: Characters kept of the state diff (as compact JSON); a larger diff is shrunk.
MAX_DIFF = 16_000
#: Timeline entries (tool calls, model turns, notes) kept per rollout; the rest are counted.
MAX_STEPS = 300
#: Ids kept per added/removed/changed list when a diff must shrink.
MAX_DIFF_IDS = 20

_CALL, _MODEL, _NOTE, _TURN, _USER_CALL = 0, 1, 2, 3, 4


def truncate(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, with a note of how many were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [truncated: {len(text) - limit} more characters]"


def _fault_text(fault: Any) -> str | None:
    if not isinstance(fault, dict):
        return None
    return truncate(f"{fault.get('type')}: {fault.get('message')}", 300)


def _model_step(event: dict[str, Any]) -> list[Any]:
    usage = event.get("usage") or {}
    message = event.get("message") or {}
    text = message.get("content") if isinstance(message, dict) else None
    calls = message.get("toolCalls") if isinstance(message, dict) else None
    names = [str(c.get("name")) for c in calls if isinstance(c, dict)] if calls else []
    return [
        _MODEL,
        event.get("model"),
        usage.get("inputTokens"),
        usage.get("outputTokens"),
        event.get("stopReason"),
        None if text is None else truncate(str(text)),
        names,
    ]


def _note(event: dict[str, Any]) -> list[Any] | None:
    kind = event.get("type")
    if kind == "agent_error":
        error = event.get("error") or {}
        return [_NOTE, "agent_error", truncate(f"{error.get('type')}: {error.get('message')}")]
    if kind == "fault_injected":
        ms = event.get("ms")
        wait = "" if ms is None else f" ({ms} ms)"
        return [
            _NOTE,
            "fault_injected",
            f"{event.get('kind')}{wait} injected into call "
            f"#{event.get('callId')} {event.get('tool')}",
        ]
    if kind == "loop_blocked":
        return [
            _NOTE,
            "loop_blocked",
            f"the event loop was held {event.get('overrunMs')} ms past the deadline",
        ]
    if kind == "user_fault":
        error = event.get("error") or {}
        text = f"the user could not answer: {error.get('type')}: {error.get('message')}"
        return [_NOTE, "user_fault", truncate(text)]
    return None


def _turn(event: dict[str, Any]) -> list[Any]:
    actions = [str(a.get("tool")) for a in event.get("actions") or () if isinstance(a, dict)]
    return [
        _TURN,
        truncate(str(event.get("agentText", ""))),
        truncate(str(event.get("reply", ""))),
        1 if event.get("ended") else 0,
        actions,
    ]


def _timeline(trace: list[dict[str, Any]]) -> tuple[list[list[Any]], int]:
    """The trace's steps in order, and how many were left out beyond :data:`MAX_STEPS`."""
    # The user's calls have ids of their own ("u1"...): they never meet the agent's numbers.
    results = {e["callId"]: e for e in trace if e.get("type") == "tool_result"}
    steps: list[list[Any]] = []
    for event in trace:
        kind = event.get("type")
        if kind == "tool_call":
            res = results.get(event["callId"])
            output = None if res is None else truncate(compact_json(res.get("output")))
            steps.append(
                [
                    _USER_CALL if "actor" in event else _CALL,
                    event["callId"],
                    event["tool"],
                    truncate(compact_json(event.get("input"))),
                    output,
                    1 if res is not None and res.get("isError") else 0,
                    None if res is None else _fault_text(res.get("fault")),
                ]
            )
        elif kind == "model_step":
            steps.append(_model_step(event))
        elif kind == "user_turn":
            steps.append(_turn(event))
        elif (note := _note(event)) is not None:
            steps.append(note)
    return steps[:MAX_STEPS], max(0, len(steps) - MAX_STEPS)


def _agent_traceback(trace: list[dict[str, Any]]) -> str | None:
    for event in reversed(trace):
        if event.get("type") == "agent_error":
            tb = (event.get("error") or {}).get("traceback")
            return None if tb is None else truncate(str(tb), MAX_TEXT)
    return None


def shrink_diff(diff: dict[str, Any], limit: int = MAX_DIFF) -> dict[str, Any]:
    """``diff`` made to fit ``limit`` characters of JSON for the report.

    Field detail goes first (from the last collection back), then id lists are cut to
    :data:`MAX_DIFF_IDS`; every cut is counted (``fieldsOmitted``, ``<kind>Omitted``), so the
    report can say what it does not show.
    """
    if len(compact_json(diff)) <= limit:
        return diff
    out: dict[str, Any] = json.loads(compact_json(diff))
    collections: dict[str, Any] = out.get("collections", {})
    for change in reversed(list(collections.values())):
        if "fields" in change:
            omitted = change.get("fieldsOmitted") or {"records": 0, "fields": 0}
            omitted["records"] += len(change["fields"])
            change["fields"] = {}
            change["fieldsOmitted"] = omitted
            if len(compact_json(out)) <= limit:
                return out
    for change in collections.values():
        for kind in ("added", "removed", "changed"):
            ids = change.get(kind, [])
            if len(ids) > MAX_DIFF_IDS:
                change[kind] = ids[:MAX_DIFF_IDS]
                change[f"{kind}Omitted"] = len(ids) - MAX_DIFF_IDS
    out["scalars"] = [
        {k: truncate(compact_json(v), 200) if k in ("from", "to") else v for k, v in s.items()}
        for s in out.get("scalars", [])
    ]
    return out


def compact_details(result: RunResult) -> dict[str, Any]:
    """The report's record of one rollout (short keys: thousands of these are embedded).

    Keys: ``o`` output text, ``e`` error, ``t`` the agent's traceback, ``s`` the timeline
    (``[0, callId, tool, input, output, isError, fault]`` for a tool call, ``[1, model,
    inputTokens, outputTokens, stopReason, text, toolNames]`` for a model turn, ``[2, kind,
    text]`` for a note, ``[3, agentText, reply, ended, userToolNames]`` for a user turn, ``[4,
    ...]`` as ``0`` for a call the user made with its own tools), ``n`` timeline entries
    omitted, ``k`` checks as ``[label, passed, detail, required]``, ``d`` the state diff
    (shrunk to :data:`MAX_DIFF` when large), and for a task with a user ``u`` its opening.
    """
    trace = result.trace
    steps, omitted = _timeline(trace)
    details: dict[str, Any] = {
        "o": truncate(result.output_text, MAX_OUTPUT),
        "s": steps,
        "k": [
            [c.label, 1 if c.passed else 0, truncate(c.detail), 1 if c.required else 0]
            for c in result.checks
        ],
        "d": shrink_diff(result.state_diff),
    }
    if result.error:
        details["e"] = truncate(result.error, MAX_TEXT)
    if (tb := _agent_traceback(trace)) is not None:
        details["t"] = tb
    if omitted:
        details["n"] = omitted
    user = result.task.user
    if user is not None:
        details["u"] = truncate(str(user.get("opening", "")))
    return details
