"""VER-005: Brackwater's open deal is recorded as lost to a competitor; its won deal is intact."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.clock import today
from silo_async.world.grade import modified_ids, written_by

from ..state import State, account_named, opportunity_named, outcome_stage

DEAL = "Brackwater QC lab expansion"
ACCOUNT = "Brackwater Brewing Co."

#: Who the task says acts: every change must be theirs.
ACTOR = "USR-006"


@silo.verifier(id="VER-005", task_id="TASK-005")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Lost, for the competitor reason, today, at its original amount."""
    start = opportunity_named(initial, DEAL)
    opp = final["opportunities"][start["id"]]
    account = account_named(initial, ACCOUNT)
    siblings = [
        o["id"]
        for o in initial["opportunities"].values()
        if o["accountId"] == account["id"] and o["id"] != start["id"]
    ]
    others = [i for i in modified_ids(final, initial, "opportunities") if i != start["id"]]
    return [
        written_by(final, initial, ACTOR),
        silo.check("the deal is lost", opp["status"] == "lost", opp["status"]),
        silo.check(
            "the reason is a competitor", opp["lostReason"] == "competitor", str(opp["lostReason"])
        ),
        silo.check(
            "the deal sits in the lost stage", opp["stageId"] == outcome_stage(final, "lost")["id"]
        ),
        silo.check("closed today", opp["closedDate"] == today(final), str(opp["closedDate"])),
        silo.check(
            "the amount was left as it was",
            opp["amount"] == start["amount"],
            f"{start['amount']} -> {opp['amount']}",
        ),
        silo.optional(
            "the account's other deals are untouched",
            bool(siblings) and not [i for i in siblings if i in others],
        ),
        silo.optional("no other opportunity changed", not others, ", ".join(others)),
    ]
