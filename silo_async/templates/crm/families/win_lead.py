"""win-lead: a prospect is ready to buy; the lead becomes a customer and a deal.

The agent is given a person and a company by name. It must find the lead, qualify it first
when it is still new or being worked (only qualified leads convert), and convert it with the
deal's name, amount, close date and owner. The seeded mess matters here: when the lead's
company is already a customer under a slightly different name ("Corvane Diagnostics GmbH" is
the account "Corvane Diagnostics"), the lead joins that account instead of creating a second
one — the conversion even refuses a clash only when the names are equal.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.grade import fold
from silo_async.world.tools import sorted_by_id

from ..state import Account, Lead, State, can_own_deals, full_name

__all__ = ["family"]

_CONVERTIBLE = ("new", "working", "qualified")
#: What the deal is for, worded as the seller's products are.
_PRODUCTS = (
    "LIMS starter",
    "sample tracking rollout",
    "quality control module",
    "stability study module",
    "instrument integration pack",
    "audit trail add-on",
)


def existing_account(world: State, lead: Lead) -> Account | None:
    """The customer the lead's company already is: an account whose name starts its name."""
    company = fold(lead["company"])
    for account in sorted_by_id(world["accounts"]):
        name = fold(account["name"])
        if company == name or company.startswith(name + " "):
            return account
    return None


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """An open lead, the deal it becomes, who owns it, and who asks."""
    leads = [lead for lead in sorted_by_id(world["leads"]) if lead["status"] in _CONVERTIBLE]
    users = sorted_by_id(world["users"])
    owners = [u for u in users if u["active"] and can_own_deals(u)]
    if not leads or not owners:
        raise silo.NoInstance("no open lead, or nobody who may own its deal")
    lead, owner = rng.choice(leads), rng.choice(owners)
    account = existing_account(world, lead)
    product = rng.choice(_PRODUCTS)
    return {
        "person": full_name(lead),
        "company": lead["company"],
        "leadId": lead["id"],
        "qualify": lead["status"] != "qualified",
        "accountId": None if account is None else account["id"],
        "deal": f"{lead['company'] if account is None else account['name']} {product}",
        "amount": rng.randrange(12_000, 240_000, 500),
        "close": add_days(today(world), rng.randint(20, 120)),
        "owner": full_name(owner),
        "ownerId": owner["id"],
    }


def instruction(p: Mapping[str, Any]) -> str:
    """The owner-to-be asks, by names only."""
    return (
        f"I'm {p['owner']}. {p['person']} from {p['company']} is ready to buy. Turn their lead "
        f'into a customer with a deal named "{p["deal"]}" worth ${p["amount"]:,}, expected to '
        "close on "
        f"{p['close']}, owned by me. If the company is already one of our customers, keep it "
        "under that account — no duplicate accounts. Do it as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Qualify when needed, then convert (onto the existing account when there is one)."""
    actor = p["ownerId"]
    calls = []
    if p["qualify"]:
        calls.append(silo.Call("qualify_lead", {"leadId": p["leadId"], "actorId": actor}))
    conversion: dict[str, Any] = {
        "leadId": p["leadId"],
        "amount": p["amount"],
        "expectedCloseDate": p["close"],
        "opportunityName": p["deal"],
        "ownerId": p["ownerId"],
        "actorId": actor,
    }
    if p["accountId"] is not None:
        conversion["accountId"] = p["accountId"]
    calls.append(silo.Call("convert_lead", conversion))
    return calls


def checks(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """Who made the changes (the audit log is left out of the comparison)."""
    new = final["auditLog"][len(initial["auditLog"]) :]
    others = sorted({e["actorId"] for e in new if e["actorId"] != p["ownerId"]})
    return [
        silo.check(
            f"every change was made as {p['owner']}",
            bool(new) and not others,
            f"also made as {', '.join(others)}" if others else "",
        )
    ]


family = silo.TaskFamily(
    id="win-lead",
    title="Turn a ready lead into a customer and a deal",
    difficulty="hard",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=checks,
    ignore=("auditLog", "sequences"),
)
