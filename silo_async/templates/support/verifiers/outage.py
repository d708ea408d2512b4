"""VER-015: Eimear is in Kinsale, under an outage: her line gets the incident's text update."""

from __future__ import annotations

import silo_async as silo

from ..state import State, outage_at
from .common import by_staff, changed_elsewhere, device_of, line_numbered, resolved_case, told_any

NUMBER = "089 447 0061"
SETTINGS = ("airplaneMode", "mobileData", "dataRoaming", "apn", "simId")


@silo.verifier(id="VER-015", task_id="TASK-015")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Subscribed to the incident where she is (only that one), her phone and account left be."""
    line = line_numbered(initial, NUMBER)
    phone = device_of(initial, final, line)
    before = initial["devices"][phone["id"]]
    incident = outage_at(initial, before["area"])
    assert incident is not None, "the seed puts her under an open incident"
    subscribed = [
        i["id"]
        for i in final["incidents"].values()
        if line["id"] in i["subscriberLineIds"]
        and line["id"] not in initial["incidents"][i["id"]]["subscriberLineIds"]
    ]
    untouched = all(phone[k] == before[k] for k in SETTINGS)  # type: ignore[literal-required]
    changed = changed_elsewhere(final, initial, [("incidents", incident["id"])])
    eta = incident["etaAt"][11:16]
    return [
        silo.check(
            "her line gets the outage's update",
            subscribed == [incident["id"]],
            ", ".join(subscribed),
        ),
        silo.check("her phone's settings were left alone", untouched),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        silo.optional(
            "she was told when service should be back", told_any(ctx, eta, "4pm", "4 pm")
        ),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, line["customerId"]),
    ]
