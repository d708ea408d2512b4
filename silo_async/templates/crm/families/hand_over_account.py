"""hand-over-account: an account and its open deals change hands; its history stays put.

The agent is told names, never ids: it must find the account, the new owner and the person it
acts as, then tell the account's open deals (which move) from its closed ones (which stay with
whoever closed them as history), skip a deal the new owner already has, and book the new owner
an introduction call on the account. The gold solution is those calls; the final world must
match the world they reach, record by record.

The pattern every family of this template follows: ``sample`` reads the world and returns
plain params (names *and* the ids the gold calls need); ``instruction`` words them as a person
would; ``gold`` is the solution as tool calls; ``ignore`` leaves out what a correct agent may do
differently (the order of the audit log, a subject line it words itself); ``checks`` adds what
the comparison leaves out (every change was made as the named person).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

from ..state import State, can_own_deals, full_name, is_open

__all__ = ["family"]

#: Who may move other people's accounts and deals (besides their owner): see tools/helpers.py.
_MANAGERS = ("director", "sales_ops")


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """An account with open deals, a new owner for it, who acts, and when the call is due."""
    opportunities = sorted_by_id(world["opportunities"])
    accounts = [
        a
        for a in sorted_by_id(world["accounts"])
        if any(o["accountId"] == a["id"] and is_open(o) for o in opportunities)
    ]
    if not accounts:
        raise silo.NoInstance("no account has an open deal")
    account = rng.choice(accounts)
    users = sorted_by_id(world["users"])
    heirs = [u for u in users if u["active"] and can_own_deals(u) and u["id"] != account["ownerId"]]
    actors = [u for u in users if u["active"] and u["role"] in _MANAGERS]
    if not heirs or not actors:
        raise silo.NoInstance("no active user can take the account over or move it")
    heir, actor = rng.choice(heirs), rng.choice(actors)
    deals = [o for o in opportunities if o["accountId"] == account["id"]]
    return {
        "account": account["name"],
        "accountId": account["id"],
        "newOwner": full_name(heir),
        "newOwnerId": heir["id"],
        "actor": full_name(actor),
        "actorId": actor["id"],
        # Open deals the new owner does not already have: the ones that move.
        "moving": [o["id"] for o in deals if is_open(o) and o["ownerId"] != heir["id"]],
        "due": add_days(today(world), rng.randint(1, 10)),
    }


def instruction(p: Mapping[str, Any]) -> str:
    """What the agent is asked, by names only."""
    return (
        f"I'm {p['actor']}. {p['account']} is moving to {p['newOwner']}: give them the account "
        "and every deal on it that is still open (closed deals stay with whoever closed them). "
        f"Then schedule a call for {p['newOwner']} on the account, due {p['due']}, to introduce "
        "themselves. Make every change as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Reassign the account, then each open deal, then book the introduction call."""
    actor, heir = p["actorId"], p["newOwnerId"]
    calls = [
        silo.Call(
            "reassign_account",
            {"accountId": p["accountId"], "newOwnerId": heir, "actorId": actor},
        )
    ]
    calls += [
        silo.Call(
            "reassign_opportunity",
            {"opportunityId": deal, "newOwnerId": heir, "actorId": actor},
        )
        for deal in p["moving"]
    ]
    calls.append(
        silo.Call(
            "schedule_activity",
            {
                "type": "call",
                "subject": f"Introduction: {p['newOwner']} takes over {p['account']}",
                "relatedType": "account",
                "relatedId": p["accountId"],
                "ownerId": heir,
                "dueDate": p["due"],
                "actorId": actor,
            },
        )
    )
    return calls


def checks(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """The audit log is left out of the comparison (its order is the agent's): read it here."""
    new = final["auditLog"][len(initial["auditLog"]) :]
    others = sorted({e["actorId"] for e in new if e["actorId"] != p["actorId"]})
    return [
        silo.check(
            f"every change was made as {p['actor']}",
            bool(new) and not others,
            f"also made as {', '.join(others)}" if others else "",
        )
    ]


family = silo.TaskFamily(
    id="hand-over-account",
    title="Hand an account and its open deals over",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=checks,
    # The audit log's order and ids follow the agent's order of work, and the call's subject
    # and notes are the agent's own words: left out here, the actor is checked above.
    ignore=("auditLog", "sequences.AUD", "activities.*.subject", "activities.*.notes"),
)
