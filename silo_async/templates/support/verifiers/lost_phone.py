"""VER-016: Ronan's lost phone: line barred, a replacement SIM posted to his address on file."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..state import State, suspension_reason
from .common import by_staff, changed_elsewhere, line_numbered, resolved_case

NUMBER = "087 781 0345"


@silo.verifier(id="VER-016", task_id="TASK-016")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Barred as lost, a SIM ordered to the account address, the line kept on its SIM."""
    start = line_numbered(initial, NUMBER)
    line = final["lines"][start["id"]]
    orders = [
        o for o in w.grade.new_records(final, initial, "simOrders") if o["lineId"] == line["id"]
    ]
    home = initial["customers"][start["customerId"]]["address"]
    reason = suspension_reason(line)
    allowed = [("lines", line["id"])] + [("simOrders", o["id"]) for o in orders]
    changed = changed_elsewhere(final, initial, allowed)
    return [
        silo.check(
            "the line is barred as lost or stolen",
            line["status"] == "suspended" and reason == "lost_or_stolen",
            line["status"],
        ),
        silo.check(
            "a replacement SIM is on its way to the account address",
            len(orders) == 1 and orders[0]["address"] == home,
            str(len(orders)),
        ),
        silo.check(
            "the line keeps its number and SIM",
            line["simId"] == start["simId"] and line["msisdn"] == start["msisdn"],
        ),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, start["customerId"]),
    ]
