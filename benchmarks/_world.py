"""A small world shared by the benchmarks: a few accounts, a read tool and a write tool."""

from __future__ import annotations

from typing import Any

import silo_async as silo

ACCOUNTS = {
    f"ACC-{i:03d}": {"id": f"ACC-{i:03d}", "name": f"Account {i}", "tier": "gold", "notes": []}
    for i in range(1, 9)
}
ID = {"type": "string", "pattern": "^ACC-[0-9]{3}$"}


def create_state() -> dict[str, Any]:
    return {"accounts": silo.clone_json(ACCOUNTS), "audit": []}


@silo.tool(
    name="get_account",
    description="Read one account.",
    input_schema={
        "type": "object",
        "properties": {"accountId": ID},
        "required": ["accountId"],
        "additionalProperties": False,
    },
)
def get_account(state: dict[str, Any], args: dict[str, Any]) -> Any:
    account = state["accounts"].get(args["accountId"])
    if account is None:
        raise silo.tool_error("not_found", f"Account {args['accountId']} was not found.")
    return account


@silo.tool(
    name="add_note",
    description="Add a note to an account.",
    input_schema={
        "type": "object",
        "properties": {"accountId": ID, "text": {"type": "string", "minLength": 1}},
        "required": ["accountId", "text"],
        "additionalProperties": False,
    },
)
def add_note(state: dict[str, Any], args: dict[str, Any]) -> Any:
    account = get_account(state, args)
    account["notes"].append(args["text"])
    state["audit"].append({"id": f"AUD-{len(state['audit']) + 1:04d}", "action": "add_note"})
    return account


@silo.verifier(id="VER-001", task_id="TASK-001")
def noted(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    notes = final["accounts"]["ACC-001"]["notes"]
    return [
        silo.check("ACC-001 has a note", bool(notes)),
        silo.optional("Answered", ctx.agent_output),
    ]


ENV = silo.Environment(
    name="bench",
    create_state=create_state,
    tools=[get_account, add_note],
    verifiers=[noted],
    tasks=[silo.Task("TASK-001", "Note", "Add a note to ACC-001.", "VER-001", "easy")],
)


async def ten_calls(ctx: silo.AgentContext) -> str:
    """Scripted agent: nine reads and one write."""
    for i in range(9):
        await ctx.call_tool("get_account", {"accountId": f"ACC-{i % 8 + 1:03d}"})
    await ctx.call_tool("add_note", {"accountId": "ACC-001", "text": "called"})
    return "done"
