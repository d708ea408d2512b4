"""VER-002: Conor's phone asked for an unknown APN; he typed the network's and data works."""

from __future__ import annotations

import silo_async as silo

from ..state import State, service_of
from .common import by_staff, changed_elsewhere, device_of, line_numbered, resolved_case

NUMBER = "086 118 7730"


@silo.verifier(id="VER-002", task_id="TASK-002")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The network's APN on the phone, data working, nothing on the account changed."""
    line = line_numbered(initial, NUMBER)
    phone = device_of(initial, final, line)
    service = service_of(final, phone)
    changed = changed_elsewhere(final, initial)
    return [
        silo.check(
            "the phone uses the network's APN",
            phone["apn"] == final["policies"]["apn"],
            phone["apn"],
        ),
        silo.check("mobile data works", service.data_works, service.cause),
        silo.check("nothing on the account was changed", not changed, ", ".join(changed)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, line["customerId"]),
    ]
