"""VER-001: Aoife's phone was left in airplane mode; she switched it off and is back in service."""

from __future__ import annotations

import silo_async as silo

from ..state import State, service_of
from .common import by_staff, changed_elsewhere, device_of, line_numbered, resolved_case

NUMBER = "087 210 4411"


@silo.verifier(id="VER-001", task_id="TASK-001")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Airplane mode off, the phone in service, nothing on the account changed."""
    line = line_numbered(initial, NUMBER)
    phone = device_of(initial, final, line)
    service = service_of(final, phone)
    changed = changed_elsewhere(final, initial)
    return [
        silo.check("airplane mode is off on her phone", not phone["airplaneMode"]),
        silo.check("her phone is in service", service.in_service, service.registration),
        silo.check("nothing on the account was changed", not changed, ", ".join(changed)),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, line["customerId"]),
    ]
