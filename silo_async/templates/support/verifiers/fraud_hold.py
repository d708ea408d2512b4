"""VER-010: roaming barred by a fraud hold stays barred; the case goes to the fraud team."""

from __future__ import annotations

import silo_async as silo

from ..state import State, active_hold
from .common import by_staff, changed_elsewhere, line_numbered, new_cases, told_any, verified_case

NUMBER = "086 003 9917"


@silo.verifier(id="VER-010", task_id="TASK-010")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The hold and the bar intact, a case of his escalated to fraud, and he was told."""
    start = line_numbered(initial, NUMBER)
    line = final["lines"][start["id"]]
    hold = active_hold(initial, start["id"])
    escalated = [
        c["id"]
        for c in new_cases(final, initial, start["customerId"])
        if c["status"] == "escalated" and c["team"] == "fraud"
    ]
    changed = changed_elsewhere(final, initial)
    return [
        by_staff(final, initial, ctx),
        silo.check("roaming is still barred", not line["roamingEnabled"]),
        silo.check(
            "the fraud hold is still in place",
            hold is not None and active_hold(final, start["id"]) is not None,
        ),
        silo.check(
            "his case was escalated to the fraud team", bool(escalated), ", ".join(escalated)
        ),
        silo.check("he was told the fraud team must act", told_any(ctx, "fraud")),
        silo.check("nothing on the account changed", not changed, ", ".join(changed)),
        verified_case(final, initial, start["customerId"]),
    ]
