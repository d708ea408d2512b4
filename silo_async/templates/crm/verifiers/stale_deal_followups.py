"""VER-007: one follow-up call per stalled deal, owned by the right person, due within a week."""

from __future__ import annotations

import silo_async as silo
from silo_async.world import every
from silo_async.world.clock import add_days, today
from silo_async.world.grade import modified_ids, new_records, written_by

from ..state import (
    Activity,
    State,
    days_in_stage,
    open_opportunities,
    stale_opportunities,
)

THRESHOLD_DAYS = 30
WINDOW_DAYS = 7

#: Who the task says acts: every change must be theirs.
ACTOR = "USR-001"


def _director(state: State) -> str:
    return next(u["id"] for u in state["users"].values() if u["role"] == "director" and u["active"])


@silo.verifier(id="VER-007", task_id="TASK-007")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Stale set from the initial world; calls graded on the final world; deals untouched."""
    start_day = today(initial)
    last_day = add_days(start_day, WINDOW_DAYS)
    stale = stale_opportunities(initial, THRESHOLD_DAYS)
    stale_ids = {o["id"] for o in stale}
    new_acts = new_records(final, initial, "activities")
    calls: dict[str, list[Activity]] = {}
    for act in new_acts:
        if act["relatedTo"]["type"] == "opportunity" and act["type"] == "call":
            calls.setdefault(act["relatedTo"]["id"], []).append(act)

    def expected_owner(opp_owner: str) -> str:
        return opp_owner if initial["users"][opp_owner]["active"] else _director(initial)

    covered = [
        o["id"] for o in stale if any(c["completedDate"] is None for c in calls.get(o["id"], []))
    ]
    owned_right = [
        o["id"]
        for o in stale
        if any(c["ownerId"] == expected_owner(o["ownerId"]) for c in calls.get(o["id"], []))
    ]
    in_window = [
        o["id"]
        for o in stale
        if any(start_day <= (c["dueDate"] or "") <= last_day for c in calls.get(o["id"], []))
    ]
    stray = sorted(
        {
            a["relatedTo"]["id"]
            for a in new_acts
            if a["relatedTo"]["type"] == "opportunity" and a["relatedTo"]["id"] not in stale_ids
        }
    )
    boundary = [
        o["id"] for o in open_opportunities(initial) if days_in_stage(initial, o) == THRESHOLD_DAYS
    ]
    deals_changed = modified_ids(final, initial, "opportunities")
    return [
        written_by(final, initial, ACTOR),
        every("every stalled deal has a new open follow-up call", covered, stale),
        every(
            "each call is owned by the deal's owner, or the director if the owner has left",
            owned_right,
            stale,
        ),
        every(f"each call is due between {start_day} and {last_day}", in_window, stale),
        silo.check(
            f"no follow-up was added to deals not stalled for more than {THRESHOLD_DAYS} days",
            not stray,
            ", ".join(stray) or "none",
        ),
        silo.check(
            "the deals themselves were not changed",
            not deals_changed,
            ", ".join(deals_changed) or "none",
        ),
        silo.optional(
            "exactly one call per stalled deal",
            all(len(calls.get(i, [])) == 1 for i in stale_ids),
        ),
        silo.optional(
            f"the seed has a deal at exactly {THRESHOLD_DAYS} days (the boundary is tested)",
            bool(boundary),
            ", ".join(boundary),
        ),
    ]
