"""credit-limit: a customer's new credit limit, set by whoever of two may sign it.

The instruction offers two people to act as; only one has a credit-limit approval authority
covering the new amount (roles carry limits: a sales manager up to 25,000, a finance manager
up to 50,000...). When the customer is on credit hold and what they owe and have on order
(their exposure) now fits the new limit, the hold is released too — by someone who works in
receivables.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..domain.sales import exposure
from ..state import State, approval_limit, has_permission, is_authorised
from ._common import as_actor, money, name_of

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A customer, a new limit, one user who may set it and one who may not."""
    customer = rng.choice(sorted_by_id(world["customers"]))
    limit = float(rng.randrange(5_000, 120_000, 500))
    if limit == customer["creditLimit"]:
        raise silo.NoInstance("the new limit is the current one")
    release = customer["status"] == "on_hold" and exposure(world, customer["id"])["total"] <= limit
    users = [u for u in sorted_by_id(world["users"]) if u["active"]]
    # Whoever sets the limit releases the hold too, so must also work in receivables then.
    able = [
        u
        for u in users
        if is_authorised(world, u, "credit_limit", limit)
        and (not release or has_permission(world, u, "receivables"))
    ]
    # Someone who signs credit limits, only not this high: the tempting wrong choice.
    short = [
        u
        for u in users
        if not is_authorised(world, u, "credit_limit", limit)
        and (approval_limit(world, u, "credit_limit") or 0) > 0
    ]
    if not able or not short:
        raise silo.NoInstance(f"no pair of signers for {limit}")
    actor, other = rng.choice(able), rng.choice(short)
    pair = sorted([actor, other], key=lambda u: u["id"])
    return {
        "customer": customer["name"],
        "customerId": customer["id"],
        "limit": limit,
        "people": [name_of(u) for u in pair],
        "actor": name_of(actor),
        "actorId": actor["id"],
        "release": release,
    }


def instruction(p: Mapping[str, Any]) -> str:
    """Two names to act as; the agent finds who may."""
    first, second = p["people"]
    return (
        f"{p['customer']} has asked for a credit limit of {money(p['limit'])}, and it is "
        f"agreed. Set it, acting as {first} or {second} — whichever of them is authorised to "
        "approve a limit that high. If the customer is on credit hold and what they owe plus "
        "what they have on order now fits within the new limit, release the hold as well."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """The new limit, then the release when it applies."""
    actor = p["actorId"]
    calls = [
        silo.Call(
            "set_credit_limit",
            {
                "customerId": p["customerId"],
                "creditLimit": p["limit"],
                "reason": "Credit limit increase agreed",
                "actorId": actor,
            },
        )
    ]
    if p["release"]:
        calls.append(
            silo.Call(
                "release_customer_hold",
                {"customerId": p["customerId"], "reason": "Within the new limit", "actorId": actor},
            )
        )
    return calls


family = silo.TaskFamily(
    id="credit-limit",
    title="Set a customer's credit limit as someone authorised",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD"),
)
