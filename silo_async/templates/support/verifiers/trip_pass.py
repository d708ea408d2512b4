"""VER-004: Patrick's US trip (12-21 October) is covered by the cheapest roaming passes."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w
from silo_async.world.clock import add_days, days_between

from ..state import State, cheapest_cover, days_covered, total, zone_of
from .common import by_staff, changed_elsewhere, line_numbered, resolved_case

NUMBER = "085 772 3316"
#: What only the customer knows: where he goes and when.
COUNTRY, LEAVES, RETURNS = "US", "2026-10-12", "2026-10-21"


@silo.verifier(id="VER-004", task_id="TASK-004")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Every day of the trip covered by passes for the right zone, at the least cost."""
    line = line_numbered(initial, NUMBER)
    zone = zone_of(initial, COUNTRY)
    bought = [
        i for i in w.grade.new_records(final, initial, "lineAddons") if i["lineId"] == line["id"]
    ]
    passes = [i for i in bought if final["addons"][i["addonId"]]["kind"] == "roaming_pass"]
    for_zone = [i for i in passes if final["addons"][i["addonId"]]["zone"] == zone]
    trip_days = days_between(LEAVES, RETURNS) + 1
    trip = {add_days(LEAVES, n) for n in range(trip_days)}
    missing = sorted(trip - days_covered(final, for_zone))
    paid = total(i["price"] for i in bought)
    least = cheapest_cover(initial, zone, trip_days)
    changed = changed_elsewhere(
        final,
        initial,
        [("lineAddons", i["id"]) for i in bought]
        + [("unbilledCharges", c) for c in w.grade.new_ids(final, initial, "unbilledCharges")],
    )
    return [
        silo.check(
            "roaming passes for the destination's zone were added",
            bool(for_zone) and len(for_zone) == len(passes),
            ", ".join(final["addons"][i["addonId"]]["name"] for i in passes) or "none",
        ),
        silo.check(
            "every day of the trip is covered", bool(for_zone) and not missing, ", ".join(missing)
        ),
        silo.check(
            "the passes cost the least that covers the trip",
            bool(bought) and paid == least,
            f"{paid:.2f} paid, {least:.2f} possible",
        ),
        silo.check("nothing else on the account changed", not changed, ", ".join(changed)),
        silo.optional(
            "the pass starts on the day he leaves",
            bool(for_zone) and min(i["startDate"] for i in for_zone) == LEAVES,
        ),
        by_staff(final, initial, ctx),
        resolved_case(final, initial, line["customerId"]),
    ]
