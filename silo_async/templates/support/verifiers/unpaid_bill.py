"""VER-005: Grainne pays her overdue bill with the card she chose; her line and phone are back."""

from __future__ import annotations

import silo_async as silo

from ..state import State, bill_balance, overdue_bills, payments_on, service_of
from .common import by_staff, device_of, line_numbered, new_credits, resolved_case

NUMBER = "087 906 1124"
#: The card the customer chooses (she knows it; the expired Visa is also on file).
CARD_LAST4 = "5502"


@silo.verifier(id="VER-005", task_id="TASK-005")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Overdue bills paid by the chosen card, the line active, the phone in service."""
    start = line_numbered(initial, NUMBER)
    line = final["lines"][start["id"]]
    overdue = overdue_bills(initial, start["customerId"])
    unpaid = [b["id"] for b in overdue if bill_balance(final, final["bills"][b["id"]]) > 0]
    settled = [p for b in overdue for p in payments_on(final, b["id"])]
    cards = {final["cards"][p["cardId"]]["last4"] for p in settled}
    phone = device_of(initial, final, start)
    service = service_of(final, phone)
    credits = [c["id"] for c in new_credits(final, initial)]
    taken = sum(p["amount"] for p in final["payments"].values() if p["status"] == "settled")
    before = sum(p["amount"] for p in initial["payments"].values() if p["status"] == "settled")
    owed = sum(bill_balance(initial, b) for b in overdue)
    return [
        silo.check(
            "her overdue bill is paid in full", bool(overdue) and not unpaid, ", ".join(unpaid)
        ),
        silo.check(
            f"it was paid with the card ending {CARD_LAST4}",
            cards == {CARD_LAST4},
            ", ".join(sorted(cards)) or "no payment",
        ),
        silo.check("her line is active again", line["status"] == "active", line["status"]),
        silo.check("her phone is in service", service.in_service, service.cause),
        silo.check("nothing she owes was credited away", not credits, ", ".join(credits)),
        silo.optional(
            "only the overdue amount was taken", round(taken - before, 2) == round(owed, 2)
        ),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, start["customerId"]),
    ]
