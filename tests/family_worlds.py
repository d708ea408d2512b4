"""A small code-first world with task families, shared by the tests of section 18.

A shop's customers (by name), their tiers, and notes; ``set_tier`` is a ``def`` tool, ``add_note``
an ``async def`` one (it takes a new id from ``sequences``), ``lookup`` finds a customer by name.
Families: ``set-tier`` (one write), ``tier-and-note`` (two writes, the note's text ignored), and
``count-gold`` (an answer, no write).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import anyio

import silo_async as silo

NAMES = ["Ada Byrne", "Bo Chen", "Cy Dorsey", "Di Evans", "Ed Frost", "Fay Gill", "Gus Hale"]
TIERS = ["bronze", "silver", "gold"]


def create_state() -> dict[str, Any]:
    """Seven customers, tiers by position, no notes."""
    customers = {
        f"C-{i + 1}": {"id": f"C-{i + 1}", "name": name, "tier": TIERS[i % 3], "updatedBy": None}
        for i, name in enumerate(NAMES)
    }
    return {
        "clock": {"now": "2026-01-01"},
        "customers": customers,
        "notes": [],
        "sequences": {"N": 0},
    }


def _customer(state: dict[str, Any], customer_id: str) -> dict[str, Any]:
    found: dict[str, Any] | None = state["customers"].get(customer_id)
    if found is None:
        raise silo.tool_error("not_found", f"No customer {customer_id}.")
    return found


@silo.tool(
    name="lookup",
    description="Find a customer by name.",
    input_schema={
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    },
)
def lookup(state: dict[str, Any], args: dict[str, Any]) -> Any:
    for customer in state["customers"].values():
        if customer["name"] == args["name"]:
            return customer
    raise silo.tool_error("not_found", f"No customer named {args['name']}.")


@silo.tool(
    name="set_tier",
    description="Change a customer's tier.",
    input_schema={
        "type": "object",
        "properties": {"customerId": {"type": "string"}, "tier": {"enum": TIERS}},
        "required": ["customerId", "tier"],
        "additionalProperties": False,
    },
)
def set_tier(state: dict[str, Any], args: dict[str, Any]) -> Any:
    customer = _customer(state, args["customerId"])
    if customer["tier"] == args["tier"]:
        raise silo.tool_error("conflict", f"{customer['id']} is already {args['tier']}.")
    customer["tier"] = args["tier"]
    return customer


@silo.tool(
    name="add_note",
    description="Add a note about a customer.",
    input_schema={
        "type": "object",
        "properties": {"customerId": {"type": "string"}, "text": {"type": "string"}},
        "required": ["customerId", "text"],
    },
)
async def add_note(state: dict[str, Any], args: dict[str, Any]) -> Any:
    _customer(state, args["customerId"])
    await anyio.lowlevel.checkpoint()
    state["sequences"]["N"] += 1
    note = {
        "id": f"N-{state['sequences']['N']}",
        "customerId": args["customerId"],
        "text": args["text"],
    }
    state["notes"].append(note)
    return note


TOOLS = [lookup, set_tier, add_note]


def sample_tier(world: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A customer and a tier it is not in."""
    customer = world["customers"][rng.choice(sorted(world["customers"]))]
    tier = rng.choice([t for t in TIERS if t != customer["tier"]])
    return {"name": customer["name"], "customerId": customer["id"], "tier": tier}


def gold_tier(p: Mapping[str, Any]) -> list[silo.Call]:
    """One call."""
    return [silo.Call("set_tier", {"customerId": p["customerId"], "tier": p["tier"]})]


SET_TIER = silo.TaskFamily(
    id="set-tier",
    title="Move a customer to a tier",
    difficulty="easy",
    sample=sample_tier,
    instruction=lambda p: f"Move {p['name']} to the {p['tier']} tier.",
    gold=gold_tier,
)

TIER_AND_NOTE = silo.TaskFamily(
    id="tier-and-note",
    title="Move a customer and note why",
    difficulty="medium",
    sample=sample_tier,
    instruction=lambda p: f"Move {p['name']} to {p['tier']} and add a note saying why.",
    gold=lambda p: [
        *gold_tier(p),
        silo.Call("add_note", {"customerId": p["customerId"], "text": "Tier review."}),
    ],
    ignore=("notes.*.text",),
)


def sample_count(world: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """How many customers are in a tier."""
    tier = rng.choice(TIERS)
    count = sum(1 for c in world["customers"].values() if c["tier"] == tier)
    return {"tier": tier, "count": count}


COUNT = silo.TaskFamily(
    id="count-tier",
    title="Count a tier",
    sample=sample_count,
    instruction=lambda p: f"How many customers are {p['tier']}?",
    gold=lambda p: [],
    answer=lambda p: str(p["count"]),
)

FAMILIES = [SET_TIER, TIER_AND_NOTE, COUNT]


def environment(
    *families: silo.TaskFamily, vary: Any = None, name: str = "shop", **kwargs: Any
) -> silo.Environment:
    """The shop with ``families`` (default: all three above)."""
    return silo.Environment(
        name=name,
        create_state=create_state,
        tools=TOOLS,
        families=list(families or FAMILIES),
        vary=vary,
        **kwargs,
    )


async def noop(ctx: silo.AgentContext) -> str:
    """Does nothing."""
    return ""
