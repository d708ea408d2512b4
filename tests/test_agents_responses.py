"""agents.openai_responses: the model loop on OpenAI's Responses API.

The real openai SDK talks to a ScriptedModelServer speaking the Responses API's documented
shapes: function tools, ``function_call`` output items, ``function_call_output`` input items.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall

from .peers import extra
from .worlds import ENV

pytestmark = [pytest.mark.anyio, extra("openai")]  # the Responses API is the openai SDK's

BLOCK = ToolCall("block_customer", {"customerId": "CUS-001"}, id="call_block")
SCRIPT = [
    Reply(
        text="Blocking now.",
        tool_calls=[ToolCall("get_customer", {"customerId": "CUS-404"}, id="call_miss"), BLOCK],
        input_tokens=40,
        output_tokens=7,
    ),
    Reply(text="Blocked CUS-001.", input_tokens=60, output_tokens=4),
]


def steps(result: silo.RunResult) -> list[dict[str, Any]]:
    return [e for e in result.trace if e["type"] == "model_step"]


async def test_the_loop_runs_on_the_responses_api() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        agent = agents.openai_responses(
            "gpt-test", base_url=server.base_url, system="Be brief.", max_output_tokens=99
        )
        result = await silo.run(ENV, "TASK-BLOCK", agent)
    assert result.passed and result.agent_output == "Blocked CUS-001."
    assert result.agent_name == "openai-responses/gpt-test"
    first, second = server.requests
    assert {r.protocol for r in server.requests} == {"responses"}
    assert first.path.endswith("/responses")
    body = first.body
    assert body["instructions"] == "Be brief." and body["max_output_tokens"] == 99
    assert body["input"] == [{"role": "user", "content": "Block customer CUS-001."}]
    tool = next(t for t in body["tools"] if t["name"] == "block_customer")
    assert tool["type"] == "function" and tool["parameters"]["required"] == ["customerId"]
    # The second request sends the first response's items back, then one output per call.
    sent = second.body["input"]
    kinds = [item.get("type") for item in sent[1:]]
    assert kinds == ["message", "function_call", "function_call", *["function_call_output"] * 2]
    outputs = {item["call_id"]: item["output"] for item in sent if "output" in item}
    assert set(outputs) == {"call_miss", "call_block"}
    assert json.loads(outputs["call_miss"])["code"] == "not_found"
    assert [r.id for r in second.last_results] == ["call_miss", "call_block"]
    assert second.turn == 1 and second.task == "Block customer CUS-001."


async def test_its_model_steps_are_openai_chats() -> None:
    """The same events as openai_chat: message, usage, stop reason, attempts."""
    with ScriptedModelServer(SCRIPT) as server:
        responses = await silo.run(
            ENV, "TASK-BLOCK", agents.openai_responses("m", base_url=server.base_url)
        )
    with ScriptedModelServer(SCRIPT) as server:
        chat = await silo.run(ENV, "TASK-BLOCK", agents.openai_chat("m", base_url=server.base_url))
    for a, b in zip(steps(responses), steps(chat), strict=True):
        assert a["message"] == b["message"]
        assert a["usage"] == b["usage"] and a["attempts"] == b["attempts"] == 1
    assert steps(responses)[0]["stopReason"] == "completed"
    assert responses.input_tokens == chat.input_tokens == 100
    names = [e["tool"] for e in responses.trace if e["type"] == "tool_call"]
    assert names == ["get_customer", "block_customer"]
    for name in ("result.json", "state-diff.json"):
        assert responses.state_diff_json == chat.state_diff_json, name


async def test_tokens_and_policy_version_on_responses() -> None:
    script = [
        Reply(tool_calls=[BLOCK], prompt_token_ids=[1, 2], token_ids=[3, 4]),
        Reply(text="Done.", token_ids=[5], logprobs=[-0.5]),
    ]
    with ScriptedModelServer(script) as server:
        agent = agents.openai_responses(
            "m", base_url=server.base_url, token_ids=True, policy_version=4
        )
        result = await silo.run(ENV, "TASK-BLOCK", agent)
    assert server.requests[0].body["include"] == ["message.output_text.logprobs"]
    assert server.requests[0].body["return_token_ids"] is True
    first, second = steps(result)
    assert (first["promptTokenIds"], first["completionTokenIds"], first["logprobs"]) == (
        [1, 2],
        [3, 4],
        None,
    )
    assert (second["promptTokenIds"], second["completionTokenIds"], second["logprobs"]) == (
        None,
        [5],
        [-0.5],
    )
    assert first["policyVersion"] == second["policyVersion"] == "4"


async def test_a_response_with_reasoning_goes_back_as_sent_and_replays() -> None:
    """Items the turn alone cannot rebuild (reasoning) are kept as providerMessage."""
    raw = {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": "m",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"},
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "block_customer",
                "arguments": '{"customerId":"CUS-001"}',
                "status": "completed",
            },
        ],
        "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8},
    }
    with ScriptedModelServer([raw, Reply(text="Done.")]) as server:
        result = await silo.run(
            ENV, "TASK-BLOCK", agents.openai_responses("m", base_url=server.base_url)
        )
    assert result.passed
    sent = server.requests[1].body["input"]
    assert sent[1]["type"] == "reasoning" and sent[1]["encrypted_content"] == "opaque"
    first = steps(result)[0]
    assert first["providerMessage"]["output"][0]["type"] == "reasoning"


def by_turn(request: ModelRequest) -> Reply:
    return SCRIPT[request.turn]


async def test_an_eval_of_openai_responses_records_its_spec(tmp_path: Path) -> None:
    """The spec openai-responses/MODEL is what eval.json keeps (a resume rebuilds from it)."""
    with ScriptedModelServer(by_turn) as server:
        agent = agents.from_spec("openai-responses/m", base_url=server.base_url, token_ids=True)
        summary = await silo.evaluate(ENV, ["TASK-BLOCK"], {"r": agent}, out_dir=tmp_path / "ev")
    assert summary.finished == 1
    (entry,) = json.loads((tmp_path / "ev" / "eval.json").read_text())["agents"]
    assert entry["model"] == "openai-responses/m" and entry["options"]["tokenIds"] is True


async def test_openai_responses_plays_a_user_too() -> None:
    """--user-model openai-responses/MODEL: a model user on the Responses API."""
    from silo_async.users import model_user

    from . import chat_world

    def customer(request: ModelRequest) -> str:
        assert request.protocol == "responses"
        if request.turn == 0 and "email" in str(request.messages):
            return "It's ada@example.com."
        return "Perfect, thank you! [END]"

    with ScriptedModelServer(customer) as server:
        user = model_user("openai-responses/m", base_url=server.base_url)
        result = await silo.run(chat_world.ENV, "CHAT-ORDER", chat_world.solver, user=user)
    assert result.passed and result.user_turns == 2
    assert {r.protocol for r in server.requests} == {"responses"}


def test_user_model_on_the_cli_takes_openai_responses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run --model and --user-model openai-responses/MODEL: both sides on the Responses API."""
    from .chat_world import write_project
    from .cli_support import cli
    from .test_users_models import sync_script

    monkeypatch.chdir(tmp_path)
    write_project(tmp_path)
    with ScriptedModelServer(sync_script) as server:
        result = cli(
            "run", "--env", "bakery", "--task", "CHAT-SYNC", "--json",
            "--model", "openai-responses/scripted-agent", "--base-url", server.base_url,
            "--user-model", "openai-responses/scripted-user",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["passed"] and (data["userTurns"], data["userToolCalls"]) == (1, 1)
    assert {r.protocol for r in server.requests} == {"responses"}
