"""A small conversational world for the tests of users in the loop (DESIGN §13).

A bakery's order desk. The agent sees customers only by id and email; the customer knows their
own email (the world does not say who is on the line) and, in one task, must switch off their
own app's offline mode (a user tool the agent cannot call). One task is a refusal: the customer
asks for a refund the policy forbids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import silo_async as silo
from silo_async.testing import ScriptedAgent
from silo_async.world import told


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def create_state() -> dict[str, Any]:
    return {
        "customers": {
            "CUS-1": {"id": "CUS-1", "email": "ada@example.com", "name": "Ada"},
            "CUS-2": {"id": "CUS-2", "email": "bo@example.com", "name": "Bo"},
        },
        "orders": {
            "ORD-7": {"id": "ORD-7", "customerId": "CUS-2", "total": 1200, "refunded": False}
        },
        "app": {"owner": "CUS-2", "offline": True},
        "sequence": 7,
    }


@silo.tool(
    name="find_customer",
    description="Find a customer by email.",
    input_schema=_object({"email": {"type": "string"}}, ["email"]),
)
def find_customer(state: dict[str, Any], args: dict[str, Any]) -> Any:
    for customer in state["customers"].values():
        if customer["email"] == args["email"].strip().lower():
            return customer
    raise silo.tool_error("not_found", f'No customer has the email "{args["email"]}".')


@silo.tool(
    name="place_order",
    description="Place an order of croissants for a customer.",
    input_schema=_object(
        {"customerId": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}},
        ["customerId", "quantity"],
    ),
)
def place_order(state: dict[str, Any], args: dict[str, Any]) -> Any:
    if args["customerId"] not in state["customers"]:
        raise silo.tool_error("not_found", f'Customer "{args["customerId"]}" was not found.')
    app = state["app"]
    if app["owner"] == args["customerId"] and app["offline"]:
        raise silo.tool_error("invalid_state", "The customer's app is offline: it cannot sync.")
    state["sequence"] += 1
    order_id = f"ORD-{state['sequence']}"
    order = {"id": order_id, "customerId": args["customerId"], "total": 3 * args["quantity"]}
    state["orders"][order_id] = {**order, "refunded": False}
    return order


@silo.tool(
    name="refund_order",
    description="Refund an order (policy: only totals under 100).",
    input_schema=_object({"orderId": {"type": "string"}}, ["orderId"]),
)
def refund_order(state: dict[str, Any], args: dict[str, Any]) -> Any:
    order = state["orders"][args["orderId"]]
    order["refunded"] = True
    return order


@silo.tool(
    name="set_offline_mode",
    description="The customer's own app setting: offline mode on or off.",
    input_schema=_object({"on": {"type": "boolean"}}, ["on"]),
)
def set_offline_mode(state: dict[str, Any], args: dict[str, Any]) -> Any:
    state["app"]["offline"] = args["on"]
    return {"offline": state["app"]["offline"]}


@silo.tool(name="app_status", description="The customer's app status.")
async def app_status(state: dict[str, Any], args: dict[str, Any]) -> Any:
    return dict(state["app"])


def _orders_for(final: Any, initial: Any, customer: str) -> list[dict[str, Any]]:
    return [
        o
        for key, o in final["orders"].items()
        if key not in initial["orders"] and o["customerId"] == customer
    ]


@silo.verifier(id="VER-ORDER", task_id="CHAT-ORDER")
def order_placed(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    orders = _orders_for(final, initial, "CUS-1")
    return [
        silo.check("one order for Ada", len(orders) == 1, f"{len(orders)} orders"),
        silo.check("of 3 croissants", bool(orders) and orders[0]["total"] == 9),
        silo.check("Ada was told the order id", bool(orders) and told(ctx, orders[0]["id"])),
    ]


@silo.verifier(id="VER-SYNC", task_id="CHAT-SYNC")
def synced(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    orders = _orders_for(final, initial, "CUS-2")
    return [
        silo.check("the app is online", final["app"]["offline"] is False),
        silo.check("one order for Bo", len(orders) == 1),
    ]


@silo.verifier(id="VER-REFUSE", task_id="CHAT-REFUSE")
def refused(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [
        silo.check("ORD-7 is not refunded", final["orders"]["ORD-7"]["refunded"] is False),
        silo.check("Bo was told the policy", told(ctx, "under $100")),
    ]


ORDER_USER: dict[str, Any] = {
    "opening": "Hi! I'd like to order three croissants, please.",
    "persona": "Ada, a regular customer in a hurry.",
    "knows": {"email": "ada@example.com"},
    "script": [
        {"when": ["email"], "say": "It's ada@example.com."},
        {"when": ["ord-"], "say": "Perfect, thank you!", "end": True},
    ],
    "otherwise": {"say": "Sorry, what do you need from me?"},
}

SYNC_USER: dict[str, Any] = {
    "opening": "My order won't go through, it's bo@example.com.",
    "script": [
        {
            "when": ["offline"],
            "do": [{"tool": "set_offline_mode", "input": {"on": False}}],
            "say": "OK, I switched offline mode off.",
            "once": True,
        },
        {"when": ["placed"], "say": "Great, bye!", "end": True},
    ],
    "otherwise": {"say": "Hm, I'm not sure."},
    "tools": ["set_offline_mode", "app_status"],
    "maxTurns": 5,
}

REFUSE_USER: dict[str, Any] = {
    "opening": "Please refund my order ORD-7, I changed my mind.",
    "script": [{"when": ["100"], "say": "Oh well. Bye.", "end": True}],
    "otherwise": {"say": "So can I get my refund?"},
}

TASKS = [
    silo.Task("CHAT-ORDER", "Take an order", "Serve the customer.", "VER-ORDER", user=ORDER_USER),
    silo.Task(
        "CHAT-SYNC", "Fix the sync", "Help them order 1 croissant.", "VER-SYNC", user=SYNC_USER
    ),
    silo.Task(
        "CHAT-REFUSE", "Refund", "Handle the customer's request.", "VER-REFUSE", user=REFUSE_USER
    ),
]

ENV = silo.Environment(
    name="bakery",
    create_state=create_state,
    tools=[find_customer, place_order, refund_order, set_offline_mode, app_status],
    verifiers=[order_placed, synced, refused],
    tasks=TASKS,
)


async def solver(ctx: silo.AgentContext) -> str:
    """Solves every task through the tools and ``message_user`` only."""
    if "croissants" in ctx.task:
        said = await ctx.call_tool("message_user", {"text": "Sure! What is your email?"})
        email = said.output["reply"].removeprefix("It's ").rstrip(".")
        customer = (await ctx.call_tool("find_customer", {"email": email})).output
        order = await ctx.call_tool("place_order", {"customerId": customer["id"], "quantity": 3})
        await ctx.call_tool("message_user", {"text": f"Done: your order is {order.output['id']}."})
        return "ordered"
    if "won't go through" in ctx.task:
        await ctx.call_tool("message_user", {"text": "Please switch offline mode off."})
        await ctx.call_tool("place_order", {"customerId": "CUS-2", "quantity": 1})
        await ctx.call_tool("message_user", {"text": "Your order is placed."})
        return "synced"
    await ctx.call_tool(
        "message_user", {"text": "Sorry, refunds are only possible for orders under $100."}
    )
    return "refused"


NOOP = ScriptedAgent([], answer="")


_ENTRYPOINT = '''"""The bakery world of the tests, on disk."""

import silo_async as silo

from .world import ENV

create_state = ENV.create_state
tools = list(ENV.tools)
verifiers = list(ENV.verifiers)


def bind_tools(state):
    return silo.bind_tools(state, tools)
'''


def write_project(root: Path, tasks: Iterable[silo.Task] = TASKS) -> Path:
    """The bakery as an on-disk environment of a project at ``root`` (and its solver file).

    Returns:
        The solver file (``bakery_solver.py``, whose ``solver`` solves every task).
    """
    env_dir = root / ".silo" / "environments" / "bakery"
    (env_dir / "tasks").mkdir(parents=True)
    (env_dir / "data").mkdir()
    source = Path(__file__).read_text(encoding="utf-8")
    (env_dir / "world.py").write_text(source, encoding="utf-8")
    (env_dir / "__init__.py").write_text(_ENTRYPOINT, encoding="utf-8")
    for task in tasks:
        (env_dir / "tasks" / f"{task.id}.json").write_text(json.dumps(task.to_dict()))
    solver_file = root / "bakery_solver.py"
    solver_file.write_text(source, encoding="utf-8")
    return solver_file


class Echo:
    """A user of one's own: repeats the agent, ends at the second turn (for ``user=``)."""

    def __init__(self, task: silo.Task) -> None:
        self.task = task

    async def reply(self, turn: silo.UserTurn) -> silo.UserReply:
        return silo.UserReply(f"{self.task.id} heard: {turn.text}", ended=turn.number == 2)
