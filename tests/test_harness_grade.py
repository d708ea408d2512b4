"""One grade everywhere (DESIGN §16): the same task and the same calls give the same reward and a
byte-identical ``state-diff.json`` through ``run()``, MCP and every harness.

Each harness is driven with its own released package (in its own virtualenv where its
dependencies clash with ours) and a scripted model (``tests/harness_players.py``); ``run()``
with a scripted agent is the reference.
"""

from __future__ import annotations

from typing import Any

import pytest

from .harness_players import PLAYERS, Plays
from .harness_support import CALLS, CHAT


@pytest.mark.parametrize("harness", [h for h in PLAYERS if h != "run"])
def test_the_same_calls_give_the_same_grade_through_every_harness(
    harness: str,
    plays: Plays,
) -> None:
    expected = plays.get("run").run
    run = plays.get(harness).run
    assert run["runId"] != expected["runId"]
    assert run["calls"] == expected["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["reward"] == expected["result"]["reward"] == 1.0
    assert run["result"]["checks"] == expected["result"]["checks"]
    assert run["result"]["agentOutput"] == expected["result"]["agentOutput"]
    assert run["diff"] == expected["diff"]  # state-diff.json, byte for byte


# -- a task with a user (DESIGN §13) ----------------------------------------------------------

#: What CHAT-001's scripted user says and does for the calls of ``CHAT`` (the same everywhere).
TURNS = [
    {
        "agentText": CHAT.calls[0][1]["text"],
        "reply": "$48,000, closing 2026-12-15.",
        "ended": False,
        "actions": [{"callId": "u1", "tool": "get_user", "isError": False}],
    },
    {
        "agentText": CHAT.calls[-1][1]["text"],
        "reply": "Perfect, thanks!",
        "ended": True,
        "actions": [],
    },
]


@pytest.mark.parametrize("harness", list(PLAYERS))
def test_a_conversational_task_plays_the_same_through_every_harness(
    harness: str,
    chat_plays: Plays,
) -> None:
    run = chat_plays.get(harness).run
    # message_user is no world call; get_user is the user's, so the agent's call is refused.
    agents_calls = [(n, a) for n, a in CHAT.calls if n != "message_user"]
    assert run["calls"] == agents_calls
    assert run["turns"] == TURNS
    assert run["userCalls"] == [("user", "get_user", {"userId": "USR-003"})]
    result = run["result"]
    assert (result["userTurns"], result["userToolCalls"]) == (2, 1)
    assert result["toolCalls"] == 3 and result["toolErrors"] == 1  # get_user: tool_not_found
    assert result["reward"] == 1.0
    expected = chat_plays.get("run").run
    assert result["checks"] == expected["result"]["checks"]
    assert run["diff"] == expected["diff"]  # state-diff.json, byte for byte


def _offered(harness: str, output: dict[str, Any]) -> list[str]:
    """The tool names the harness showed the model (or the agent) for CHAT-001."""
    if harness == "openenv":
        return [t["name"] for t in output["tools"]]
    if harness == "inspect":
        return [t["name"] for t in output["tools"]]
    if harness == "verifiers":
        return list(output["tools"])
    assert harness == "trl"
    return [m for m in output["methods"] if not m.startswith("_")]


@pytest.mark.parametrize("harness", ["openenv", "inspect", "verifiers", "trl"])
def test_harnesses_offer_message_user_and_the_agents_tools_only(
    harness: str,
    chat_plays: Plays,
) -> None:
    offered = _offered(harness, chat_plays.get(harness).output)
    assert "message_user" in offered and "search_leads" in offered
    if harness in ("openenv", "inspect", "verifiers"):  # the episode's own tools, submit last
        assert "get_user" not in offered
        assert offered[-2:] == ["message_user", "submit"]


def _first_prompt(harness: str, output: dict[str, Any]) -> str:
    """What the harness gave the model as the task (``ctx.task``'s text)."""
    if harness == "openenv":
        return str(output["reset"]["observation"]["instruction"])
    if harness == "inspect":
        return str(output["input"])
    assert harness == "verifiers"
    return "\n".join(str(m.get("content")) for m in output["first_messages"])


@pytest.mark.parametrize("harness", ["openenv", "inspect", "verifiers"])
def test_the_task_reaches_the_model_with_the_users_opening(
    harness: str,
    chat_plays: Plays,
) -> None:
    prompt = _first_prompt(harness, chat_plays.get(harness).output)
    assert "Help Noor turn her lead into a customer.\n\nUser: Hi, Noor here (USR-003)." in prompt
