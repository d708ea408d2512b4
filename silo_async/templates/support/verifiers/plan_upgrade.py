"""VER-011: Aisling, verified by a texted code, moves to Unlimited Max from the next bill."""

from __future__ import annotations

import silo_async as silo

from ..state import State, current_plan, next_bill_date, scheduled_plan
from .common import by_staff, changed_elsewhere, line_numbered, new_cases, resolved_case

NUMBER = "083 330 2268"
PLAN = "Unlimited Max"


@silo.verifier(id="VER-011", task_id="TASK-011")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The change scheduled for the next bill date, today's plan untouched."""
    start = line_numbered(initial, NUMBER)
    line = final["lines"][start["id"]]
    wanted = next(p for p in initial["plans"].values() if p["name"] == PLAN)
    scheduled = scheduled_plan(final, line)
    by_code = [c["id"] for c in new_cases(final, initial, start["customerId"]) if c["verifiedBy"]]
    changed = changed_elsewhere(final, initial, [("lines", line["id"])])
    return [
        silo.check(
            f"her line moves to {PLAN}",
            scheduled is not None and scheduled["planId"] == wanted["id"],
            "" if scheduled is None else scheduled["planId"],
        ),
        silo.check(
            "from the next bill date",
            scheduled is not None and scheduled["start"] == next_bill_date(initial),
            "" if scheduled is None else scheduled["start"],
        ),
        silo.check(
            "the plan in force today is unchanged",
            current_plan(final, line)["id"] == current_plan(initial, start)["id"],
        ),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        silo.optional("she was verified on the case", bool(by_code), ", ".join(by_code)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, start["customerId"]),
    ]
