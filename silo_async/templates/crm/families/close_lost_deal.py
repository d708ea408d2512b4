"""close-lost-deal: a customer says no; the deal is closed lost and its follow-ups wrapped up.

The agent hears the customer's words, not the pipeline's vocabulary: "their budget was cut"
is ``no_budget``, "they signed with another vendor" is ``competitor``. It must find the deal by
name (an account may have several open ones), close it lost with that reason as its owner, and
complete every follow-up still open on that deal (a follow-up on a closed deal is noise in
everyone's list) — and no other.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..state import State, full_name, is_activity_open, is_open

__all__ = ["family"]

#: How a customer says why they said no, per reason code of close_opportunity_lost.
_SAYINGS: dict[str, tuple[str, ...]] = {
    "price": (
        "our quote came in well above what they will pay",
        "they found the licence too expensive",
    ),
    "competitor": (
        "they signed with another vendor last week",
        "a rival's platform won their evaluation",
    ),
    "no_budget": (
        "their budget for the project was cut",
        "finance froze all new software spending there",
    ),
    "no_decision": (
        "their committee could not agree and shelved the decision",
        "nobody there will sign off, so the project stalls indefinitely",
    ),
    "timing": (
        "it is the wrong moment for them and they may look again in a year",
        "they are mid-migration and cannot take it on this year",
    ),
}


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """An open deal owned by an active user, a reason and the words a customer says it with."""
    users = world["users"]
    deals = [
        o
        for o in sorted_by_id(world["opportunities"])
        if is_open(o) and users[o["ownerId"]]["active"]
    ]
    if not deals:
        raise silo.NoInstance("no open deal has an active owner")
    deal = rng.choice(deals)
    reason = rng.choice(sorted(_SAYINGS))
    saying = rng.choice(_SAYINGS[reason])
    contact_id = deal["primaryContactId"]
    contact = world["contacts"][contact_id] if contact_id is not None else None
    follow_ups = [
        a["id"]
        for a in sorted_by_id(world["activities"])
        if is_activity_open(a) and a["relatedTo"] == {"type": "opportunity", "id": deal["id"]}
    ]
    return {
        "deal": deal["name"],
        "dealId": deal["id"],
        "account": world["accounts"][deal["accountId"]]["name"],
        "owner": full_name(users[deal["ownerId"]]),
        "ownerId": deal["ownerId"],
        "contact": full_name(contact) if contact is not None else None,
        "saying": saying,
        "reason": reason,
        "followUps": follow_ups,
    }


def instruction(p: Mapping[str, Any]) -> str:
    """The owner passes on what the customer said."""
    who = p["contact"] or "Our contact"
    return (
        f"I'm {p['owner']}. {who} at {p['account']} called: {p['saying']}. So we have lost "
        f'"{p["deal"]}". Close that deal as lost with the reason that fits, and complete every '
        "follow-up still open on it. Leave their other deals alone. Do it all as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Close the deal lost, then complete each open follow-up on it."""
    actor = p["ownerId"]
    calls = [
        silo.Call(
            "close_opportunity_lost",
            {"opportunityId": p["dealId"], "reason": p["reason"], "actorId": actor},
        )
    ]
    calls += [
        silo.Call("complete_activity", {"activityId": activity, "actorId": actor})
        for activity in p["followUps"]
    ]
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
    id="close-lost-deal",
    title="Close a lost deal and wrap up its follow-ups",
    difficulty="easy",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=checks,
    # Completion notes are the agent's own words; the audit log's order is its order of work.
    ignore=("auditLog", "sequences", "activities.*.notes"),
)
