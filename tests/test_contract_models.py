"""Conformance to DESIGN.md section 9 (model agents, token accounting, agent_error).

One test per statement of the section, as a reader of DESIGN.md alone would check it. Every
model test runs the official ``openai`` or ``anthropic`` SDK over HTTP against
``silo_async.testing.ScriptedModelServer`` on 127.0.0.1: nothing of an SDK or of the core is
mocked.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import silo_async as silo
from silo_async import agents
from silo_async.cli._app import app
from silo_async.testing import ErrorReply, ModelRequest, Reply, ScriptedModelServer, ToolCall
from tests.browser import browser, needs_chromium, open_report
from tests.peers import by_extra, extra
from tests.test_contract import ENV

from .cli_support import cli

__all__ = ["browser"]  # the fixture, shared with pytest

pytestmark = pytest.mark.anyio

PROVIDERS = by_extra("openai", "anthropic")
KEY_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
BUMP = ToolCall("bump", {})


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """A base_url on loopback needs no key: none is set for any test here."""
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def model_agent(provider: str, server: ScriptedModelServer, **options: Any) -> Any:
    if provider == "openai":
        return agents.openai_chat("scripted-gpt", base_url=server.base_url, **options)
    return agents.anthropic("scripted-claude", base_url=server.url, **options)


def events(result: silo.RunResult, kind: str) -> list[dict[str, Any]]:
    return [e for e in result.trace if e["type"] == kind]


def counter(result: silo.RunResult) -> Any:
    return {s["field"]: s["to"] for s in result.state_diff["scalars"]}.get("counter", 0)


def solver(request: ModelRequest) -> Reply:
    """A model that bumps the counter once, then answers ok."""
    if request.turn == 0:
        return Reply(text="Bumping.", tool_calls=[BUMP], input_tokens=100, output_tokens=20)
    return Reply(text="ok", input_tokens=150, output_tokens=5)


# --- the factories ------------------------------------------------------------------------

KEYWORDS = {
    "base_url": None,
    "api_key": None,
    "client": None,
    "system": None,
    "max_turns": 50,
    "max_output_tokens": None,
    "temperature": None,
    "max_retries": 2,
    "request_timeout": 120.0,
}


#: Keywords one factory adds to section 9's (section 17: strict function calling; section 21:
#: exact tokens, and the policy version every model agent stamps).
EXTRA: dict[Any, dict[str, Any]] = {
    agents.openai_chat: {"strict": False, "token_ids": False, "policy_version": None},
    agents.anthropic: {"policy_version": None},
}


@pytest.mark.parametrize("factory", [agents.openai_chat, agents.anthropic])
def test_section9_factories_take_the_same_keywords_with_these_defaults(factory: Any) -> None:
    params = inspect.signature(factory).parameters
    assert next(iter(params)) == "model"
    given = {n: p.default for n, p in params.items() if n != "model"}
    assert given == {**KEYWORDS, **EXTRA[factory]}


@extra("openai")
@extra("anthropic")
def test_section9_each_factory_returns_an_ordinary_async_agent() -> None:
    loopback = "http://127.0.0.1:9/v1"
    made = [
        agents.openai_chat("gpt-4.1-mini", base_url=loopback),
        agents.anthropic("claude-sonnet-4-5", base_url=loopback),
        agents.from_spec("openai/gpt-4.1-mini", base_url=loopback),
        agents.from_spec("anthropic/claude-sonnet-4-5", base_url=loopback),
    ]
    for agent in made:
        assert inspect.iscoroutinefunction(agent)
        assert list(inspect.signature(agent).parameters) == ["ctx"]


@pytest.mark.parametrize("spec", ["nope/gpt-4.1-mini", "gpt-4.1-mini", "openai/"])
def test_section9_from_spec_refuses_an_unknown_provider_or_malformed_spec(spec: str) -> None:
    with pytest.raises(silo.SiloError) as caught:
        agents.from_spec(spec, base_url="http://127.0.0.1:9/v1")
    assert caught.value.code == "model_invalid"


def test_section9_importing_silo_async_agents_imports_no_sdk() -> None:
    code = (
        "import sys, silo_async, silo_async.agents, silo_async.testing\n"
        "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the loop -----------------------------------------------------------------------------


@extra("anthropic")
@extra("openai")
async def test_section9_from_spec_runs_the_named_provider(anyio_backend: str) -> None:
    async with ScriptedModelServer(solver) as server:
        chat = agents.from_spec("openai/scripted-gpt", base_url=server.base_url)
        messages = agents.from_spec("anthropic/scripted-claude", base_url=server.url)
        assert (await silo.run(ENV, "TASK-COUNT", chat)).passed
        assert (await silo.run(ENV, "TASK-COUNT", messages)).passed
    protocols = [(r.protocol, r.model) for r in server.requests]
    assert protocols == [("chat", "scripted-gpt")] * 2 + [("messages", "scripted-claude")] * 2
    assert server.requests[0].path.endswith("/chat/completions")
    assert server.requests[2].path.endswith("/messages")


async def test_section9_task_is_the_user_message_and_tools_are_in_the_providers_format(
    anyio_backend: str, provider: str
) -> None:
    async with ScriptedModelServer(solver) as server:
        result = await silo.run(ENV, "TASK-COUNT", model_agent(provider, server))
    assert result.passed and result.agent_output == "ok", result.error
    first = server.requests[0].body
    assert first["messages"] == [{"role": "user", "content": "Bump the counter once and say ok."}]
    specs = [t.spec.to_dict() for t in ENV.tools]
    if provider == "openai":
        expected = [
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
    else:
        expected = [
            {"name": s["name"], "description": s["description"], "input_schema": s["inputSchema"]}
            for s in specs
        ]
    assert first["tools"] == expected


async def test_section9_every_call_of_a_reply_runs_in_order_and_results_go_back_as_values(
    anyio_backend: str, provider: str
) -> None:
    wrong = ToolCall("get_opportunity", {"opportunityID": "OPP-004"})
    right = ToolCall("get_opportunity", {"opportunityId": "OPP-004"})
    script = [
        Reply(tool_calls=[wrong, ToolCall("no_such_tool", {}), right, BUMP]),
        Reply(text="ok"),
    ]
    async with ScriptedModelServer(script) as server:
        result = await silo.run(ENV, "TASK-COUNT", model_agent(provider, server))
    assert result.passed, result.error
    calls = events(result, "tool_call")
    assert [(c["tool"], c["input"]) for c in calls] == [
        (wrong.name, wrong.input),
        ("no_such_tool", {}),
        (right.name, right.input),
        ("bump", {}),
    ]
    ids = [c["id"] for c in events(result, "model_step")[0]["message"]["toolCalls"]]
    seen = server.requests[1].last_results
    assert [r.id for r in seen] == ids and len(set(ids)) == 4  # each answered by its own id
    outputs = [json.loads(r.content) for r in seen]
    assert outputs[0]["code"] == "invalid_input" and "opportunityId" in outputs[0]["message"]
    assert outputs[1]["code"] == "tool_not_found"
    assert outputs[2] == {"id": "OPP-004", "stage": "open"} and outputs[3] == 1
    if provider == "anthropic":  # all results of one reply in one user message
        last = server.requests[1].body["messages"][-1]
        assert last["role"] == "user" and len(last["content"]) == 4
        assert [r.is_error for r in seen] == [True, True, False, False]
    else:
        tail = server.requests[1].body["messages"][-4:]
        assert [m["role"] for m in tail] == ["tool"] * 4


async def test_section9_every_response_is_a_model_step_recorded_before_its_calls(
    anyio_backend: str, provider: str
) -> None:
    async with ScriptedModelServer(solver) as server:
        result = await silo.run(ENV, "TASK-COUNT", model_agent(provider, server))
    steps = events(result, "model_step")
    assert len(steps) == 2 == len(server.requests)
    for step in steps:
        assert {"model", "usage", "stopReason", "durationMs", "attempts", "message"} <= set(step)
        assert step["model"].startswith("scripted-") and step["attempts"] == 1
        assert isinstance(step["durationMs"], int | float) and step["durationMs"] >= 0
        assert step["stopReason"]
    assert [s["usage"] for s in steps] == [
        {"inputTokens": 100, "outputTokens": 20},
        {"inputTokens": 150, "outputTokens": 5},
    ]
    # The message holds the assistant's text and its tool calls (a transcript can be rebuilt).
    first = steps[0]["message"]
    assert first["role"] == "assistant" and first["content"] == "Bumping."
    assert [(c["name"], c["input"]) for c in first["toolCalls"]] == [("bump", {})]
    assert steps[1]["message"]["content"] == "ok" and steps[1]["message"]["toolCalls"] == []
    kinds = [e["type"] for e in result.trace if e["type"] in ("model_step", "tool_call")]
    assert kinds == ["model_step", "tool_call", "model_step"]
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (2, 250, 25)


async def test_section9_max_turns_runs_the_last_replys_calls_and_keeps_the_last_text(
    anyio_backend: str, provider: str
) -> None:
    def busy(request: ModelRequest) -> Reply:
        text = "ok" if request.turn == 0 else None  # the last text so far is from turn 0
        return Reply(text=text, tool_calls=[BUMP])

    async with ScriptedModelServer(busy) as server:
        result = await silo.run(ENV, "TASK-COUNT", model_agent(provider, server, max_turns=3))
    assert len(server.requests) == 3 and result.model_steps == 3
    assert result.tool_calls == 3 and counter(result) == 3  # the 3rd reply's call still ran
    assert result.termination_reason == "completed"
    assert result.agent_output == "ok" and result.passed


async def test_section9_the_last_text_so_far_is_the_output_when_the_run_is_stopped(
    anyio_backend: str, provider: str
) -> None:
    def busy(request: ModelRequest) -> Reply:
        return Reply(text="ok" if request.turn == 0 else None, tool_calls=[BUMP])

    async with ScriptedModelServer(busy) as server:
        agent = model_agent(provider, server)
        result = await silo.run(ENV, "TASK-COUNT", agent, max_tool_calls=2)
    assert result.termination_reason == "max_tool_calls"
    assert result.agent_output == "ok" and result.passed  # kept current with set_output


async def test_section9_system_sampling_and_output_cap_reach_the_request(
    anyio_backend: str, provider: str
) -> None:
    options = {"system": "Be brief.", "temperature": 0.25, "max_output_tokens": 64}
    async with ScriptedModelServer(["ok"]) as server:
        result = await silo.run(ENV, "TASK-COUNT", model_agent(provider, server, **options))
    assert result.agent_output == "ok"
    body = server.requests[0].body
    assert body["temperature"] == 0.25
    if provider == "openai":
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert 64 in (body.get("max_completion_tokens"), body.get("max_tokens"))
    else:
        assert body["system"] == "Be brief." and body["max_tokens"] == 64


async def test_section9_keys_come_from_api_key_or_the_sdks_variable(
    anyio_backend: str, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def header(request: ModelRequest) -> str:
        if "x-api-key" in request.headers:  # Anthropic's classic header; newer SDKs use Bearer
            return "Bearer " + request.headers["x-api-key"]
        return request.headers["authorization"]

    async with ScriptedModelServer(["ok", "ok"]) as server:
        await silo.run(ENV, "TASK-COUNT", model_agent(provider, server, api_key="given-key"))
        monkeypatch.setenv(f"{provider.upper()}_API_KEY", "variable-key")
        await silo.run(ENV, "TASK-COUNT", model_agent(provider, server))
    assert [header(r) for r in server.requests] == ["Bearer given-key", "Bearer variable-key"]


async def test_section9_retries_are_the_sdks_own_counted_in_attempts_tokens_once(
    anyio_backend: str, provider: str
) -> None:
    script: list[Any] = [ErrorReply(429), ErrorReply(503), Reply(text="ok", input_tokens=9)]
    async with ScriptedModelServer(script) as server:
        result = await silo.run(ENV, "TASK-COUNT", model_agent(provider, server))
    assert len(server.requests) == 3
    (step,) = events(result, "model_step")
    assert step["attempts"] == 3 and step["usage"]["inputTokens"] == 9
    assert result.input_tokens == 9


async def test_section9_max_retries_zero_means_one_attempt_no_second_layer(
    anyio_backend: str, provider: str
) -> None:
    async with ScriptedModelServer([ErrorReply(429), "ok"]) as server:
        agent = model_agent(provider, server, max_retries=0)
        result = await silo.run(ENV, "TASK-COUNT", agent)
    assert len(server.requests) == 1
    assert result.termination_reason == "agent_error" and result.error


# --- token accounting ---------------------------------------------------------------------


def test_section9_token_limit_keyword_everywhere_and_max_tokens_is_a_reason() -> None:
    for fn in (silo.run, silo.run_many, silo.evaluate, silo.episode):
        param = inspect.signature(fn).parameters["token_limit"]
        assert param.default is None and param.kind is param.KEYWORD_ONLY, fn
    assert "max_tokens" in silo.TERMINATION_REASONS


async def test_section9_token_limit_stops_a_model_agent(anyio_backend: str, provider: str) -> None:
    def busy(request: ModelRequest) -> Reply:
        return Reply(tool_calls=[BUMP], input_tokens=40, output_tokens=10)

    async with ScriptedModelServer(busy) as server:
        agent = model_agent(provider, server)
        result = await silo.run(ENV, "TASK-COUNT", agent, token_limit=120)
    assert result.termination_reason == "max_tokens"
    assert (result.model_steps, result.input_tokens + result.output_tokens) == (3, 150)
    assert result.tool_calls == 2  # the response over budget is not acted upon


async def test_section9_token_limit_stops_any_agent_that_records_usage(anyio_backend: str) -> None:
    done: list[int] = []

    async def thrifty(ctx: silo.AgentContext) -> str:
        for i in range(10):
            ctx.record_model_step(model="mine", input_tokens=6, output_tokens=4)
            await ctx.call_tool("bump", {})
            done.append(i)
        return "ok"

    result = await silo.run(ENV, "TASK-COUNT", thrifty, token_limit=30)
    assert result.termination_reason == "max_tokens"
    assert result.input_tokens + result.output_tokens == 30 and len(done) == 2
    many = await silo.run_many(ENV, ["TASK-COUNT"], thrifty, runs=2, token_limit=30)
    assert [r.termination_reason for r in many] == ["max_tokens"] * 2


async def test_section9_evaluate_takes_the_token_limit(anyio_backend: str, tmp_path: Path) -> None:
    async def thrifty(ctx: silo.AgentContext) -> str:
        ctx.record_model_step(model="mine", input_tokens=6, output_tokens=4)
        await ctx.call_tool("bump", {})
        return "ok"

    summary = await silo.evaluate(
        ENV, ["TASK-COUNT"], {"a": thrifty}, token_limit=5, out_dir=tmp_path / "ev"
    )
    data = json.loads((tmp_path / "ev" / "summary.json").read_text())
    assert data["agents"][0]["terminationReasons"]["max_tokens"] == 1
    assert summary is not None


async def test_section9_result_json_gains_token_keys_after_tool_faults(
    anyio_backend: str, tmp_path: Path
) -> None:
    async def plain(ctx: silo.AgentContext) -> str:
        return "ok"

    async def counted(ctx: silo.AgentContext) -> str:
        ctx.record_model_step(model="m", input_tokens=11, output_tokens=7)
        ctx.record_model_step(model="m", input_tokens=1, output_tokens=2)
        return "ok"

    for agent, expected in [(plain, [0, 0, 0]), (counted, [2, 12, 9])]:
        result = await silo.run(ENV, "TASK-COUNT", agent, runs_dir=tmp_path)
        assert result.run_dir is not None
        data = json.loads((result.run_dir / "result.json").read_text())
        keys = list(data)
        at = keys.index("toolFaults")
        # after toolFaults: section 14's fault counts right after it, then the token keys
        assert keys[at + 1 : at + 3] == ["injectedFaults", "recoveredFaults"]
        assert keys[at + 3 : at + 6] == ["modelSteps", "inputTokens", "outputTokens"]
        assert [data["modelSteps"], data["inputTokens"], data["outputTokens"]] == expected


# --- agent_error --------------------------------------------------------------------------


async def test_section9_an_agent_that_raises_keeps_its_exception(anyio_backend: str) -> None:
    async def crashing(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        empty: dict[str, str] = {}
        return empty["content"]

    result = await silo.run(ENV, "TASK-COUNT", crashing)
    assert result.termination_reason == "agent_error"
    assert result.error == "KeyError: 'content'"
    (event,) = events(result, "agent_error")
    assert set(event["error"]) == {"type", "message", "traceback"}
    assert event["error"]["type"] == "KeyError" and event["error"]["message"] == "'content'"
    assert "Traceback" in event["error"]["traceback"] and "crashing" in event["error"]["traceback"]


# --- ScriptedModelServer ------------------------------------------------------------------


@extra("anthropic")
@extra("openai")
def test_section9_scripted_model_server_is_loopback_and_records_requests() -> None:
    import anthropic
    import openai

    def replies(request: ModelRequest) -> Reply:
        return Reply(text=f"{request.protocol} reply to {request.task}")

    with ScriptedModelServer(replies) as server:
        assert re.match(r"^http://127\.0\.0\.1:\d+", server.url)
        chat = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        said = chat.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        messages = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)
        told = messages.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "yo"}]
        )
        chat.close()
        messages.close()
    assert said.choices[0].message.content == "chat reply to hi"
    assert told.content[0].type == "text" and told.content[0].text == "messages reply to yo"
    assert [(r.protocol, r.body["messages"]) for r in server.requests] == [
        ("chat", [{"role": "user", "content": "hi"}]),
        ("messages", [{"role": "user", "content": "yo"}]),
    ]


@extra("openai")
def test_section9_scripted_model_server_plays_a_list_of_replies_in_order() -> None:
    import openai

    with ScriptedModelServer(["first", Reply(text="second")]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        texts = [
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
            .choices[0]
            .message.content
            for _ in range(2)
        ]
        client.close()
    assert texts == ["first", "second"]


# --- the CLI ------------------------------------------------------------------------------


def cli_in_thread(*args: str) -> Result:
    """The CLI on a thread of its own (the browser test's Playwright holds this one's loop)."""
    box: list[Result] = []
    thread = threading.Thread(target=lambda: box.append(CliRunner().invoke(app, list(args))))
    thread.start()
    thread.join()
    return box[0]


def one_error_line(result: Result, code: str) -> str:
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {code}: "), result.stderr
    return lines[0]


def crm_model(request: ModelRequest) -> Reply:
    """A model that reads the clock once, then answers."""
    if request.turn == 0:
        return Reply(tool_calls=[ToolCall("get_current_time", {})], input_tokens=30)
    return Reply(text="It is Monday.", input_tokens=40, output_tokens=6)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli_in_thread("init", "sales", "--template", "crm").exit_code == 0
    (tmp_path / "noop.py").write_text("async def agent(ctx):\n    return 'nothing'\n")
    (tmp_path / "crash.py").write_text(
        "async def agent(ctx):\n    await ctx.call_tool('get_current_time', {})\n"
        "    return {}['content']\n"
    )
    return tmp_path


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(crm_model) as running:
        yield running


def run_json(*args: str) -> dict[str, Any]:
    result = cli("run", "--env", "sales", "--task", "TASK-001", *args, "--json")
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_section9_cli_run_model_and_base_url(
    project: Path, server: ScriptedModelServer, provider: str, backend: str
) -> None:
    url = server.base_url if provider == "openai" else server.url
    result = cli(
        "--backend", backend, "run", "--env", "sales", "--task", "TASK-001",
        "--model", f"{provider}/scripted", "--base-url", url, "--json",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.stdout)
    assert data["agentOutput"] == "It is Monday." and data["toolCalls"] == 1
    assert (data["modelSteps"], data["inputTokens"], data["outputTokens"]) == (2, 70, 11)
    assert [r.model for r in server.requests] == ["scripted", "scripted"]


@extra("openai")
def test_section9_cli_run_max_turns_and_token_limit(
    project: Path, server: ScriptedModelServer
) -> None:
    url = server.base_url
    turned = run_json("--model", "openai/m", "--base-url", url, "--max-turns", "1")
    assert turned["modelSteps"] == 1 and turned["terminationReason"] == "completed"
    limited = run_json("--model", "openai/m", "--base-url", url, "--token-limit", "20")
    assert limited["terminationReason"] == "max_tokens" and limited["toolCalls"] == 0
    plain = run_json("--agent", "noop.py", "--token-limit", "20")
    assert plain["terminationReason"] == "completed"


@extra("anthropic")
@extra("openai")
def test_section9_cli_eval_models_repeatable_beside_agent(
    project: Path, server: ScriptedModelServer
) -> None:
    out = project / "ev"
    result = cli(
        "eval", "--env", "sales", "--task", "TASK-001", "--agent", "noop.py",
        "--model", "openai/m", "--model", "claude=anthropic/m", "--base-url", server.base_url,
        "--max-turns", "5", "--token-limit", "1000", "--out", str(out), "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert sorted(a["agent"] for a in summary["agents"]) == ["claude", "noop", "openai/m"]
    assert {r.protocol for r in server.requests} == {"chat", "messages"}


@pytest.mark.parametrize("spec", ["nope/m", "m", "=openai/m"])
def test_section9_cli_unknown_provider_or_bad_spec_is_model_invalid(
    project: Path, spec: str
) -> None:
    result = cli("run", "--env", "sales", "--task", "TASK-001", "--model", spec)
    one_error_line(result, "model_invalid")
    evaluated = cli("eval", "--env", "sales", "--model", spec, "--out", str(project / "ev"))
    one_error_line(evaluated, "model_invalid")


@pytest.mark.parametrize("provider_name", ["openai", "anthropic"])
def test_section9_cli_missing_sdk_is_model_invalid_naming_the_install(
    project: Path, provider_name: str
) -> None:
    code = (
        "import sys\n"
        f"sys.modules[{provider_name!r}] = None  # as if the extra were not installed\n"
        "from silo_async.cli import main\n"
        "sys.argv = ['silo-async', *sys.argv[1:]]\n"
        "main()\n"
    )
    args = ["run", "--env", "sales", "--task", "TASK-001"]
    args += ["--model", f"{provider_name}/m", "--base-url", "http://127.0.0.1:9/v1"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=project
    )
    assert done.returncode == 1, done.stderr
    line = done.stderr.strip().splitlines()
    assert len(line) == 1 and line[0].startswith("error: model_invalid: "), done.stderr
    assert f"pip install 'silo_async[{provider_name}]'" in line[0]


def test_section9_cli_runs_show_and_run_traceback_print_the_traceback(project: Path) -> None:
    ran = cli("run", "--env", "sales", "--task", "TASK-001", "--agent", "crash.py", "--traceback")
    assert ran.exit_code == 1
    assert "Traceback (most recent call last)" in ran.output and "KeyError: 'content'" in ran.output
    run_id = run_json("--agent", "crash.py")["runId"]
    shown = cli("runs", "show", run_id)
    assert shown.exit_code == 0, shown.output
    assert "Traceback (most recent call last)" in shown.output
    assert 'crash.py", line 3, in agent' in shown.output


@extra("openai")
def test_section9_summary_json_and_md_show_tokens_per_task_and_agent(
    project: Path, server: ScriptedModelServer
) -> None:
    out = project / "ev"
    result = cli(
        "eval", "--env", "sales", "--task", "TASK-001", "--model", "openai/m",
        "--base-url", server.base_url, "--runs", "2", "--out", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())

    def tokens(entry: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in entry.items() if "tokens" in k.lower()}

    (agent,) = summary["agents"]
    (task,) = summary["tasks"]
    for entry in (agent, task["agents"]["openai/m"]):
        figures = tokens(entry)
        assert 140 in figures.values() and 22 in figures.values(), figures  # totals in / out
    md = (out / "summary.md").read_text()
    assert re.search(r"tokens", md, re.I) and "70" in md and "162" in md


@extra("openai")
@needs_chromium
def test_section9_report_html_shows_tokens_per_task_and_agent(
    project: Path, server: ScriptedModelServer, browser: Any
) -> None:
    out = project / "ev"
    evaluated = subprocess.run(
        [
            sys.executable, "-m", "silo_async", "eval", "--env", "sales", "--task", "TASK-001",
            "--model", "openai/m", "--base-url", server.base_url, "--runs", "2", "--out", str(out),
        ],
        capture_output=True, text=True, cwd=project,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    page = open_report(browser, out / "report.html")
    try:
        text = page.text_content("body")  # the task sections are folded: read them too
    finally:
        page.close()
    # 2 rollouts x (70 in + 11 out): means 70 / 11, 162 in all; in the agents table and
    # in the task's statistics.
    assert text.count("70 in / 11 out, 162 total") >= 2, text
