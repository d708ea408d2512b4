"""Small code-first worlds shared by the core tests."""

from __future__ import annotations

from typing import Any

import anyio

import silo_async as silo
from silo_async.testing import ScriptedAgent

ID_SCHEMA = {
    "type": "object",
    "properties": {"customerId": {"type": "string"}},
    "required": ["customerId"],
    "additionalProperties": False,
}


def create_state() -> dict[str, Any]:
    return {
        "customers": {
            "CUS-001": {"id": "CUS-001", "status": "active", "tags": ["vip"]},
            "CUS-002": {"id": "CUS-002", "status": "active", "tags": []},
        },
        "log": [],
    }


@silo.tool(name="get_customer", description="Read a customer.", input_schema=ID_SCHEMA)
def get_customer(state: dict[str, Any], args: dict[str, Any]) -> Any:
    found = state["customers"].get(args["customerId"])
    if found is None:
        raise silo.tool_error("not_found", f'Customer "{args["customerId"]}" was not found.')
    return found


@silo.tool(name="block_customer", description="Block a customer.", input_schema=ID_SCHEMA)
async def block_customer(state: dict[str, Any], args: dict[str, Any]) -> Any:
    customer = get_customer(state, args)
    if customer["status"] == "blocked":
        raise silo.ToolError("invalid_state", "already blocked", {"status": "blocked"})
    await anyio.lowlevel.checkpoint()
    customer["status"] = "blocked"
    state["log"].append({"id": f"LOG-{len(state['log']) + 1}", "action": "block"})
    return customer


@silo.tool(name="explode", description="A tool with a bug.")
def explode(state: dict[str, Any], args: dict[str, Any]) -> Any:
    return {"ratio": 1 / 0}


@silo.tool(
    name="slow",
    description="Sleeps.",
    input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
)
async def slow(state: dict[str, Any], args: dict[str, Any]) -> Any:
    await anyio.sleep(args.get("seconds", 3600))
    return "slept"


@silo.verifier(id="VER-BLOCK", task_id="TASK-BLOCK")
def blocked(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [
        silo.check("CUS-001 is blocked", final["customers"]["CUS-001"]["status"] == "blocked"),
        silo.optional(
            "CUS-002 untouched", final["customers"]["CUS-002"] == initial["customers"]["CUS-002"]
        ),
    ]


@silo.verifier(id="VER-ANSWER", task_id="TASK-ANSWER")
def answered(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [silo.check("Answer is 2", ctx.agent_output.strip() == "2", f"got {ctx.agent_output!r}")]


@silo.verifier(id="VER-RAISES", task_id="TASK-RAISES")
def raises(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    raise KeyError("missing-field")


@silo.verifier(id="VER-OPTIONAL", task_id="TASK-OPTIONAL")
def only_optional(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [silo.optional("nice to have", True)]


TASKS = [
    silo.Task("TASK-BLOCK", "Block", "Block customer CUS-001.", "VER-BLOCK", "easy"),
    silo.Task("TASK-ANSWER", "Count", "How many customers are there?", "VER-ANSWER", "easy"),
    silo.Task("TASK-RAISES", "Broken verifier", "Anything.", "VER-RAISES"),
    silo.Task("TASK-OPTIONAL", "Optional only", "Anything.", "VER-OPTIONAL"),
]

ENV = silo.Environment(
    name="shop",
    create_state=create_state,
    tools=[get_customer, block_customer, explode, slow],
    verifiers=[blocked, answered, raises, only_optional],
    tasks=TASKS,
)


blocker = ScriptedAgent(
    [
        ("get_customer", {"customerId": "CUS-001"}),
        ("block_customer", {"customerId": "CUS-001"}),
    ],
    answer="done",
)


async def noop(ctx: silo.AgentContext) -> None:
    return None
