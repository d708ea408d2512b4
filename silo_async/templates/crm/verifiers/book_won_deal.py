"""VER-004: the Obsidian deal is won at the signed amount, with a note on the deal."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.clock import today
from silo_async.world.grade import modified_ids, new_records, written_by

from ..state import State, opportunity_named, outcome_stage

DEAL = "Obsidian chain-of-custody platform"
SIGNED = 121500

#: Who the task says acts: every change must be theirs.
ACTOR = "USR-005"


@silo.verifier(id="VER-004", task_id="TASK-004")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Won, at the contracted amount, closed today, with a note logged on the deal."""
    start = opportunity_named(initial, DEAL)
    opp = final["opportunities"][start["id"]]
    notes = [
        a
        for a in new_records(final, initial, "activities")
        if a["relatedTo"] == {"type": "opportunity", "id": start["id"]} and a["type"] == "note"
    ]
    others = [i for i in modified_ids(final, initial, "opportunities") if i != start["id"]]
    return [
        written_by(final, initial, ACTOR),
        silo.check("the deal is won", opp["status"] == "won", opp["status"]),
        silo.check(f"amount is the signed {SIGNED}", opp["amount"] == SIGNED, str(opp["amount"])),
        silo.check(
            "the deal sits in the won stage", opp["stageId"] == outcome_stage(final, "won")["id"]
        ),
        silo.check(
            "closed today",
            opp["closedDate"] == today(final),
            f"{opp['closedDate']} vs {today(final)}",
        ),
        silo.check(
            "a completed note was added to the deal",
            any(a["completedDate"] is not None for a in notes),
            f"{len(notes)} new note(s)",
        ),
        silo.optional(
            "the note is dated today", any(a["completedDate"] == today(final) for a in notes)
        ),
        silo.optional("no other opportunity changed", not others, ", ".join(others)),
    ]
