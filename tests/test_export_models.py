"""Exporting an eval of a real model agent (agents.openai_chat against ScriptedModelServer).

The exported conversation must be the one the agent actually held with the model: the last
request the server received holds every message up to the final answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.eval import read_index
from silo_async.export import trajectories
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from tests.peers import extra

from .export_support import check_line
from .worlds import ENV

pytestmark = pytest.mark.anyio

READS = [
    ToolCall("get_customer", {"customerId": "CUS-001"}, id="call_read"),
    ToolCall("get_customer", {"customerId": "CUS-404"}, id="call_missing"),
]
SCRIPT = [
    Reply(tool_calls=READS, input_tokens=40, output_tokens=7),
    Reply(
        text="Blocking now.",
        tool_calls=[ToolCall("block_customer", {"customerId": "CUS-001"}, id="call_block")],
    ),
    Reply(text="Blocked CUS-001."),
]


def by_turn(request: ModelRequest) -> Reply:
    """Every conversation follows the same script, whatever the interleaving."""
    return SCRIPT[request.turn]


def normalized(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with call arguments parsed (the agent echoes the model's own spacing)."""
    out = []
    for message in messages:
        message = {**message, "content": message.get("content") or None}
        if "tool_calls" in message:
            message["tool_calls"] = [
                {
                    **c,
                    "function": {
                        **c["function"],
                        "arguments": json.loads(c["function"]["arguments"]),
                    },
                }
                for c in message["tool_calls"]
            ]
        out.append(message)
    return out


@extra("openai")
async def test_a_model_agents_eval_exports_the_conversation_it_held(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    with ScriptedModelServer(by_turn) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url)
        summary = await silo.evaluate(
            ENV, ["TASK-BLOCK"], {"model": agent}, runs=3, out_dir=out, concurrency=3
        )
    assert summary.finished == 3
    stream = trajectories(eval_id=str(out), environment=ENV, cwd=tmp_path)
    lines = list(stream)
    index = read_index(out)
    assert [line["runId"] for line in lines] == [r.run_id for r in index]
    last = [r for r in server.requests if r.turn == 2]
    assert len(last) == 3
    for line, record in zip(lines, index, strict=True):
        assert record.run_dir is not None
        found = check_line(line, out / record.run_dir)
        assert [p[0] for p in found] == ["call_read", "call_missing", "call_block"]
        messages = line["messages"]
        # Up to the answer, the export is what the model was sent; then the answer itself.
        assert normalized(messages[:-1]) == normalized(last[0].messages)
        assert messages[-1] == {"role": "assistant", "content": "Blocked CUS-001."}
        assert line["passed"] is True and line["output"] == "Blocked CUS-001."
        assert line["usage"] == {"inputTokens": 60, "outputTokens": 17, "modelSteps": 3}
        assert line["tools"] == last[0].body["tools"]  # the tools the model was offered
