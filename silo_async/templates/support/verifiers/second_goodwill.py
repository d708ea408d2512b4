"""VER-008: a second goodwill credit within 12 months is refused, and the customer told why."""

from __future__ import annotations

import silo_async as silo

from ..state import State
from .common import (
    by_staff,
    changed_elsewhere,
    line_numbered,
    new_credits,
    resolved_case,
    told_any,
    verified_case,
)

NUMBER = "085 119 0042"


@silo.verifier(id="VER-008", task_id="TASK-008")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """No credit; the one-per-12-months rule (or the March credit) explained."""
    line = line_numbered(initial, NUMBER)
    credits = [c["id"] for c in new_credits(final, initial)]
    changed = changed_elsewhere(final, initial)
    return [
        silo.check("no credit was given", not credits, ", ".join(credits)),
        silo.check(
            "she was told why (one goodwill credit in 12 months, hers in March)",
            told_any(ctx, "12 months", "twelve months", "march"),
        ),
        silo.check("nothing on the account changed", not changed, ", ".join(changed)),
        verified_case(final, initial, line["customerId"]),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, line["customerId"]),
    ]
