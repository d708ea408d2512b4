"""chase-stale-deals: every deal of one rep stuck in its stage too long gets a follow-up.

The threshold is the manager's, not always the company's stale policy, so the agent cannot
lean on a ``staleOnly`` filter alone: it must read each of the rep's open deals' days in stage
and compare ("more than N days": a deal at exactly N is not stuck). Each stuck deal gets one
follow-up of the asked kind, owned by the rep, due on the asked date — made as the manager.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

from ..state import State, can_own_deals, days_in_stage, full_name, open_opportunities

__all__ = ["family"]

#: Who may ask for follow-ups on someone else's deals.
_MANAGERS = ("director", "sales_ops")
#: Thresholds a manager may set, in days in the current stage.
_THRESHOLDS = (10, 14, 21, 30, 40)
#: The kinds of follow-up, as the manager words them.
_KINDS = {"call": "a call", "email": "an email", "meeting": "a meeting", "task": "a task"}


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A rep with at least one open deal past a threshold, a manager, a kind and a due date."""
    threshold = rng.choice(_THRESHOLDS)
    reps = []
    for user in sorted_by_id(world["users"]):
        if not (user["active"] and can_own_deals(user)):
            continue
        stuck = [
            o["id"]
            for o in open_opportunities(world, user["id"])
            if days_in_stage(world, o) > threshold
        ]
        if stuck:
            reps.append((user, stuck))
    managers = [u for u in sorted_by_id(world["users"]) if u["active"] and u["role"] in _MANAGERS]
    if not reps or not managers:
        raise silo.NoInstance(f"no active rep has an open deal more than {threshold} days in stage")
    rep, stuck = rng.choice(reps)
    manager = rng.choice([m for m in managers if m["id"] != rep["id"]] or managers)
    kind = rng.choice(sorted(_KINDS))
    return {
        "rep": full_name(rep),
        "repId": rep["id"],
        "manager": full_name(manager),
        "managerId": manager["id"],
        "threshold": threshold,
        "kind": kind,
        "due": add_days(today(world), rng.randint(1, 14)),
        "stuck": stuck,
    }


def instruction(p: Mapping[str, Any]) -> str:
    """The manager's request, with the threshold in days."""
    return (
        f"I'm {p['manager']}. Some of {p['rep']}'s open deals have sat in the same stage for "
        f"more than {p['threshold']} days. For each of those deals (and only those), schedule "
        f"{_KINDS[p['kind']]} for {p['rep']} on the deal, due {p['due']}, to get it moving "
        "again. Make the changes as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """One follow-up per stuck deal, in id order."""
    return [
        silo.Call(
            "schedule_activity",
            {
                "type": p["kind"],
                "subject": f"Unstick deal {deal}",
                "relatedType": "opportunity",
                "relatedId": deal,
                "ownerId": p["repId"],
                "dueDate": p["due"],
                "actorId": p["managerId"],
            },
        )
        for deal in p["stuck"]
    ]


def checks(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """Who scheduled them (the audit log is left out of the comparison)."""
    new = final["auditLog"][len(initial["auditLog"]) :]
    others = sorted({e["actorId"] for e in new if e["actorId"] != p["managerId"]})
    return [
        silo.check(
            f"every change was made as {p['manager']}",
            bool(new) and not others,
            f"also made as {', '.join(others)}" if others else "",
        )
    ]


family = silo.TaskFamily(
    id="chase-stale-deals",
    title="Chase a rep's deals stuck in their stage",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=checks,
    # Subjects and notes are the agent's words; the audit log and the id counters follow its
    # order of work (new activities created in another order are matched by what they hold).
    ignore=("auditLog", "sequences", "activities.*.subject", "activities.*.notes"),
)
