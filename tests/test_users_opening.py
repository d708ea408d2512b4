"""A user without an ``opening`` writes its first message itself (DESIGN §20).

The task's prompt is then the instruction alone until a rollout starts; the user is asked for
its first message (turn 0, empty text) before the agent runs, may act with its own tools first,
and what it wrote follows the instruction in ``ctx.task`` (and in an episode's task, and in the
exported conversation). A model user writes it from its prompt; any ``silo.User`` can.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

import silo_async as silo
from silo_async.export import trajectories
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from silo_async.users import END_MARK, model_user
from tests.peers import extra

from .chat_world import ENV, SYNC_USER

pytestmark = pytest.mark.anyio

SILENT_SYNC = {k: v for k, v in SYNC_USER.items() if k != "opening"}
TASK = silo.Task("CHAT-OPEN", "Fix the sync", "Help them order 1 croissant.", "VER-SYNC",
                 user=SILENT_SYNC)  # fmt: skip
OPEN_ENV = silo.Environment(
    "opening", create_state=ENV.create_state, tools=ENV.tools, verifiers=ENV.verifiers,
    tasks=[TASK],
)  # fmt: skip
FIRST = "Hi, my app is stuck offline and I can't order."


class WritesFirst:
    """A user that checks its app, then writes its first message; answers later turns."""

    def __init__(self) -> None:
        self.turns: list[tuple[int, str, int]] = []

    async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
        self.turns.append((turn.number, turn.text, len(turn.conversation)))
        if turn.number == 0:
            await turn.call_tool("app_status", {})
            return silo.UserReply(FIRST)
        await turn.call_tool("set_offline_mode", {"on": False})
        return silo.UserReply("Done.", ended=True)


async def _solve(ctx: silo.AgentContext) -> str:
    assert ctx.task == f"Help them order 1 croissant.\n\nUser: {FIRST}", ctx.task
    await ctx.call_tool("message_user", {"text": "Please switch offline mode off."})
    await ctx.call_tool("place_order", {"customerId": "CUS-2", "quantity": 1})
    return "Ordered."


def test_a_task_without_opening_prompts_with_its_instruction_until_a_rollout_starts() -> None:
    assert TASK.prompt == "Help them order 1 croissant."
    assert TASK.user_script is not None and TASK.user_script.opening == ""
    with pytest.raises(silo.SiloError, match=r"user\.opening"):
        silo.Task("T", "t", "i", "V", user={"opening": "  "})


async def test_the_user_writes_its_first_message_before_the_agent_runs(
    anyio_backend: str, tmp_path: Any
) -> None:
    users: list[WritesFirst] = []

    def make(task: silo.Task) -> WritesFirst:
        users.append(WritesFirst())
        return users[-1]

    result = await silo.run(OPEN_ENV, "CHAT-OPEN", _solve, user=make, runs_dir=tmp_path)
    assert result.passed, (result.failed_required, result.error)
    assert users[0].turns == [(0, "", 0), (1, "Please switch offline mode off.", 0)]
    assert (result.user_turns, result.user_tool_calls) == (1, 2)  # the opening is no turn
    opening = [e for e in result.trace if e["type"] == "user_opening"]
    assert [(e["text"], e["ended"], [a["tool"] for a in e["actions"]]) for e in opening] == [
        (FIRST, False, ["app_status"])
    ]
    (line,) = list(trajectories([str(result.run_dir)], environment=OPEN_ENV, cwd=tmp_path))
    assert line["messages"][0] == {
        "role": "user",
        "content": f"Help them order 1 croissant.\n\nUser: {FIRST}",
    }
    async with silo.episode(OPEN_ENV, "CHAT-OPEN", user=make) as ep:
        assert ep.task == f"Help them order 1 croissant.\n\nUser: {FIRST}"


class Broken:
    async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
        raise RuntimeError("no model")


async def test_a_user_that_cannot_write_its_first_message_is_an_environment_fault(
    anyio_backend: str,
) -> None:
    seen: list[str] = []

    async def agent(ctx: silo.AgentContext) -> str:
        seen.append(ctx.task)
        return ""

    result = await silo.run(OPEN_ENV, "CHAT-OPEN", agent, user=lambda task: Broken())
    assert seen == ["Help them order 1 croissant."]
    assert (result.tool_faults, result.reward_valid) == (1, False)
    (event,) = [e for e in result.trace if e["type"] == "user_opening"]
    assert event["text"] is None and event["error"]["type"] == "RuntimeError"


def _script(request: ModelRequest) -> Reply:
    if request.task.startswith("# Who you are"):  # the model user
        if request.task.endswith("Write your first message to the agent."):
            return Reply(text=FIRST)
        return (
            Reply(tool_calls=[ToolCall("set_offline_mode", {"on": False})])
            if (request.turn == 0)
            else Reply(text=f"It is off now.\n{END_MARK}")
        )
    raise AssertionError(request.task)


@extra("openai")
async def test_a_model_user_writes_the_first_message_and_remembers_it(anyio_backend: str) -> None:
    async with ScriptedModelServer(_script) as server:
        user = model_user("openai/scripted-user", server.base_url)
        result = await silo.run(OPEN_ENV, "CHAT-OPEN", _solve, user=user)
        prompts = [r.task for r in server.requests]
    assert result.passed, (result.failed_required, result.error)
    assert "# The conversation so far" not in prompts[0]
    assert f"You: {FIRST}\nAgent: Please switch offline mode off." in prompts[1]


class ShortPlay:
    """A task's own way for a model to play its user: its prompt, its end of the talk."""

    system = "You are Bo, who wants a croissant."

    def prompt(self, turn: silo.UserTurn, opening: str) -> str:
        if turn.number == 0:
            return "Start the conversation."
        return f"Earlier you said: {opening}\nThe agent says: {turn.text}"

    def reply(self, text: str) -> tuple[str, bool]:
        return text, text.endswith("BYE")


@attrs.frozen
class PlayedTask(silo.Task):
    user_play: Any = attrs.field(default=None, kw_only=True, eq=False)


@extra("openai")
async def test_a_task_may_bring_its_own_play_for_a_model_user(anyio_backend: str) -> None:
    task = PlayedTask("CHAT-PLAY", "Play", "Help them order 1 croissant.", "VER-SYNC",
                      user=SILENT_SYNC, user_play=ShortPlay())  # fmt: skip
    env = silo.Environment("played", create_state=ENV.create_state, tools=ENV.tools,
                           verifiers=ENV.verifiers, tasks=[task])  # fmt: skip

    def script(request: ModelRequest) -> Reply:
        if request.task == "Start the conversation.":
            return Reply(text=FIRST)
        if request.turn == 0:
            return Reply(tool_calls=[ToolCall("set_offline_mode", {"on": False})])
        return Reply(text="Thanks BYE")

    async with ScriptedModelServer(script) as server:
        user = model_user("openai/scripted-user", server.base_url, system="unused")
        result = await silo.run(env, "CHAT-PLAY", _solve, user=user)
        bodies = [r.body["messages"] for r in server.requests]
    assert result.passed, (result.failed_required, result.error)
    assert all(b[0] == {"role": "system", "content": ShortPlay.system} for b in bodies)
    assert bodies[1][1]["content"] == (
        f"Earlier you said: {FIRST}\nThe agent says: Please switch offline mode off."
    )
    (turn,) = [e for e in result.trace if e["type"] == "user_turn"]
    assert (turn["reply"], turn["ended"]) == ("Thanks BYE", True)
