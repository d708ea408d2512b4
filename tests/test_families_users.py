"""Conversational families and worlds that are not JSON (DESIGN.md section 18, settled details).

A family's instances may have a user (``user(params)``); its gold calls may name the user's tools
(the gold world needs them), and its ``solve`` is how the gold agent plays it: the user acts only
when asked. An environment whose world is not JSON is graded through its ``snapshot``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import pytest

import silo_async as silo
from silo_async import world as w
from silo_async.testing import ScriptedAgent, ScriptedCall, check_environment, gold_agent

pytestmark = pytest.mark.anyio

PHONE_ID = {
    "type": "object",
    "properties": {"phoneId": {"type": "string"}},
    "required": ["phoneId"],
}


def create_state() -> dict[str, Any]:
    return {"phones": {f"P-{i}": {"id": f"P-{i}", "on": False} for i in range(1, 30)}}


@silo.tool(name="check_phone", description="Is the phone on?", input_schema=PHONE_ID)
def check_phone(state: dict[str, Any], args: dict[str, Any]) -> Any:
    return state["phones"][args["phoneId"]]


@silo.tool(
    name="restart_phone", description="Restart a phone (the customer's).", input_schema=PHONE_ID
)
def restart_phone(state: dict[str, Any], args: dict[str, Any]) -> Any:
    state["phones"][args["phoneId"]]["on"] = True
    return {"on": True}


def user(p: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "opening": f"My phone {p['phoneId']} is dead.",
        "tools": ["restart_phone"],
        "script": [
            {
                "when": ["restart"],
                "say": "Done, it restarted.",
                "do": [{"tool": "restart_phone", "input": {"phoneId": p["phoneId"]}}],
            }
        ],
    }


async def solve(ctx: silo.AgentContext, p: Mapping[str, Any]) -> str:
    await ctx.call_tool("message_user", {"text": "Please restart your phone."})
    return "The phone is back on."


def family(**overrides: Any) -> silo.TaskFamily:
    fields: dict[str, Any] = {
        "id": "revive",
        "title": "Revive a customer's phone",
        "sample": lambda world, rng: {"phoneId": rng.choice(sorted(world["phones"]))},
        "instruction": lambda p: "Help the customer get their phone working.",
        "gold": lambda p: [silo.Call("restart_phone", {"phoneId": p["phoneId"]})],
        "user": user,
        "solve": solve,
    }
    return silo.TaskFamily(**{**fields, **overrides})


def environment(probe: silo.TaskFamily) -> silo.Environment:
    return silo.Environment(
        name="phones",
        create_state=create_state,
        tools=[check_phone, restart_phone],
        families=[probe],
    )


async def test_a_conversational_family_is_played_by_its_solve_and_graded_by_its_gold() -> None:
    env = environment(family())
    task = env.task("revive#4")
    phone = dict(task.params or {})["phoneId"]
    assert task.user_script is not None
    assert task.prompt.endswith(f"User: My phone {phone} is dead.")
    result = await silo.run(env, "revive#4", gold_agent)
    assert result.passed, [(c.label, c.detail) for c in result.checks]
    assert result.user_turns == 1 and result.user_tool_calls == 1 and result.tool_calls == 0
    # Without solve the gold agent has no call of its own to make: the user never acts.
    silent = environment(family(solve=None))
    assert not (await silo.run(silent, "revive#4", gold_agent)).passed


async def test_validation_runs_the_gold_agent_with_the_user() -> None:
    report = await check_environment(environment(family()), instances=5)
    assert report.ok, report.to_dict()
    broken = await check_environment(environment(family(solve=None)), instances=5)
    assert [f.message.split(":")[0] for f in broken.findings] == ['Task family "revive" (seed 0)']


class Board:
    """A world that is not JSON: an object holding its cells."""

    def __init__(self) -> None:
        self.cells = {"A": 0, "B": 0, "C": 0}


@silo.tool(
    name="mark",
    description="Mark a cell.",
    input_schema={"type": "object", "properties": {"cell": {"type": "string"}}},
)
def mark(board: Board, args: dict[str, Any]) -> Any:
    board.cells[args["cell"]] = 1
    return dict(board.cells)


async def test_a_world_that_is_not_json_is_graded_through_its_snapshot() -> None:
    def sample(world: Board, rng: random.Random) -> dict[str, Any]:
        return {"cell": rng.choice(sorted(world.cells))}

    marks = silo.TaskFamily(
        id="mark",
        title="Mark a cell",
        sample=sample,
        instruction=lambda p: f"Mark {p['cell']}.",
        gold=lambda p: [silo.Call("mark", {"cell": p["cell"]})],
    )
    env = silo.Environment(
        name="board",
        create_state=Board,
        tools=[mark],
        families=[marks],
        snapshot=lambda board: {"cells": dict(board.cells)},
    )
    cell = env.task("mark#2").params["cell"]  # type: ignore[index]
    good = await silo.run(env, "mark#2", gold_agent)
    assert [(c.label, c.passed) for c in good.checks] == [
        (f"{cell} matches the gold solution", True),
        ("nothing else changed", True),
    ]
    other = next(c for c in "ABC" if c != cell)
    wrong = await silo.run(
        env,
        "mark#2",
        ScriptedAgent([ScriptedCall("mark", {"cell": other})]),
    )
    assert not wrong.passed and wrong.checks[-1].detail.endswith(other)


async def test_a_hand_written_verifier_may_replay_the_users_own_tools() -> None:
    # restart_phone is the user's (the agent is refused it), yet a verifier's gold world needs it.
    @silo.verifier(id="VER-1", task_id="T-1")
    async def verify(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        gold = await ctx.replay([silo.Call("restart_phone", {"phoneId": "P-3"})])
        return w.grade.matches(final, gold, initial)

    task = silo.Task("T-1", "t", "Help the customer.", "VER-1", user=user({"phoneId": "P-3"}))
    env = silo.Environment(
        name="phones",
        create_state=create_state,
        tools=[check_phone, restart_phone],
        verifiers=[verify],
        tasks=[task],
    )
    refused = await silo.run(
        env, "T-1", ScriptedAgent([ScriptedCall("restart_phone", {"phoneId": "P-3"})])
    )
    assert refused.tool_errors == 1 and not refused.passed and refused.reward_valid
    asked = await silo.run(
        env, "T-1", ScriptedAgent([ScriptedCall("message_user", {"text": "Please restart."})])
    )
    assert asked.passed, [(c.label, c.detail) for c in asked.checks]
    assert [c.label for c in asked.checks] == [
        "P-3 matches the gold solution",
        "nothing else changed",
    ]
