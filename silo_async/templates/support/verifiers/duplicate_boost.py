"""VER-006: one of the two Data Boost charges of 18 September is credited as a duplicate."""

from __future__ import annotations

import silo_async as silo

from ..state import State, bills_of
from .common import by_staff, changed_elsewhere, line_numbered, new_credits, resolved_case

NUMBER = "089 227 4415"
PERIOD, DAY, BOOST = "2026-09", "2026-09-18", "Data Boost 5GB"


@silo.verifier(id="VER-006", task_id="TASK-006")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Exactly one credit, of one boost, against a charge of the day it was charged twice."""
    line = line_numbered(initial, NUMBER)
    bill = next(b for b in bills_of(initial, line["customerId"]) if b["period"] == PERIOD)
    twice = [c for c in bill["charges"] if c["description"] == BOOST and c["date"] == DAY]
    credits = new_credits(final, initial)
    mine = [c for c in credits if c["billId"] == bill["id"]]
    credit = mine[0] if len(mine) == 1 else None
    changed = changed_elsewhere(final, initial, [("credits", c["id"]) for c in credits])
    return [
        silo.check(
            "exactly one credit on her September bill",
            len(mine) == 1 == len(credits),
            str(len(credits)),
        ),
        silo.check(
            "it is one boost's price",
            credit is not None and credit["amount"] == twice[0]["amount"],
            "" if credit is None else f"{credit['amount']:.2f}",
        ),
        silo.check(
            "it is recorded as a duplicate charge",
            credit is not None and credit["reason"] == "duplicate_charge",
            "" if credit is None else credit["reason"],
        ),
        silo.check(
            "it corrects a boost charged twice on 18 September",
            credit is not None and credit["chargeId"] in {c["id"] for c in twice},
            "" if credit is None else str(credit["chargeId"]),
        ),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, line["customerId"]),
    ]
