"""Checks shared by the export tests: a line's shape, and its messages against its trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from silo_async.eval import load_run

#: DESIGN §12's keys of an export line, in order, with §14's rewardValid after the reward.
KEYS = [
    "runId",
    "environment",
    "task",
    "tools",
    "messages",
    "output",
    "reward",
    "rewardValid",
    "passed",
    "terminationReason",
    "usage",
]


def content_of(output: Any) -> str:
    """A tool message's content for a recorded output: a str as-is, else compact JSON."""
    if isinstance(output, str):
        return output
    return json.dumps(output, separators=(",", ":"), ensure_ascii=False)


def pairs(messages: list[dict[str, Any]]) -> list[tuple[str, str, Any, str]]:
    """(id, tool, arguments, content) of every tool call, checking each is answered at once.

    Every assistant message's tool calls are answered, in order, by the ``tool`` messages right
    after it, each with the same ``tool_call_id``; no ``tool`` message answers anything else.
    """
    out = []
    i = 0
    while i < len(messages):
        message = messages[i]
        i += 1
        assert message["role"] in ("user", "assistant"), message
        calls = message.get("tool_calls", [])
        assert message["role"] == "assistant" or not calls
        for call in calls:
            answer = messages[i]
            i += 1
            assert answer["role"] == "tool" and answer["tool_call_id"] == call["id"], answer
            assert call["type"] == "function"
            function = call["function"]
            out.append(
                (call["id"], function["name"], json.loads(function["arguments"]), answer["content"])
            )
    return out


def check_line(line: dict[str, Any], run_dir: Path) -> list[tuple[str, str, Any, str]]:
    """Check one exported line against its run directory; return its tool-call pairs."""
    assert list(line) == KEYS
    recorded = load_run(run_dir)
    run, result = recorded.run, recorded.result
    assert line["runId"] == run["runId"] and line["environment"] == run["environment"]
    assert line["task"] == run["taskId"]
    assert [t["function"]["name"] for t in line["tools"]] == recorded.trace[0]["tools"]
    assert all(t["type"] == "function" and "parameters" in t["function"] for t in line["tools"])
    messages = line["messages"]
    assert messages[0] == {"role": "user", "content": run["task"]["instruction"]}
    found = pairs(messages)
    ids = [p[0] for p in found]
    assert len(ids) == len(set(ids)), "tool call ids are unique in a rollout"
    calls = recorded.calls()
    assert [(p[1], p[2], p[3]) for p in found] == [
        (c.tool, c.input, content_of(c.output)) for c in calls
    ]
    assert line["output"] == result["agentOutput"]
    assert line["reward"] == result["reward"] and line["passed"] == result["passed"]
    assert line["terminationReason"] == result["terminationReason"]
    assert line["usage"] == {
        "inputTokens": result["inputTokens"],
        "outputTokens": result["outputTokens"],
        "modelSteps": result["modelSteps"],
    }
    text = content_of(result["agentOutput"]) if result["agentOutput"] is not None else ""
    if text:
        assert messages[-1]["role"] == "assistant" and messages[-1]["content"] == text
    return found
