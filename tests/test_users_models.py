"""Model agents and model users in conversational tasks, on a scripted model server (§9, §13).

The official SDKs talk HTTP to a ``ScriptedModelServer`` on 127.0.0.1; one server plays both
sides, telling a model user's requests (their first message starts with "# Who you are") from
the agent's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from silo_async.users import END_MARK, model_user
from tests.peers import by_extra, extra

from .chat_world import ENV, write_project
from .cli_support import cli

pytestmark = pytest.mark.anyio

PROVIDERS = by_extra("openai", "anthropic")


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _spec(provider: str) -> str:
    return f"{provider}/scripted-user"


def _url(provider: str, server: ScriptedModelServer) -> str:
    return server.base_url if provider == "openai" else server.url


def _is_user(request: ModelRequest) -> bool:
    return request.task.startswith("# Who you are")


def sync_script(request: ModelRequest) -> Reply:
    """Bo's side (the model user) and a model agent that fixes the sync by talking to him."""
    if _is_user(request):
        if request.turn == 0:  # the user acts first, with their own tool
            return Reply(tool_calls=[ToolCall("set_offline_mode", {"on": False})],
                         input_tokens=40, output_tokens=4)  # fmt: skip
        return Reply(text=f"Done, offline mode is off now.\n{END_MARK}", input_tokens=50,
                     output_tokens=9)  # fmt: skip
    if request.turn == 0:
        return Reply(tool_calls=[ToolCall("message_user", {"text": "Please turn offline off."})])
    if request.turn == 1:
        return Reply(tool_calls=[ToolCall("place_order", {"customerId": "CUS-2", "quantity": 1})])
    return Reply(text="Your croissant is ordered.")


async def test_a_model_user_acts_with_its_tools_and_its_tokens_count_apart(
    provider: str,
) -> None:
    async with ScriptedModelServer(sync_script) as server:
        user = model_user(_spec(provider), _url(provider, server))

        async def agent(ctx: silo.AgentContext) -> Any:
            said = await ctx.call_tool("message_user", {"text": "Please turn offline off."})
            await ctx.call_tool("place_order", {"customerId": "CUS-2", "quantity": 1})
            return said.output

        result = await silo.run(ENV, "CHAT-SYNC", agent, user=user, token_limit=1)
        requests = server.requests
    assert result.passed, (result.failed_required, result.error)
    assert result.agent_output == {"reply": "Done, offline mode is off now.", "ended": True}
    assert (result.user_turns, result.user_tool_calls, result.tool_calls) == (1, 1, 1)
    assert (result.input_tokens, result.user_input_tokens, result.user_output_tokens) == (
        0,
        90,
        13,
    )
    assert result.termination_reason == "completed"  # 103 user tokens: not the agent's limit
    data = result.result_dict()
    assert (data["userInputTokens"], data["userOutputTokens"]) == (90, 13)
    first = requests[0]
    assert first.tool_names == ["set_offline_mode", "app_status"]  # the user's tools only
    prompt = first.task
    assert "# The conversation so far" in prompt
    assert "You: My order won't go through, it's bo@example.com." in prompt
    assert prompt.endswith(
        "Agent: Please turn offline off.\n\nWrite your next message to the agent."
    )
    turn = next(e for e in result.trace if e["type"] == "user_turn")
    assert turn["usage"] == {"inputTokens": 90, "outputTokens": 13}
    assert not any(e["type"] == "model_step" for e in result.trace)  # the user's are its own


async def test_a_model_agent_talks_through_message_user(provider: str) -> None:
    async with ScriptedModelServer(sync_script) as server:
        if provider == "openai":
            agent = agents.openai_chat("scripted-agent", base_url=server.base_url)
        else:
            agent = agents.anthropic("scripted-agent", base_url=server.url)
        user = model_user(_spec(provider), _url(provider, server))
        result = await silo.run(ENV, "CHAT-SYNC", agent, user=user)
        agent_requests = [r for r in server.requests if not _is_user(r)]
    assert result.passed, (result.failed_required, result.error)
    assert agent_requests[0].tool_names[-1] == "message_user"
    assert "set_offline_mode" not in agent_requests[0].tool_names
    assert agent_requests[0].task.endswith("User: My order won't go through, it's bo@example.com.")
    seen = agent_requests[1].last_results[0].content
    assert json.loads(seen) == {"reply": "Done, offline mode is off now.", "ended": True}
    assert (result.model_steps, result.user_turns, result.tool_calls) == (3, 1, 1)


@extra("openai")
async def test_a_model_user_that_writes_nothing_still_says_something() -> None:
    async with ScriptedModelServer(lambda request: Reply(text="")) as server:
        user = model_user("openai/silent", server.base_url)

        async def agent(ctx: silo.AgentContext) -> Any:
            return (await ctx.call_tool("message_user", {"text": "Hello?"})).output

        result = await silo.run(ENV, "CHAT-ORDER", agent, user=user)
    assert result.agent_output == {"reply": "(The user says nothing.)"}


def test_a_bad_user_model_spec_is_model_invalid() -> None:
    with pytest.raises(silo.SiloError) as raised:
        model_user("nope/model")
    assert raised.value.code == "model_invalid"


# -- the CLI ---------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_project(tmp_path)


@extra("openai")
def test_run_with_user_model_and_the_report_shows_user_turns(project: Path) -> None:
    with ScriptedModelServer(sync_script) as server:
        result = cli(
            "run", "--env", "bakery", "--task", "CHAT-SYNC",
            "--model", "openai/scripted-agent", "--base-url", server.base_url,
            "--user-model", "openai/scripted-user",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert re.search(r"\nUser turns +1  \(1 user tool call · 90 in · 13 out\)\n", result.stdout)
    assert "  User   OK" not in result.stdout
    assert "  User   Done, offline mode is off now.  [did: set_offline_mode]  (ended the " in (
        result.stdout
    )
    with ScriptedModelServer(sync_script) as server:
        as_json = cli(
            "run", "--env", "bakery", "--task", "CHAT-SYNC", "--agent",
            f"{project.name}:solver", "--user-model", "openai/scripted-user",
            "--user-base-url", server.base_url, "--json",
        )  # fmt: skip
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert (data["userTurns"], data["userToolCalls"], data["userInputTokens"]) == (1, 1, 90)


def test_user_model_flags_are_checked(project: Path) -> None:
    alone = cli("run", "--env", "bakery", "--task", "CHAT-SYNC", "--user-base-url", "http://x")
    assert alone.exit_code == 2 and "--user-base-url applies to a model user" in alone.output
    bad = cli("run", "--env", "bakery", "--task", "CHAT-SYNC", "--agent",
              f"{project.name}:solver", "--user-model", "nope/x")  # fmt: skip
    assert bad.exit_code == 1 and bad.stderr.startswith("error: model_invalid: ")


@extra("openai")
def test_eval_with_user_model(project: Path) -> None:
    with ScriptedModelServer(sync_script) as server:
        result = cli(
            "eval", "--env", "bakery", "--task", "CHAT-SYNC", "--agent",
            f"solver={project.name}:solver", "--user-model", "openai/scripted-user",
            "--base-url", server.base_url, "--out", "out", "--json",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    index = (project.parent / "out" / "runs" / "index.jsonl").read_text().splitlines()
    run_dir = project.parent / "out" / "runs" / json.loads(index[0])["runId"]
    written = json.loads((run_dir / "result.json").read_text())
    assert (written["userTurns"], written["userInputTokens"]) == (1, 90)


@extra("openai")
@pytest.mark.parametrize("again", [True, False], ids=["given-again", "from-eval-json"])
def test_eval_resume_plays_the_same_user_model(project: Path, again: bool) -> None:
    base = ["--env", "bakery", "--task", "CHAT-SYNC", "--agent", f"solver={project.name}:solver"]
    with ScriptedModelServer(sync_script) as server:
        model = ["--user-model", "openai/scripted-user", "--base-url", server.base_url]
        first = cli("eval", *base, *model, "--runs", "2", "--out", "out", "--json")
        assert first.exit_code == 0, first.output
        out = project.parent / "out"
        plan = json.loads((out / "eval.json").read_text())
        assert plan["user"] == {
            "model": "openai/scripted-user",
            "baseUrl": server.base_url,
            "options": {"maxTurns": 10, "maxRetries": 2, "requestTimeout": 120.0},
        }
        index = _cut_the_second_rollout(out)
        another = ["--user-model", "openai/another", "--base-url", server.base_url]
        other = cli("eval", "--resume", "out", *another, "--json")
        given = [*model[2:], *model[:2]] if again else []
        resumed = cli("eval", "--resume", "out", *given, "--json")
    assert other.exit_code == 1
    assert "resume_conflict: --user-model differs from the plan" in other.output
    assert resumed.exit_code == 0, resumed.output
    printed = resumed.output[resumed.output.index("\n{") :]  # after the progress lines
    assert json.loads(printed)["resumed"] == {"kept": 1, "rerun": 1}
    for line in index.read_text().splitlines():
        run_dir = out / "runs" / json.loads(line)["runId"]
        written = json.loads((run_dir / "result.json").read_text())
        assert (written["userTurns"], written["userInputTokens"]) == (1, 90)


def _cut_the_second_rollout(out: Path) -> Path:
    """As if the eval in ``out`` was killed after its first rollout: its index."""
    index = out / "runs" / "index.jsonl"
    kept, lost = index.read_text().splitlines()
    (out / "summary.json").unlink()
    index.write_text(kept + "\n")
    lost_dir = out / "runs" / json.loads(lost)["runId"]
    for path in lost_dir.iterdir():
        path.unlink()
    lost_dir.rmdir()
    return index


async def test_a_user_factory_nothing_can_rebuild_resumes_only_when_given_again(
    tmp_path: Path,
) -> None:
    from .chat_world import solver

    def scripted(task: silo.Task) -> silo.User:
        return silo.ScriptedUser.from_task(task)

    out = tmp_path / "out"
    await silo.evaluate(ENV, "CHAT-SYNC", {"solver": solver}, runs=2, out_dir=out, user=scripted)
    assert json.loads((out / "eval.json").read_text())["user"] == {"label": scripted.__qualname__}
    _cut_the_second_rollout(out)
    with pytest.raises(silo.SiloError) as refused:
        await silo.evaluate(ENV, "CHAT-SYNC", {"solver": solver}, resume=out)
    resumed = await silo.evaluate(ENV, "CHAT-SYNC", {"solver": solver}, resume=out, user=scripted)
    assert refused.value.code == "resume_conflict"
    assert "pass the same user= again" in refused.value.message
    assert resumed.resumed is not None and resumed.resumed.kept == 1
