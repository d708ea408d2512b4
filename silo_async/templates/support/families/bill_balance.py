"""bill-balance: what is still owed on the customer's latest bill — told only once verified.

The balance is computed (the bill's charges, less credits, less settled payments); account
details are discussed only with a verified account holder. The agent must tell the customer
the figure in the chat; the case records the contact.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.grade import told
from silo_async.world.tools import sorted_by_id

from ..state import State, bill_balance, bills_of
from ._common import (
    IGNORE,
    as_staff,
    case_calls,
    chat_instruction,
    close,
    customer_user,
    open_and_verify,
    pick_staff,
    play,
    say,
    shown,
)

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A customer with a bill and a live line, and what their latest bill still owes."""
    choices = []
    for customer in sorted_by_id(world["customers"]):
        bills = bills_of(world, customer["id"])
        lines = [
            line
            for line in sorted_by_id(world["lines"])
            if line["customerId"] == customer["id"] and line["status"] == "active"
        ]
        if bills and lines:
            choices.append((customer, bills, lines[0]))
    if not choices:
        raise silo.NoInstance("no customer with a bill writes in from a live line")
    customer, bills, line = rng.choice(choices)
    latest = max(bills, key=lambda b: (b["period"], b["id"]))
    staff = pick_staff(world, rng)
    return {
        **case_calls(world, customer["id"], staff["id"]),
        "number": shown(line["msisdn"]),
        "period": latest["period"],
        "balance": f"€{bill_balance(world, latest):.2f}",
    }


def user(p: Mapping[str, Any]) -> dict[str, Any]:
    """The customer asks what they still owe."""
    opening = f"Hi, how much do I still owe on my latest bill? My number is {p['number']}."
    return customer_user(p, opening, knows={"phoneNumber": p["number"]})


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """A question changes nothing but the case that records the contact."""
    return [*open_and_verify(p, "Bill balance question"), close(p, "Told the bill balance.")]


async def solve(ctx: silo.AgentContext, p: Mapping[str, Any]) -> str:
    """Verify, then tell the figure."""
    calls = gold(p)
    await play(ctx, calls[:1])
    await say(ctx, "Sure. First, for your security, what's your PIN?")
    await play(ctx, calls[1:])
    await say(
        ctx, f"Your latest bill ({p['period']}) has {p['balance']} left to pay. Anything else?"
    )
    return f"Balance {p['balance']}."


def checks(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """The customer was told the figure, in the chat."""
    return [
        *as_staff(final, initial, ctx, p),
        silo.check(f"the customer was told {p['balance']}", told(ctx, p["balance"])),
    ]


family = silo.TaskFamily(
    id="bill-balance",
    title="Tell a verified customer their bill balance",
    difficulty="easy",
    sample=sample,
    instruction=chat_instruction,
    gold=gold,
    user=user,
    solve=solve,
    checks=checks,
    ignore=IGNORE,
)
