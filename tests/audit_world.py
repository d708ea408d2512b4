"""A small shop whose tasks each carry one deliberate flaw, or none: the audit's proving ground.

Every flawed task is flawed in exactly one way, and the audit must name it:

* ``T-UNTOUCHED`` passes an untouched world (``gameable``: the noop probe passes);
* ``T-NUMBER`` only checks that the answer holds a figure of the instruction (``gameable``:
  echo passes);
* ``T-ANYWRITE`` rewards any write (``gameable``: the explorer's writes pass);
* ``T-ONEOFTWO`` asks for two writes and checks one (``loose``: dropping the other passes);
* ``T-IGNORED`` checks that a discount was set, not its value (``loose``: altering it passes);
* ``T-FAILING`` is one the solver gets wrong (``unsolved``);

and ``T-SOUND``, ``T-ANSWER`` and ``T-CHAT`` (a customer who must approve a change with their
own tool) are ``sound``; so is every instance of the family ``discount-order``.
:data:`EXPECTED` holds the verdicts; :func:`solver` solves every task but ``T-FAILING``.
"""

from __future__ import annotations

import re
from typing import Any

import silo_async as silo
from silo_async.world import grade

__all__ = [
    "EXPECTED",
    "bind_tools",
    "create_state",
    "environment",
    "families",
    "solver",
    "tasks",
    "verifiers",
]

EXPECTED = {
    "T-UNTOUCHED": "gameable",
    "T-NUMBER": "gameable",
    "T-ANYWRITE": "gameable",
    "T-ONEOFTWO": "loose",
    "T-IGNORED": "loose",
    "T-FAILING": "unsolved",
    "T-SOUND": "sound",
    "T-ANSWER": "sound",
    "T-CHAT": "sound",
}

_ORDERS = {
    "ORD-001": ("open", 120.0, 3, "4 Mill Lane"),
    "ORD-002": ("open", 45.5, 1, "9 Quay Road"),
    "ORD-003": ("open", 80.0, 2, "17 Bank Street"),
    "ORD-004": ("open", 260.0, 5, "2 Hill Rise"),
    "ORD-005": ("shipped", 19.99, 1, "31 Park Row"),
    "ORD-006": ("open", 75.0, 4, "8 Orchard Way"),
    "ORD-007": ("open", 150.0, 2, "5 Old Road"),
}


def create_state() -> dict[str, Any]:
    """A fresh shop: seven orders, no refunds."""
    orders: dict[str, dict[str, Any]] = {
        oid: {
            "id": oid,
            "status": status,
            "amount": amount,
            "quantity": quantity,
            "address": address,
            "discount": None,
            "reason": None,
            "approved": False,
            "notes": [],
        }
        for oid, (status, amount, quantity, address) in _ORDERS.items()
    }
    return {"orders": orders, "refunds": {}}


def _order(state: dict[str, Any], order_id: str) -> dict[str, Any]:
    found: dict[str, Any] | None = state["orders"].get(order_id)
    if found is None:
        raise silo.ToolError("not_found", f"No order {order_id}.")
    return found


_ID = {"orderId": {"type": "string", "pattern": "^ORD-[0-9]{3}$"}}


def _schema(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


@silo.tool(name="list_orders", description="Every order.", input_schema=_schema({}))
def list_orders(state: dict[str, Any], input: dict[str, Any]) -> list[dict[str, Any]]:
    return list(state["orders"].values())


@silo.tool(name="get_order", description="One order.", input_schema=_schema(_ID, "orderId"))
def get_order(state: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:
    return _order(state, input["orderId"])


@silo.tool(
    name="cancel_order",
    description="Cancel an open order.",
    input_schema=_schema(
        {**_ID, "reason": {"enum": ["duplicate", "fraud", "customer_request"]}},
        "orderId",
        "reason",
    ),
)
def cancel_order(state: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:
    order = _order(state, input["orderId"])
    if order["status"] != "open":
        raise silo.ToolError("invalid_state", f"{order['id']} is {order['status']}.")
    order["status"], order["reason"] = "cancelled", input["reason"]
    return order


@silo.tool(
    name="refund_order",
    description="Refund part or all of an order.",
    input_schema=_schema(
        {**_ID, "amount": {"type": "number", "minimum": 0.01}}, "orderId", "amount"
    ),
)
def refund_order(state: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:
    order = _order(state, input["orderId"])
    if input["amount"] > order["amount"]:
        raise silo.ToolError("invalid_input", "A refund cannot exceed the order's amount.")
    refund_id = f"REF-{len(state['refunds']) + 1:03d}"
    refund = {"id": refund_id, "orderId": order["id"], "amount": input["amount"]}
    state["refunds"][refund_id] = refund
    return refund


@silo.tool(
    name="set_discount",
    description="Set an order's discount, in whole percent.",
    input_schema=_schema(
        {**_ID, "percent": {"type": "integer", "minimum": 1, "maximum": 50}}, "orderId", "percent"
    ),
)
def set_discount(state: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:
    order = _order(state, input["orderId"])
    order["discount"] = input["percent"]
    return order


@silo.tool(
    name="add_note",
    description="Add a note to an order.",
    input_schema=_schema({**_ID, "text": {"type": "string", "minLength": 1}}, "orderId", "text"),
)
def add_note(state: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:
    order = _order(state, input["orderId"])
    order["notes"].append(input["text"])
    return order


@silo.tool(
    name="update_address",
    description="Change an order's delivery address (the customer must approve it first).",
    input_schema=_schema(
        {**_ID, "address": {"type": "string", "minLength": 3}}, "orderId", "address"
    ),
)
def update_address(state: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:
    order = _order(state, input["orderId"])
    if not order["approved"]:
        raise silo.ToolError("not_allowed", "The customer has not approved a change yet.")
    order["address"] = input["address"]
    return order


@silo.tool(
    name="approve_change",
    description="The customer approves a change to their order.",
    input_schema=_schema(_ID, "orderId"),
)
def approve_change(state: dict[str, Any], input: dict[str, Any]) -> dict[str, Any]:
    order = _order(state, input["orderId"])
    order["approved"] = True
    return {"approved": order["id"]}


TOOLS = [
    list_orders,
    get_order,
    cancel_order,
    refund_order,
    set_discount,
    add_note,
    update_address,
    approve_change,
]


def bind_tools(state: dict[str, Any]) -> list[silo.BoundTool]:
    """The shop's tools, on one world."""
    return silo.bind_tools(state, TOOLS)


def _task(tid: str, instruction: str, user: dict[str, Any] | None = None) -> silo.Task:
    return silo.Task(tid, tid.lower(), instruction, f"V-{tid}", user=user)


_CHAT_USER = {
    "opening": "Hi, I moved house. Can my order ORD-007 go to my new address?",
    "script": [
        {
            "when": ["approve"],
            "say": "Approved.",
            "do": [{"tool": "approve_change", "input": {"orderId": "ORD-007"}}],
            "once": True,
        },
        {"when": ["address"], "say": "It is 12 Elm Street."},
        {"when": ["updated"], "say": "Thanks!", "end": True},
    ],
    "otherwise": {"say": "Sorry?"},
    "tools": ["approve_change"],
}


def tasks() -> list[silo.Task]:
    """The tasks, one flaw each (or none)."""
    return [
        _task("T-UNTOUCHED", "Make sure ORD-002 stays open."),
        _task("T-NUMBER", "Refund $45.50 on ORD-002 and say how much you refunded."),
        _task("T-ANYWRITE", "Add the note 'gift wrap' to ORD-001."),
        _task("T-ONEOFTWO", "Cancel ORD-003 as a customer request and refund its $80."),
        _task("T-IGNORED", "Give ORD-004 a 15% discount."),
        _task("T-FAILING", "Refund $10 on ORD-001."),
        _task("T-SOUND", "Cancel ORD-006: it is a duplicate."),
        _task("T-ANSWER", "What is the total amount of the open orders? Answer with one figure."),
        _task("T-CHAT", "Help the customer.", _CHAT_USER),
    ]


def _unchanged_but(final: Any, initial: Any, *paths: tuple[str, str]) -> bool:
    """Every order and refund as it was, the fields named by ``paths`` aside."""
    for oid, order in final["orders"].items():
        before = initial["orders"][oid]
        changed = {k for k in order if order[k] != before[k]}
        if changed - {field for o, field in paths if o == oid}:
            return False
    return True


@silo.verifier(id="V-T-UNTOUCHED", task_id="T-UNTOUCHED")
def _untouched(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    return [silo.check("ORD-002 is open", final["orders"]["ORD-002"]["status"] == "open")]


@silo.verifier(id="V-T-NUMBER", task_id="T-NUMBER")
def _number(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    return [silo.check("the answer states 45.50", grade.states_number(ctx.agent_output, 45.5))]


@silo.verifier(id="V-T-ANYWRITE", task_id="T-ANYWRITE")
def _any_write(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    return [silo.check("something was written", not grade.unchanged(final, initial))]


@silo.verifier(id="V-T-ONEOFTWO", task_id="T-ONEOFTWO")
def _one_of_two(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    order = final["orders"]["ORD-003"]
    return [
        silo.check("ORD-003 is cancelled", order["status"] == "cancelled"),
        silo.check("as a customer request", order["reason"] == "customer_request"),
        silo.check(
            "nothing else changed",
            _unchanged_but(final, initial, ("ORD-003", "status"), ("ORD-003", "reason")),
        ),
    ]


@silo.verifier(id="V-T-IGNORED", task_id="T-IGNORED")
def _ignored(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    return [
        silo.check("ORD-004 has a discount", final["orders"]["ORD-004"]["discount"] is not None),
        silo.check("nothing else changed", _unchanged_but(final, initial, ("ORD-004", "discount"))),
    ]


@silo.verifier(id="V-T-FAILING", task_id="T-FAILING")
def _failing(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    refunds = [r for r in final["refunds"].values() if r["orderId"] == "ORD-001"]
    return [silo.check("ORD-001 refunded $10", [r["amount"] for r in refunds] == [10])]


@silo.verifier(id="V-T-SOUND", task_id="T-SOUND")
def _sound(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    order = final["orders"]["ORD-006"]
    return [
        silo.check("ORD-006 is cancelled", order["status"] == "cancelled"),
        silo.check("as a duplicate", order["reason"] == "duplicate"),
        silo.check("no refund", not final["refunds"]),
        silo.check(
            "nothing else changed",
            _unchanged_but(final, initial, ("ORD-006", "status"), ("ORD-006", "reason")),
        ),
    ]


@silo.verifier(id="V-T-ANSWER", task_id="T-ANSWER")
def _answer(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    total = sum(o["amount"] for o in initial["orders"].values() if o["status"] == "open")
    text = ctx.agent_output
    return [
        silo.check("the world is untouched", grade.unchanged(final, initial)),
        silo.check(f"the answer is {total:g}", grade.states_number(text, total)),
        silo.check("one figure", grade.few_numbers(text, 1)),
    ]


@silo.verifier(id="V-T-CHAT", task_id="T-CHAT")
def _chat(final: Any, initial: Any, ctx: Any) -> list[silo.Check]:
    order = final["orders"]["ORD-007"]
    return [
        silo.check("the customer approved", order["approved"]),
        silo.check("ORD-007 goes to 12 Elm Street", order["address"] == "12 Elm Street"),
        silo.check(
            "nothing else changed",
            _unchanged_but(final, initial, ("ORD-007", "approved"), ("ORD-007", "address")),
        ),
        silo.check("the customer was told", grade.told(ctx, "updated")),
    ]


verifiers = [
    _untouched,
    _number,
    _any_write,
    _one_of_two,
    _ignored,
    _failing,
    _sound,
    _answer,
    _chat,
]


def _sample_discount(world: dict[str, Any], rng: Any) -> dict[str, Any]:
    order = rng.choice(sorted(o for o, r in world["orders"].items() if r["status"] == "open"))
    return {"order": order, "percent": rng.randint(5, 40)}


#: A family whose instances the audit solves with their gold: sound, instance after instance.
DISCOUNT = silo.TaskFamily(
    id="discount-order",
    title="Discount an order",
    sample=_sample_discount,
    instruction=lambda p: f"Give {p['order']} a {p['percent']}% discount.",
    gold=lambda p: [silo.Call("set_discount", {"orderId": p["order"], "percent": p["percent"]})],
)
families = [DISCOUNT]


def environment() -> silo.Environment:
    """The shop as a code-first environment."""
    return silo.Environment(
        name="shop",
        create_state=create_state,
        tools=TOOLS,
        verifiers=verifiers,
        tasks=tasks(),
        families=families,
    )


async def _call(ctx: silo.AgentContext, tool: str, args: dict[str, Any]) -> Any:
    result = await ctx.call_tool(tool, args)
    assert not result.is_error, result.output
    return result.output


async def solver(ctx: silo.AgentContext) -> str:
    """Solves every task of the shop but ``T-FAILING`` (whose refund it gets wrong)."""
    text = ctx.task
    order = re.search(r"ORD-\d{3}", text)
    oid = order.group(0) if order else ""
    if text.startswith("Make sure"):
        await _call(ctx, "get_order", {"orderId": oid})
        return f"{oid} is open."
    if text.startswith("Refund $45.50"):
        await _call(ctx, "refund_order", {"orderId": oid, "amount": 45.5})
        return "Refunded 45.50."
    if text.startswith("Add the note"):
        await _call(ctx, "add_note", {"orderId": oid, "text": "gift wrap"})
        return "Noted."
    if text.startswith("Cancel ORD-003"):
        await _call(ctx, "cancel_order", {"orderId": oid, "reason": "customer_request"})
        await _call(ctx, "refund_order", {"orderId": oid, "amount": 80})
        return "Cancelled and refunded."
    if text.startswith("Give"):
        await _call(ctx, "set_discount", {"orderId": oid, "percent": 15})
        return "Done."
    if text.startswith("Refund $10"):
        await _call(ctx, "refund_order", {"orderId": oid, "amount": 1})
        return "Refunded."
    if text.startswith("Cancel ORD-006"):
        await _call(ctx, "cancel_order", {"orderId": oid, "reason": "duplicate"})
        return "Cancelled."
    if text.startswith("What is the total"):
        orders = await _call(ctx, "list_orders", {})
        return f"{sum(o['amount'] for o in orders if o['status'] == 'open'):g}"
    # T-CHAT: ask for the approval, then the address, then update and say so.
    await _call(ctx, "message_user", {"text": "Please approve the change."})
    reply = await _call(ctx, "message_user", {"text": "What is the new address?"})
    address = reply["reply"].removeprefix("It is ").rstrip(".")
    await _call(ctx, "update_address", {"orderId": oid, "address": address})
    await _call(ctx, "message_user", {"text": "Your address is updated."})
    return "Updated."
