"""VER-013: the line opened in error is cancelled free of charge and its charges credited."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.amounts import sum_money

from ..state import State, bills_of, device_with_sim
from .common import by_staff, changed_elsewhere, line_numbered, new_credits, resolved_case

OWN_NUMBER = "087 555 0142"
PERIOD = "2026-09"


@silo.verifier(id="VER-013", task_id="TASK-013")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Her unused line cancelled, hers kept, no fee, its September charges credited."""
    own = line_numbered(initial, OWN_NUMBER)
    unused = next(
        line
        for line in initial["lines"].values()
        if line["customerId"] == own["customerId"]
        and line["id"] != own["id"]
        and device_with_sim(initial, line["simId"]) is None
    )
    bill = next(b for b in bills_of(initial, own["customerId"]) if b["period"] == PERIOD)
    charges = {c["id"] for c in bill["charges"] if c["lineId"] == unused["id"]}
    owed = sum_money(c["amount"] for c in bill["charges"] if c["lineId"] == unused["id"])
    credits = new_credits(final, initial)
    credited = sum_money(c["amount"] for c in credits if c["billId"] == bill["id"])
    fees = [c["id"] for c in final["unbilledCharges"].values() if c["lineId"] == unused["id"]]
    gone = final["lines"][unused["id"]]
    allowed = [("lines", unused["id"]), ("sims", unused["simId"]), ("bills", bill["id"])]
    changed = changed_elsewhere(final, initial, allowed + [("credits", c["id"]) for c in credits])
    return [
        silo.check("the unused line is cancelled", gone["status"] == "cancelled", gone["status"]),
        silo.check("her own line is still active", final["lines"][own["id"]]["status"] == "active"),
        silo.check("no termination fee was charged", not fees, ", ".join(fees)),
        silo.check(
            "the unused line's September charges are credited in full",
            credited == owed and all(c["reason"] == "billing_error" for c in credits),
            f"{credited:.2f} of {owed:.2f}",
        ),
        silo.check(
            "each credit is against one of the unused line's charges",
            bool(credits) and all(c["chargeId"] in charges for c in credits),
            ", ".join(str(c["chargeId"]) for c in credits),
        ),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, own["customerId"]),
    ]
