"""ScriptedModelServer on its own: both protocols, errors, recording, sync and async use."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from silo_async.testing import ErrorReply, ModelRequest, Reply, ScriptedModelServer, ToolCall

from .peers import require_extra

require_extra("openai")
require_extra("anthropic")

import anthropic  # noqa: E402 - after the check
import openai  # noqa: E402 - after the check


def post(url: str, body: Any, path: str = "/v1/chat/completions") -> tuple[int, Any, Any]:
    request = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read()), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers


def test_sync_use_with_the_openai_sdk() -> None:
    script = [Reply(text="hi", tool_calls=[ToolCall("lookup", {"q": 1})], input_tokens=7)]
    with ScriptedModelServer(script) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k")
        done: Any = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Find q."}]
        )
        client.close()
    choice = done.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content == "hi"
    call = choice.message.tool_calls[0]
    assert call.function.name == "lookup" and json.loads(call.function.arguments) == {"q": 1}
    assert done.usage.prompt_tokens == 7 and done.usage.completion_tokens == 5
    (seen,) = server.requests
    assert (seen.protocol, seen.model, seen.task, seen.turn) == ("chat", "m", "Find q.", 0)


def test_sync_use_with_the_anthropic_sdk() -> None:
    with ScriptedModelServer([Reply(text="hello", output_tokens=3)]) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="k")
        message: Any = client.messages.create(
            model="c", max_tokens=10, messages=[{"role": "user", "content": "Hi"}]
        )
        client.close()
    assert message.stop_reason == "end_turn" and message.content[0].text == "hello"
    assert message.usage.output_tokens == 3
    assert server.requests[0].protocol == "messages"


def test_a_function_script_follows_the_conversation() -> None:
    def script(request: ModelRequest) -> Reply:
        return Reply(text=f"{request.turn}:{[r.content for r in request.last_results]}")

    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        ],
        "tools": [{"type": "function", "function": {"name": "t1", "parameters": {}}}],
    }
    with ScriptedModelServer(script) as server:
        status, data, _ = post(server.url, body)
    assert status == 200
    assert data["choices"][0]["message"]["content"] == "1:['r1']"
    (seen,) = server.requests
    assert seen.tool_names == ["t1"]
    assert [(r.id, r.content, r.is_error) for r in seen.tool_results] == [("c1", "r1", None)]


def test_messages_tool_results_are_read_with_is_error() -> None:
    body = {
        "model": "c",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "task"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "t"}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": "no", "is_error": True}
                ],
            },
        ],
        "tools": [{"name": "t", "input_schema": {}}],
    }
    with ScriptedModelServer(["ok"]) as server:
        status, data, _ = post(server.url, body, "/v1/messages")
    assert status == 200 and data["content"] == [{"type": "text", "text": "ok"}]
    seen = server.requests[0]
    assert seen.task == "task" and seen.turn == 1 and seen.tool_names == ["t"]
    assert [(r.id, r.content, r.is_error) for r in seen.last_results] == [("a", "no", True)]


def test_errors_exhaustion_and_unknown_paths() -> None:
    script: list[Any] = [ErrorReply(503, "busy", headers={"x-extra": "1"}), {"raw": True}]
    with ScriptedModelServer(script) as server:
        status, data, headers = post(server.url, {"model": "m"})
        assert (status, data["error"]["message"]) == (503, "busy")
        assert headers["retry-after-ms"] == "1" and headers["x-extra"] == "1"
        assert post(server.url, {"model": "m"})[:2] == (200, {"raw": True})
        status, data, headers = post(server.url, {"model": "m"}, "/v1/messages")
        assert status == 500 and "no reply left" in data["error"]["message"]
        assert headers["x-should-retry"] == "false"
        status, data, _ = post(server.url, {}, "/v1/embeddings")
        assert status == 404 and "chat/completions" in data["error"]["message"]
    assert len(server.requests) == 3  # the unknown path is not a model request


def test_a_script_that_raises_is_answered_and_reraised_at_exit() -> None:
    def broken(request: ModelRequest) -> Reply:
        raise KeyError("oops")

    server = ScriptedModelServer(broken)
    with pytest.raises(KeyError, match="oops"), server:
        status, data, _ = post(server.url, {"model": "m"})
        assert status == 500 and "KeyError" in data["error"]["message"]
    assert len(server.errors) == 1


def test_urls_need_a_running_server() -> None:
    server = ScriptedModelServer([])
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.url
    with server:
        assert server.base_url.startswith("http://127.0.0.1:")
        with pytest.raises(RuntimeError, match="already running"):
            server.start()
    server.stop()  # stopping twice is harmless


@pytest.mark.anyio
async def test_async_use_on_both_backends(anyio_backend: str) -> None:
    texts = []
    async with ScriptedModelServer(["a", "b"]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k")
        async with client:
            for _ in range(2):
                done = await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "x"}]
                )
                texts.append(done.choices[0].message.content)
    assert texts == ["a", "b"]
