"""``agents.from_spec``, ``model_invalid``, lazy SDK imports and many rollouts on one server."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.agents._spec import parse_model_spec
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from tests.peers import by_extra, extra
from tests.worlds import ENV


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("spec", "model", "protocol"),
    [
        pytest.param("openai/gpt-4.1-mini", "gpt-4.1-mini", "chat", marks=extra("openai")),
        # vLLM names keep their slash
        pytest.param("OpenAI/Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "chat", marks=extra("openai")),
        pytest.param("anthropic/claude-test", "claude-test", "messages", marks=extra("anthropic")),
    ],
)
async def test_from_spec_picks_the_provider(
    anyio_backend: str, spec: str, model: str, protocol: str
) -> None:
    async with ScriptedModelServer(["2"]) as server:
        agent = agents.from_spec(spec, base_url=server.base_url, max_turns=2)
        result = await silo.run(ENV, "TASK-ANSWER", agent)
    assert result.passed, result.error
    (seen,) = server.requests
    assert (seen.model, seen.protocol) == (model, protocol)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4.1-mini", "is not PROVIDER/MODEL"),
        ("openai/", "is not PROVIDER/MODEL"),
        ("/gpt", "is not PROVIDER/MODEL"),
        ("mistral/large", 'unknown provider "mistral"; use one of: anthropic, openai'),
    ],
)
def test_bad_specs_are_model_invalid(spec: str, message: str) -> None:
    with pytest.raises(silo.SiloError, match=re.escape(message)) as caught:
        agents.from_spec(spec, base_url="http://127.0.0.1:1/v1")
    assert caught.value.code == "model_invalid"


def test_labels_are_parsed_only_when_asked() -> None:
    parsed = parse_model_spec("fast=openai/gpt-4.1-mini", allow_label=True)
    assert (parsed.label, parsed.provider, parsed.model) == ("fast", "openai", "gpt-4.1-mini")
    assert parse_model_spec("openai/gpt-4.1-mini").name == "openai/gpt-4.1-mini"
    assert parse_model_spec("openai/a=b", allow_label=True).model == "a=b"
    with pytest.raises(silo.SiloError, match="bad label"):
        parse_model_spec("bad label=openai/m", allow_label=True)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_missing_sdk_names_the_install_line(
    monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    monkeypatch.setitem(sys.modules, provider, None)  # what Python does for a missing package
    with pytest.raises(silo.SiloError) as caught:
        agents.from_spec(f"{provider}/m", base_url="http://127.0.0.1:1")
    assert caught.value.code == "model_invalid"
    assert f"pip install 'silo_async[{provider}]'" in caught.value.message


def test_nothing_imports_an_sdk_unless_asked() -> None:
    code = (
        "import sys, silo_async, silo_async.agents, silo_async.testing;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('openai', 'anthropic', 'httpx2')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _conversation(request: ModelRequest) -> Reply:
    """A model that makes up a nonce, looks it up twice, then answers it: mixing shows."""
    if request.turn == 0:
        return Reply(tool_calls=[ToolCall("get_customer", {"customerId": f"N{request.index}"})])
    nonce = re.findall(r"N\d+", request.tool_results[0].content)[0]
    assert all(nonce in r.content for r in request.tool_results), request.tool_results
    if request.turn == 1:
        return Reply(tool_calls=[ToolCall("get_customer", {"customerId": nonce})])
    return Reply(text=nonce)


@pytest.mark.anyio
@pytest.mark.parametrize("provider", by_extra("openai", "anthropic"))
async def test_200_concurrent_rollouts_keep_their_conversations(
    anyio_backend: str, provider: str
) -> None:
    async with ScriptedModelServer(_conversation) as server:
        url = server.base_url if provider == "openai" else server.url
        agent = agents.from_spec(f"{provider}/m", base_url=url)
        results = await silo.run_many(ENV, ["TASK-ANSWER"], agent, runs=200, concurrency=200)
    assert len(server.requests) == 600
    outputs = set()
    for result in results:
        assert result.termination_reason == "completed", result.error
        inputs = [e["input"]["customerId"] for e in result.trace if e["type"] == "tool_call"]
        assert inputs == [result.agent_output] * 2
        outputs.add(result.agent_output)
    assert len(outputs) == 200
