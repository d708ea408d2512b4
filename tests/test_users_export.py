"""Export and report of conversational rollouts (DESIGN §12, §13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.eval import read_index
from silo_async.eval._report._details import compact_details
from silo_async.export import trajectories
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from tests.peers import extra

from .chat_world import ENV, solver
from .export_support import pairs

pytestmark = pytest.mark.anyio

OPENING = "My order won't go through, it's bo@example.com."


async def test_a_scripted_agents_turns_export_as_message_user_calls(tmp_path: Path) -> None:
    result = await silo.run(ENV, "CHAT-SYNC", solver, runs_dir=tmp_path / "runs")
    (line,) = trajectories([str(result.run_dir)], environment=ENV, cwd=tmp_path)
    messages = line["messages"]
    assert messages[0] == {
        "role": "user",
        "content": f"Help them order 1 croissant.\n\nUser: {OPENING}",
    }
    assert pairs(messages) == [
        ("call_t1", "message_user", {"text": "Please switch offline mode off."},
         '{"reply":"OK, I switched offline mode off."}'),
        ("call_1", "place_order", {"customerId": "CUS-2", "quantity": 1},
         '{"id":"ORD-8","customerId":"CUS-2","total":3}'),
        ("call_t2", "message_user", {"text": "Your order is placed."},
         '{"reply":"Great, bye!","ended":true}'),
    ]  # fmt: skip
    assert messages[-1] == {"role": "assistant", "content": "synced"}
    # The user's own call (set_offline_mode) is not the agent's: neither a message nor a tool.
    assert "set_offline_mode" not in json.dumps(messages)
    names = [t["function"]["name"] for t in line["tools"]]
    assert names == ["find_customer", "place_order", "refund_order", "message_user"]
    assert line["tools"][-1]["function"]["parameters"]["required"] == ["text"]


def agent_script(request: ModelRequest) -> Reply:
    """A model agent that first sends an empty message (refused), then talks and orders."""
    if request.turn == 0:
        return Reply(
            text="Let me ask.",
            tool_calls=[
                ToolCall("message_user", {"text": ""}, id="call_empty"),
                ToolCall("message_user", {"text": "Please turn offline off."}, id="call_ask"),
            ],
        )
    if request.turn == 1:
        order = ToolCall("place_order", {"customerId": "CUS-2", "quantity": 1}, id="call_order")
        return Reply(tool_calls=[order])
    return Reply(text="Ordered.")


@extra("openai")
async def test_a_model_agents_export_is_the_conversation_it_held(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    with ScriptedModelServer(agent_script) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url)
        await silo.evaluate(ENV, ["CHAT-SYNC"], {"model": agent}, out_dir=out)
        last = server.requests[-1]
    (line,) = trajectories(eval_id=str(out), environment=ENV, cwd=tmp_path)
    assert line["passed"] is True
    messages = line["messages"]
    assert messages[0]["content"] == last.messages[0]["content"]
    found = pairs(messages)
    # The refused empty message is not in the trace: dropped, as any call never executed.
    assert [(p[0], p[1], p[3]) for p in found] == [
        ("call_ask", "message_user", '{"reply":"OK, I switched offline mode off."}'),
        ("call_order", "place_order", '{"id":"ORD-8","customerId":"CUS-2","total":3}'),
    ]
    assert messages[1]["content"] == "Let me ask."
    assert messages[-1] == {"role": "assistant", "content": "Ordered."}
    index = read_index(out)
    assert index[0].run_dir is not None


async def test_report_details_hold_the_conversation() -> None:
    result = await silo.run(ENV, "CHAT-SYNC", solver)
    details = compact_details(result)
    assert details["u"] == OPENING
    steps = details["s"]
    assert [s[0] for s in steps] == [4, 3, 0, 3]
    assert steps[0][1:3] == ["u1", "set_offline_mode"]
    assert steps[1] == [
        3,
        "Please switch offline mode off.",
        "OK, I switched offline mode off.",
        0,
        ["set_offline_mode"],
    ]
    assert steps[3][3] == 1
    from .worlds import ENV as PLAIN

    plain = await silo.run(PLAIN, "TASK-ANSWER", solver_for_plain)
    assert "u" not in compact_details(plain)


async def solver_for_plain(ctx: silo.AgentContext) -> Any:
    return "2"


def test_trl_serves_message_user_and_not_the_users_tools(tmp_path: Path) -> None:
    from silo_async.integrations.trl import environment_factory, reward

    cls = environment_factory(ENV, ["CHAT-SYNC"], runs_dir=tmp_path)
    public = sorted(n for n in vars(cls) if not n.startswith("_"))
    assert public == ["find_customer", "message_user", "place_order", "refund_order"]
    instance = cls()
    assert instance.reset(task="CHAT-SYNC") == f"Help them order 1 croissant.\n\nUser: {OPENING}"
    said = instance.message_user(text="Please switch offline mode off.")
    assert said == {"reply": "OK, I switched offline mode off."}
    instance.place_order(customerId="CUS-2", quantity=1)
    assert json.loads(str(instance.message_user(text="It is placed."))) == {
        "reply": "Great, bye!",
        "ended": True,
    }
    assert reward(["synced"], [instance]) == [1.0]
    mixed = environment_factory(ENV)  # CHAT-SYNC's user tools are the agent's elsewhere
    assert "set_offline_mode" in vars(mixed) and "message_user" in vars(mixed)


async def test_replay_says_the_turns_again(tmp_path: Path) -> None:
    from silo_async.eval import replay

    result = await silo.run(ENV, "CHAT-SYNC", solver, runs_dir=tmp_path)
    assert result.run_dir is not None
    report = await replay(str(result.run_dir), ENV, cwd=tmp_path)
    assert report.identical, report.differences
    assert [c.tool for c in report.calls] == ["place_order"]
    assert report.replayed.user_turns == 2


@extra("mcp")
@extra("harness-servers")
def test_the_harness_servers_offer_message_user_before_submit() -> None:
    from silo_async.serve._harness_common import tool_specs

    names = [s.name for s in tool_specs(ENV)]
    assert names[-2:] == ["message_user", "submit"]
    from .worlds import ENV as PLAIN

    assert "message_user" not in [s.name for s in tool_specs(PLAIN)]
