"""goodwill-credit: a customer asks for money back; policy says how much, if anything.

A goodwill credit is at most the policy's cap and at most one per customer in the policy's
window: the agent checks the customer's credits, credits their latest bill with what they asked
(capped) when none was given in the window, and otherwise says no — the case is resolved
either way, and a "no" leaves the account as it was.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

from ..state import Line, State, bills_of
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

_WHY = (
    "my coverage at home was terrible for most of last week",
    "calls kept dropping while I was working from home",
    "I had no data for two days during an outage",
    "the signal in my town has been patchy all month",
)


def _recent_goodwill(world: State, customer_id: str) -> bool:
    """A goodwill credit on one of the customer's bills inside the policy's window."""
    months = world["policies"]["goodwillWindowMonths"]
    since = add_days(today(world), -round(months * 365 / 12))
    bills = {b["id"] for b in bills_of(world, customer_id)}
    return any(
        c["reason"] == "goodwill" and c["billId"] in bills and c["createdAt"][:10] >= since
        for c in world["credits"].values()
    )


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A customer with a bill, what they ask for, and the answer the policy gives."""
    live: dict[str, Line] = {}
    for line in sorted_by_id(world["lines"]):
        if line["status"] == "active":
            live.setdefault(line["customerId"], line)
    customers = [
        c for c in sorted_by_id(world["customers"]) if bills_of(world, c["id"]) and c["id"] in live
    ]
    if not customers:
        raise silo.NoInstance("no customer with a bill writes in from a live line")
    customer = rng.choice(customers)
    line = live[customer["id"]]
    cap = float(world["policies"]["goodwillMaxAmount"])
    asked = float(rng.randrange(5, 41))
    staff = pick_staff(world, rng, credit=cap)
    latest = max(bills_of(world, customer["id"]), key=lambda b: (b["period"], b["id"]))
    return {
        **case_calls(world, customer["id"], staff["id"]),
        "number": shown(line["msisdn"]),
        "why": rng.choice(_WHY),
        "asked": asked,
        "billId": latest["id"],
        "credit": None if _recent_goodwill(world, customer["id"]) else min(asked, cap),
        # The id the credit gets: the world numbers them.
        "creditId": f"ADJ-{world['sequences']['ADJ'] + 1:03d}",
    }


def user(p: Mapping[str, Any]) -> dict[str, Any]:
    """The customer asks for a sum back."""
    opening = (
        f"Hi, {p['why']}, and I'd like €{p['asked']:.0f} back on my bill as a gesture. My "
        f"number is {p['number']}."
    )
    return customer_user(p, opening, knows={"phoneNumber": p["number"], "asked": p["asked"]})


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Case and verification, the credit when the policy allows it, resolution."""
    calls = open_and_verify(p, "Goodwill credit request")
    if p["credit"] is not None:
        credit = {
            "billId": p["billId"],
            "amount": p["credit"],
            "reason": "goodwill",
            "note": "Goodwill for poor service.",
            "caseId": p["caseId"],
            "actorId": p["staffId"],
        }
        calls.append(silo.Call("issue_credit", credit))
    calls.append(close(p, "Goodwill request handled under the policy."))
    return calls


async def solve(ctx: silo.AgentContext, p: Mapping[str, Any]) -> str:
    """Verify, credit or decline, tell them."""
    calls = gold(p)
    await play(ctx, calls[:1])
    await say(ctx, "I'm sorry about that. Could you confirm your security PIN first?")
    await play(ctx, calls[1:])
    if p["credit"] is None:
        told = "A goodwill credit was already given this year, so I can't add another."
    else:
        told = f"I've credited €{p['credit']:.2f} to your latest bill."
    await say(ctx, f"{told} Anything else?")
    return told


def checks(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """Who made the changes; the credit's note is the agent's words (left out above)."""
    return as_staff(final, initial, ctx, p)


family = silo.TaskFamily(
    id="goodwill-credit",
    title="Answer a goodwill credit request by the policy",
    difficulty="medium",
    sample=sample,
    instruction=chat_instruction,
    gold=gold,
    user=user,
    solve=solve,
    checks=checks,
    ignore=(*IGNORE, "credits.*.note"),
)
