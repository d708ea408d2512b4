"""The audit's probes, each doing exactly what it is defined to do, on the shop of ``audit_world``.

``noop`` and ``echo`` make no call; the ``explorer`` walks 30 schema-valid world-tool calls
built from what it saw (stopping early when no call can be built) and, on a task with a user,
tells the user everything once, at the end; the ``spammer`` calls every tool that needs no
input or only ids from the instruction and answers (and tells the user) every number, id and
capitalised phrase it met. Each is read from the rollout the audit wrote.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import silo_async as silo
from tests import audit_world

pytestmark = pytest.mark.anyio


async def _played(tmp_path: Path, task: str, probe: str, env: Any = None) -> dict[str, Any]:
    """One probe's rollout on one task: its calls, its user turns and its answer."""
    env = env or audit_world.environment()
    report = await silo.audit(env, [task], probes=[probe], out=tmp_path / probe)
    run = report.path / "runs" / report.tasks[0]["probes"][probe]["runId"]
    events = [json.loads(line) for line in (run / "trace.jsonl").read_text().splitlines()]
    result = json.loads((run / "result.json").read_text())
    return {
        "calls": [
            (e["tool"], e["input"])
            for e in events
            if e["type"] == "tool_call" and e.get("actor", "agent") == "agent"
        ],
        "events": [e["type"] for e in events],
        "turns": [e["agentText"] for e in events if e["type"] == "user_turn"],
        "answer": result["agentOutput"],
    }


async def test_noop_and_echo_make_no_call(tmp_path: Path) -> None:
    noop = await _played(tmp_path, "T-CHAT", "noop")
    assert noop["calls"] == [] and noop["turns"] == [] and noop["answer"] == ""
    echo = await _played(tmp_path, "T-CHAT", "echo")
    assert echo["calls"] == [] and echo["turns"] == []
    assert "Help the customer." in echo["answer"]  # the instruction
    assert "Can my order ORD-007 go to my new address?" in echo["answer"]  # the user's opening


async def test_the_explorer_walks_thirty_valid_calls_then_tells_the_user(tmp_path: Path) -> None:
    played = await _played(tmp_path, "T-CHAT", "explorer")
    env = audit_world.environment()
    schemas = {n: t.spec.input_schema for n, t in env.runtime_tools(env.create_state()).items()}
    world = played["calls"]  # a message to the user is a user_turn, not a tool_call
    assert len(world) == 30
    for tool, args in world:
        assert Draft202012Validator(schemas[tool]).is_valid(args), (tool, args)
        # Ids it saw (the instruction's, the outputs'): a made-up id opens nothing.
        assert args.get("orderId", "ORD-001") in audit_world.create_state()["orders"]
    assert len({tool for tool, _ in world}) >= 5  # a walk over the tools, not one call repeated
    # It tells the user everything it saw, once, at the end: its answer.
    assert played["events"][-4:-2] == ["user_turn", "agent_output"]
    assert played["turns"] == [played["answer"]]
    assert "5 Old Road" in played["answer"] and "ORD-007" in played["answer"]


async def test_the_explorer_stops_when_no_call_can_be_built(tmp_path: Path) -> None:
    @silo.tool(
        name="open_locker",
        description="Open a locker by its code.",
        input_schema={
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": "^Z[0-9]{6}$"}},
            "required": ["code"],
        },
    )
    def open_locker(state: dict[str, Any], input: dict[str, Any]) -> str:
        return "opened"

    @silo.verifier(id="V-L", task_id="L-1")
    def opened(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
        return [silo.check("never", False)]

    env = silo.Environment(
        name="lockers",
        create_state=dict,
        tools=[open_locker],
        verifiers=[opened],
        tasks=[silo.Task("L-1", "locker", "Open the locker whose code you were given.", "V-L")],
    )
    played = await _played(tmp_path, "L-1", "explorer", env)
    assert played["calls"] == []  # no code it saw fits the pattern, and it makes none up
    assert played["answer"] == "Open the locker whose code you were given."


async def test_the_spammer_calls_what_needs_nothing_or_the_instructions_ids(
    tmp_path: Path,
) -> None:
    played = await _played(tmp_path, "T-SOUND", "spammer")
    # Not cancel_order (a reason), add_note (a text) or refund_order (a figure): only what
    # needs nothing, or ids of the instruction ("Cancel ORD-006: it is a duplicate.").
    assert sorted(played["calls"], key=str) == [
        ("approve_change", {"orderId": "ORD-006"}),
        ("get_order", {"orderId": "ORD-006"}),
        ("list_orders", {}),
    ]
    answer = played["answer"].splitlines()
    orders = audit_world.create_state()["orders"]
    assert set(orders) <= set(answer)  # every id it met
    assert {"45.5", "19.99", "260"} <= set(answer)  # every figure
    assert {"Mill Lane", "Orchard Way"} <= set(answer)  # every capitalised phrase
    assert played["turns"] == []  # no user to tell


async def test_the_spammer_tells_the_user_its_answer(tmp_path: Path) -> None:
    played = await _played(tmp_path, "T-CHAT", "spammer")
    assert [tool for tool, _ in played["calls"]] == ["list_orders", "get_order"]
    assert played["turns"] == [played["answer"]] and "ORD-007" in played["answer"]
    assert played["events"][-4:-2] == ["user_turn", "agent_output"]
