"""VER-014: the replacement SIM in Liam's phone takes his number; the old card is retired."""

from __future__ import annotations

import silo_async as silo

from ..state import State, service_of
from .common import by_staff, changed_elsewhere, device_of, line_numbered, resolved_case

NUMBER = "086 221 9034"


@silo.verifier(id="VER-014", task_id="TASK-014")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The line on the card in his phone, that card active, the old one deactivated, in service."""
    start = line_numbered(initial, NUMBER)
    line = final["lines"][start["id"]]
    phone = device_of(initial, final, start)
    in_phone = phone["simId"] or ""
    service = service_of(final, phone)
    allowed = [("lines", line["id"]), ("sims", start["simId"]), ("sims", in_phone)]
    changed = changed_elsewhere(final, initial, allowed)
    return [
        silo.check("the line is on the SIM card in his phone", line["simId"] == in_phone),
        silo.check("that card is active", final["sims"][in_phone]["status"] == "active"),
        silo.check(
            "the old card is deactivated",
            final["sims"][start["simId"]]["status"] == "deactivated",
        ),
        silo.check("his phone is in service", service.in_service, service.cause),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, start["customerId"]),
    ]
