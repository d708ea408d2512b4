"""The model loop of ``silo_async.agents`` on both real SDKs against ScriptedModelServer.

Every test runs the official ``openai`` or ``anthropic`` SDK over HTTP on 127.0.0.1; nothing
of the SDK or of the core is mocked.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.testing import ErrorReply, ModelRequest, Reply, ScriptedModelServer, ToolCall
from tests.peers import by_extra, extra
from tests.worlds import ENV

pytestmark = pytest.mark.anyio

PROVIDERS = by_extra("openai", "anthropic")

WRONG = ToolCall("get_customer", {"customerID": "CUS-001"})  # the wrong key: invalid_input
READ = ToolCall("get_customer", {"customerId": "CUS-001"})
BLOCK = ToolCall("block_customer", {"customerId": "CUS-001"})


def make_agent(provider: str, server: ScriptedModelServer, **options: Any) -> Any:
    if provider == "openai":
        return agents.openai_chat("scripted-gpt", base_url=server.base_url, **options)
    return agents.anthropic("scripted-claude", base_url=server.url, **options)


def events(result: silo.RunResult, kind: str) -> list[dict[str, Any]]:
    return [e for e in result.trace if e["type"] == kind]


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_two_calls_in_one_reply_run_in_order_and_the_model_recovers(
    anyio_backend: str, provider: str
) -> None:
    script = [
        Reply(text="Checking.", tool_calls=[WRONG, READ], input_tokens=100, output_tokens=20),
        Reply(tool_calls=[BLOCK], input_tokens=150, output_tokens=10),
        Reply(text="CUS-001 is blocked.", input_tokens=180, output_tokens=8),
    ]
    async with ScriptedModelServer(script) as server:
        result = await silo.run(ENV, "TASK-BLOCK", make_agent(provider, server))
    assert result.passed and result.termination_reason == "completed", result.error
    assert result.agent_output == "CUS-001 is blocked."
    assert result.agent_name == f"{provider}/scripted-{'gpt' if provider == 'openai' else 'claude'}"
    assert (result.tool_calls, result.tool_errors) == (3, 1)
    calls = events(result, "tool_call")
    assert [c["input"] for c in calls] == [WRONG.input, READ.input, BLOCK.input]
    steps = events(result, "model_step")
    stops = ["tool_calls", "tool_calls", "stop"]
    if provider == "anthropic":
        stops = ["tool_use", "tool_use", "end_turn"]
    assert [s["stopReason"] for s in steps] == stops
    assert all(s["model"].startswith("scripted-") for s in steps)
    assert all(s["durationMs"] > 0 and s["attempts"] == 1 for s in steps)
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (3, 430, 38)
    assert [s["usage"] for s in steps] == [
        {"inputTokens": 100, "outputTokens": 20},
        {"inputTokens": 150, "outputTokens": 10},
        {"inputTokens": 180, "outputTokens": 8},
    ]
    first = steps[0]["message"]
    assert first["role"] == "assistant" and first["content"] == "Checking."
    assert [(c["name"], c["input"]) for c in first["toolCalls"]] == [
        (WRONG.name, WRONG.input),
        (READ.name, READ.input),
    ]
    assert steps[2]["message"] == {
        "role": "assistant",
        "content": "CUS-001 is blocked.",
        "toolCalls": [],
    }
    # Each response is recorded before its calls run.
    seqs = [(e["type"], e["seq"]) for e in result.trace if e["type"] in ("model_step", "tool_call")]
    assert [t for t, _ in seqs] == [
        "model_step",
        "tool_call",
        "tool_call",
        "model_step",
        "tool_call",
        "model_step",
    ]
    # The second request answered both calls, each by its own id, the rejection as a value.
    ids = [c["id"] for c in first["toolCalls"]]
    seen = server.requests[1].last_results
    assert [r.id for r in seen] == ids and len(set(ids)) == 2
    error = json.loads(seen[0].content)
    assert error["code"] == "invalid_input" and "customerId" in error["message"]
    assert json.loads(seen[1].content)["id"] == "CUS-001"
    if provider == "anthropic":
        assert [r.is_error for r in seen] == [True, False]


async def test_a_429_is_retried_by_the_sdk_and_counted_once(
    anyio_backend: str, provider: str
) -> None:
    script: list[Any] = [
        ErrorReply(429),
        Reply(tool_calls=[BLOCK], input_tokens=40, output_tokens=7),
        ErrorReply(503),
        ErrorReply(500),
        Reply(text="done", input_tokens=60, output_tokens=3),
    ]
    async with ScriptedModelServer(script) as server:
        result = await silo.run(ENV, "TASK-BLOCK", make_agent(provider, server))
    assert result.passed, result.error
    steps = events(result, "model_step")
    assert [s["attempts"] for s in steps] == [2, 3]
    assert [s["usage"] for s in steps] == [
        {"inputTokens": 40, "outputTokens": 7},
        {"inputTokens": 60, "outputTokens": 3},
    ]
    assert len(server.requests) == 5
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (2, 100, 10)
    # The retry resent the same conversation: the SDK's retry, not a second loop of ours.
    assert server.requests[0].body == server.requests[1].body


async def test_no_second_retry_layer_on_top_of_the_sdk(anyio_backend: str, provider: str) -> None:
    async with ScriptedModelServer([ErrorReply(429)] * 3) as server:
        result = await silo.run(ENV, "TASK-BLOCK", make_agent(provider, server, max_retries=1))
    assert result.termination_reason == "agent_error"
    # the SDK gave up: a model failure, not the agent's (DESIGN section 14)
    assert (result.error or "").startswith("ModelError: RateLimitError: ")
    assert (result.reward_valid, result.invalid_reason) == (False, "model_error")
    assert len(server.requests) == 2  # 1 + max_retries, and nothing more
    assert events(result, "model_step") == []


async def test_max_turns_runs_the_last_replys_calls_and_keeps_the_last_text(
    anyio_backend: str, provider: str
) -> None:
    def endless(request: ModelRequest) -> Reply:
        return Reply(text=f"turn {request.turn}", tool_calls=[READ])

    async with ScriptedModelServer(endless) as server:
        result = await silo.run(ENV, "TASK-ANSWER", make_agent(provider, server, max_turns=3))
    assert result.termination_reason == "completed", result.error
    assert len(server.requests) == 3 and len(events(result, "model_step")) == 3
    assert result.tool_calls == 3  # the third reply's call still ran
    assert result.agent_output == "turn 2"


async def test_a_final_reply_without_text_keeps_the_last_text(
    anyio_backend: str, provider: str
) -> None:
    script = [Reply(text="The answer is 2", tool_calls=[READ]), Reply()]
    async with ScriptedModelServer(script) as server:
        result = await silo.run(ENV, "TASK-ANSWER", make_agent(provider, server))
    assert result.agent_output == "The answer is 2"


async def test_unknown_tools_are_fed_back_as_values(anyio_backend: str, provider: str) -> None:
    script: list[Any] = [
        Reply(tool_calls=[ToolCall("get_custmer", {"customerId": "CUS-001"})]),
        "2",
    ]
    async with ScriptedModelServer(script) as server:
        result = await silo.run(ENV, "TASK-ANSWER", make_agent(provider, server))
    assert result.passed and result.tool_errors == 1
    fed_back = json.loads(server.requests[1].last_results[0].content)
    assert fed_back["code"] == "tool_not_found" and "get_customer" in fed_back["message"]


async def test_a_server_error_the_sdk_gives_up_on_is_an_agent_error(
    anyio_backend: str, provider: str
) -> None:
    async with ScriptedModelServer([]) as server:  # nothing scripted: a 500, not retried
        result = await silo.run(ENV, "TASK-ANSWER", make_agent(provider, server))
    assert result.termination_reason == "agent_error"
    assert (result.error or "").startswith("ModelError: InternalServerError: ")
    assert "no reply left" in (result.error or "")
    assert (result.reward_valid, result.invalid_reason) == (False, "model_error")
    (crash,) = events(result, "agent_error")
    assert crash["error"]["type"] == "ModelError"
    assert "InternalServerError" in crash["error"]["traceback"]  # the SDK's error is its cause
    assert "Traceback" in crash["error"]["traceback"]
    assert len(server.requests) == 1


async def test_a_given_client_is_used_as_is_and_left_open(
    anyio_backend: str, provider: str
) -> None:
    import anthropic
    import openai

    async with ScriptedModelServer(["2", "2"]) as server:
        client: Any
        if provider == "openai":
            client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
            agent = agents.openai_chat("m", client=client)
        else:
            client = anthropic.AsyncAnthropic(base_url=server.url, api_key="k", max_retries=0)
            agent = agents.anthropic("m", client=client)
        async with client:
            for _ in range(2):
                result = await silo.run(ENV, "TASK-ANSWER", agent)
                assert result.passed, result.error
                assert not client.is_closed()
    assert len(server.requests) == 2


def test_a_client_and_a_base_url_conflict() -> None:
    with pytest.raises(ValueError, match="client= already has"):
        agents.openai_chat("m", client=object(), base_url="http://127.0.0.1:1/v1")


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"max_turns": 0}, "max_turns"),
        ({"max_retries": -1}, "max_retries"),
        ({"request_timeout": 0}, "request_timeout"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"temperature": float("nan")}, "temperature"),
    ],
)
@pytest.mark.parametrize("factory", [agents.openai_chat, agents.anthropic])
def test_bad_keywords_are_refused_when_the_agent_is_made(
    factory: Callable[..., Any], options: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        factory("m", base_url="http://127.0.0.1:1", **options)


@pytest.mark.parametrize(
    ("factory", "key", "url"),
    [
        pytest.param(
            agents.openai_chat, "OPENAI_API_KEY", "OPENAI_BASE_URL", marks=extra("openai")
        ),
        pytest.param(
            agents.anthropic, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", marks=extra("anthropic")
        ),
    ],
)
def test_no_key_and_no_server_is_model_invalid(
    monkeypatch: pytest.MonkeyPatch, factory: Callable[..., Any], key: str, url: str
) -> None:
    monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv(url, raising=False)
    with pytest.raises(silo.SiloError, match=key) as caught:
        factory("m")
    assert caught.value.code == "model_invalid"
    monkeypatch.setenv(key, "sk-test")
    assert callable(factory("m"))  # the SDK's own variable is enough


@extra("openai")
async def test_chat_request_shape(anyio_backend: str) -> None:
    async with ScriptedModelServer(["2", "2"]) as server:
        options = {"system": "Be brief.", "max_output_tokens": 64, "temperature": 0.2}
        await silo.run(ENV, "TASK-ANSWER", make_agent("openai", server, **options))
        await silo.run(ENV, "TASK-ANSWER", make_agent("openai", server))
    full, bare = (r.body for r in server.requests)
    assert full["model"] == "scripted-gpt"
    assert full["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "How many customers are there?"},
    ]
    assert (full["max_completion_tokens"], full["temperature"]) == (64, 0.2)
    specs = [t.spec.to_dict() for t in silo.bind_tools(ENV.create_state(), ENV.tools)]
    assert full["tools"] == [
        {
            "type": "function",
            "function": {
                "name": s["name"],
                "description": s["description"],
                "parameters": s["inputSchema"],
            },
        }
        for s in specs
    ]
    assert set(bare) == {"model", "messages", "tools"}


@extra("anthropic")
async def test_messages_request_shape(anyio_backend: str) -> None:
    async with ScriptedModelServer(["2", "2"]) as server:
        options = {"system": "Be brief.", "max_output_tokens": 64, "temperature": 0.2}
        await silo.run(ENV, "TASK-ANSWER", make_agent("anthropic", server, **options))
        await silo.run(ENV, "TASK-ANSWER", make_agent("anthropic", server))
    full, bare = (r.body for r in server.requests)
    assert full["model"] == "scripted-claude" and full["system"] == "Be brief."
    assert full["messages"] == [{"role": "user", "content": "How many customers are there?"}]
    assert (full["max_tokens"], full["temperature"]) == (64, 0.2)
    specs = [t.spec.to_dict() for t in silo.bind_tools(ENV.create_state(), ENV.tools)]
    assert full["tools"] == [
        {"name": s["name"], "description": s["description"], "input_schema": s["inputSchema"]}
        for s in specs
    ]
    assert bare["max_tokens"] == agents._anthropic.DEFAULT_MAX_TOKENS
    assert set(bare) == {"model", "messages", "tools", "max_tokens"}


@extra("openai")
async def test_arguments_that_are_not_json_are_rejected_as_a_value(anyio_backend: str) -> None:
    script: list[Any] = [Reply(tool_calls=[ToolCall("get_customer", '{"customerId": "CUS')]), "2"]
    async with ScriptedModelServer(script) as server:
        result = await silo.run(ENV, "TASK-ANSWER", make_agent("openai", server))
    assert result.passed and result.tool_errors == 1
    (step, _) = events(result, "model_step")
    assert step["message"]["toolCalls"][0]["input"] == '{"customerId": "CUS'
    assert json.loads(server.requests[1].last_results[0].content)["code"] == "invalid_input"
    # The model's own text goes back in the assistant message, unchanged.
    sent = server.requests[1].messages[1]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"customerId": "CUS'


async def test_token_limit_stops_a_model_agent_before_it_acts(
    anyio_backend: str, provider: str
) -> None:
    script = [
        Reply(tool_calls=[READ], input_tokens=50, output_tokens=10),
        Reply(tool_calls=[BLOCK], input_tokens=70, output_tokens=10),  # 140 >= 120
        Reply(text="never asked"),
    ]
    async with ScriptedModelServer(script) as server:
        agent = make_agent(provider, server)
        result = await silo.run(ENV, "TASK-BLOCK", agent, token_limit=120)
    assert result.termination_reason == "max_tokens"
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (2, 120, 20)
    assert result.tool_calls == 1  # the over-budget response's call never ran
    assert not result.passed and len(server.requests) == 2


async def test_under_the_token_limit_nothing_changes(anyio_backend: str, provider: str) -> None:
    script: list[Any] = [Reply(tool_calls=[BLOCK], input_tokens=50, output_tokens=10), "done"]
    async with ScriptedModelServer(script) as server:
        agent = make_agent(provider, server)
        result = await silo.run(ENV, "TASK-BLOCK", agent, token_limit=1000)
    assert result.passed and result.termination_reason == "completed"
    assert result.input_tokens + result.output_tokens == 75


async def test_the_time_limit_stops_a_model_that_hangs(anyio_backend: str, provider: str) -> None:
    replied = threading.Event()

    def slow(request: ModelRequest) -> Reply:
        # The server's own thread: the model answers only once the run has returned, so a
        # run that returns was cancelled in flight, not after the reply (no clock to race).
        replied.wait(60)
        return Reply(text="too late")

    async with ScriptedModelServer(slow) as server:
        try:
            result = await silo.run(ENV, "TASK-ANSWER", make_agent(provider, server), timeout=0.05)
        finally:
            replied.set()
    assert result.termination_reason == "timeout"
    assert events(result, "model_step") == [] and result.agent_output != "too late"


@extra("anthropic")
async def test_thinking_blocks_go_back_as_received_and_cached_tokens_count(
    anyio_backend: str,
) -> None:
    thinking = {"type": "thinking", "thinking": "CUS-001 first.", "signature": "c2ln"}
    use = {"type": "tool_use", "id": "toolu_x", "name": "get_customer", "input": READ.input}
    first = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [thinking, {"type": "text", "text": "Reading."}, use],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 1000,
            "output_tokens": 5,
        },
    }
    async with ScriptedModelServer([first, "2"]) as server:
        result = await silo.run(ENV, "TASK-ANSWER", make_agent("anthropic", server))
    assert result.passed, result.error
    echoed = server.requests[1].messages[1]
    assert echoed["content"][0] == thinking and echoed["content"][2]["id"] == "toolu_x"
    step = events(result, "model_step")[0]
    assert step["usage"] == {"inputTokens": 1110, "outputTokens": 5}
    assert step["message"]["content"] == "Reading."


@extra("openai")
async def test_chat_calls_without_ids_are_still_paired(anyio_backend: str) -> None:
    calls = [
        {"type": "function", "function": {"name": "get_customer", "arguments": ""}},
        {"type": "function", "function": {"name": "get_customer", "arguments": "{}"}},
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    body = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
    body["choices"] = [choice]  # and no usage at all
    async with ScriptedModelServer([body, "2"]) as server:
        result = await silo.run(ENV, "TASK-ANSWER", make_agent("openai", server))
    assert result.passed and result.tool_errors == 2  # {} lacks customerId: rejected, as values
    assert [r.id for r in server.requests[1].last_results] == ["call_0", "call_1"]
    sent = server.requests[1].messages[1]["tool_calls"]
    assert [c["id"] for c in sent] == ["call_0", "call_1"]
    assert [c["function"]["arguments"] for c in sent] == ["{}", "{}"]
    step = events(result, "model_step")[0]
    assert step["usage"] == {"inputTokens": None, "outputTokens": None}
    assert (result.model_steps, result.input_tokens) == (2, 10)  # only the answer had usage
