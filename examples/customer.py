"""A state-changing environment in one file: block a customer.

Run it: ``.venv/bin/python examples/customer.py`` — a scripted agent blocks CUS-001 and passes.
"""

from __future__ import annotations

import re
from typing import Any

import anyio

import silo_async as silo

CUSTOMERS = {
    "CUS-001": {
        "id": "CUS-001",
        "name": "Harbor Freight Lines",
        "status": "active",
        "reason": None,
    },
    "CUS-002": {"id": "CUS-002", "name": "Quill & Ledger", "status": "active", "reason": None},
}


def create_state() -> dict[str, Any]:
    """A fresh world on every call: never hand out the module-level dict itself."""
    return {"customers": silo.clone_json(CUSTOMERS)}


ID = {"type": "string", "description": "Customer id, e.g. CUS-001."}


@silo.tool(
    name="get_customer",
    description="Read one customer by id.",
    input_schema={
        "type": "object",
        "properties": {"customerId": ID},
        "required": ["customerId"],
        "additionalProperties": False,
    },
)
def get_customer(state: dict[str, Any], args: dict[str, Any]) -> Any:
    customer = state["customers"].get(args["customerId"])
    if customer is None:
        raise silo.tool_error("not_found", f'Customer "{args["customerId"]}" was not found.')
    return customer


@silo.tool(
    name="block_customer",
    description="Block a customer, recording why.",
    input_schema={
        "type": "object",
        "properties": {"customerId": ID, "reason": {"type": "string", "minLength": 1}},
        "required": ["customerId", "reason"],
        "additionalProperties": False,
    },
)
def block_customer(state: dict[str, Any], args: dict[str, Any]) -> Any:
    customer = get_customer(state, args)
    if customer["status"] == "blocked":
        raise silo.tool_error(
            "invalid_state", f"Customer {customer['id']} is already blocked.", {"status": "blocked"}
        )
    customer["status"] = "blocked"
    customer["reason"] = args["reason"].strip()
    return customer


@silo.verifier(id="VER-001", task_id="TASK-001", name="CUS-001 is blocked, nothing else")
def customer_blocked(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    after = final["customers"]["CUS-001"]
    others_same = all(
        final["customers"][k] == v for k, v in initial["customers"].items() if k != "CUS-001"
    )
    return [
        silo.check("CUS-001 is blocked", after["status"] == "blocked", f"status={after['status']}"),
        silo.optional("A block reason was recorded", bool(after["reason"])),
        silo.check("No other customer changed", others_same),
    ]


ENV = silo.Environment(
    name="customer",
    create_state=create_state,
    tools=[get_customer, block_customer],
    verifiers=[customer_blocked],
    tasks=[
        silo.Task(
            "TASK-001",
            "Block a customer",
            "Customer CUS-001 has repeatedly missed payments. Block them and record why.",
            "VER-001",
            "easy",
        )
    ],
)


async def agent(ctx: silo.AgentContext) -> str:
    """Scripted agent: find the id in the instruction, read the customer, block them."""
    customer_id = re.search(r"CUS-\d+", ctx.task)
    assert customer_id is not None
    args = {"customerId": customer_id.group()}
    await ctx.call_tool("get_customer", args)
    result = await ctx.call_tool("block_customer", {**args, "reason": "Repeated missed payments"})
    return "blocked" if not result.is_error else f"failed: {result.output['message']}"


async def main() -> None:
    result = await silo.run(ENV, "TASK-001", agent)
    verdict = "PASS" if result.passed else "FAIL"
    print(f"{verdict} reward={result.reward:.2f} calls={result.tool_calls}")


if __name__ == "__main__":
    anyio.run(main)
