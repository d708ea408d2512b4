"""VER-012: the September plan charge at the old plan's fee is corrected by the difference."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.amounts import to_money

from ..state import State, bills_of
from .common import by_staff, changed_elsewhere, line_numbered, new_credits, resolved_case

NUMBER = "085 144 7790"
PERIOD = "2026-09"


def _fee_in_force(state: State, line_id: str, day: str) -> float:
    history = state["lines"][line_id]["planHistory"]
    plan_id = [p for p in history if p["start"] <= day][-1]["planId"]
    return state["plans"][plan_id]["monthlyFee"]


@silo.verifier(id="VER-012", task_id="TASK-012")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """One billing-error credit of exactly the overcharge, against the plan charge."""
    line = line_numbered(initial, NUMBER)
    bill = next(b for b in bills_of(initial, line["customerId"]) if b["period"] == PERIOD)
    charge = next(c for c in bill["charges"] if c["kind"] == "plan" and c["lineId"] == line["id"])
    over = to_money(charge["amount"] - _fee_in_force(initial, line["id"], charge["date"]))
    credits = new_credits(final, initial)
    credit = credits[0] if len(credits) == 1 else None
    changed = changed_elsewhere(final, initial, [("credits", c["id"]) for c in credits])
    return [
        silo.check(
            "exactly one credit, on his September bill",
            credit is not None and credit["billId"] == bill["id"],
            str(len(credits)),
        ),
        silo.check(
            "of exactly the overcharge",
            credit is not None and credit["amount"] == over > 0,
            f"{over:.2f} expected" + ("" if credit is None else f", {credit['amount']:.2f} given"),
        ),
        silo.check(
            "as a billing error against the plan charge",
            credit is not None
            and credit["reason"] == "billing_error"
            and credit["chargeId"] == charge["id"],
        ),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, line["customerId"]),
    ]
