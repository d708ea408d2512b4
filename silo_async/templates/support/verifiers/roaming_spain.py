"""VER-003: Sinead in Spain: the line's roaming bar lifted, data roaming on, no pass sold."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..state import State, service_of
from .common import by_staff, changed_elsewhere, device_of, line_numbered, resolved_case

NUMBER = "083 145 2290"


@silo.verifier(id="VER-003", task_id="TASK-003")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Roaming allowed, data roaming on, data working abroad, and nothing bought for zone 1."""
    start = line_numbered(initial, NUMBER)
    line = final["lines"][start["id"]]
    phone = device_of(initial, final, start)
    service = service_of(final, phone)
    bought = [
        i["id"]
        for i in w.grade.new_records(final, initial, "lineAddons")
        if i["lineId"] == line["id"]
    ]
    changed = changed_elsewhere(final, initial, [("lines", line["id"])])
    return [
        silo.check("roaming is allowed on her line", line["roamingEnabled"]),
        silo.check("data roaming is on on her phone", phone["dataRoaming"]),
        silo.check(
            "mobile data works in Spain",
            service.data_works and service.registration == "registered_roaming",
            service.cause,
        ),
        silo.check("no roaming pass was sold for a zone 1 country", not bought, ", ".join(bought)),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, line["customerId"]),
    ]
