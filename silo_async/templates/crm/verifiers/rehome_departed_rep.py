"""VER-003: everything live the departed rep owned moved to the named colleague; history stayed."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async.world import every

from ..state import OPEN_LEAD_STATUSES, State, is_activity_open, user_named

DEPARTED = "Jasper Lindqvist"
SUCCESSOR = "Ottilie Brandt"


def _owned(state: State, collection: str, owner_id: str, live: Any) -> list[str]:
    records: dict[str, Any] = state[collection]  # type: ignore[literal-required]
    return sorted(k for k, r in records.items() if r["ownerId"] == owner_id and live(r))


def _moved(final: State, collection: str, ids: list[str], owner_id: str) -> list[str]:
    records: dict[str, Any] = final[collection]  # type: ignore[literal-required]
    return [i for i in ids if records[i]["ownerId"] == owner_id]


@silo.verifier(id="VER-003", task_id="TASK-003")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Accounts, open deals, open leads and open activities moved; closed work kept its owner."""
    gone = user_named(initial, DEPARTED)["id"]
    heir = user_named(initial, SUCCESSOR)["id"]
    targets = {
        "accounts": _owned(initial, "accounts", gone, lambda r: True),
        "opportunities": _owned(initial, "opportunities", gone, lambda r: r["status"] == "open"),
        "leads": _owned(initial, "leads", gone, lambda r: r["status"] in OPEN_LEAD_STATUSES),
        "activities": _owned(initial, "activities", gone, is_activity_open),
    }
    closed_deals = _owned(initial, "opportunities", gone, lambda r: r["status"] != "open")
    done_acts = _owned(initial, "activities", gone, lambda r: not is_activity_open(r))
    moving = {i for ids in targets.values() for i in ids}
    others_changed = [
        key
        for collection in targets
        for key, record in initial[collection].items()  # type: ignore[literal-required]
        if key not in moving and final[collection][key]["ownerId"] != record["ownerId"]  # type: ignore[literal-required]
    ]
    labels = {
        "accounts": "account",
        "opportunities": "open opportunity",
        "leads": "open lead",
        "activities": "open activity",
    }
    checks = [
        every(
            f"every {labels[collection]} of {DEPARTED} moved to {SUCCESSOR}",
            _moved(final, collection, ids, heir),
            ids,
            f"moved to {heir}",
        )
        for collection, ids in targets.items()
    ]
    return [
        *checks,
        silo.check(
            "the moved deals are still open",
            all(final["opportunities"][i]["status"] == "open" for i in targets["opportunities"]),
        ),
        silo.check(
            f"closed deals stay with {DEPARTED} as history",
            bool(closed_deals)
            and all(final["opportunities"][i]["ownerId"] == gone for i in closed_deals),
            ", ".join(closed_deals),
        ),
        silo.optional(
            f"completed activities stay with {DEPARTED}",
            all(final["activities"][i]["ownerId"] == gone for i in done_acts),
        ),
        silo.optional(
            "the moved activities are still open",
            all(is_activity_open(final["activities"][i]) for i in targets["activities"]),
        ),
        silo.optional(
            "no one else's work changed owner", not others_changed, ", ".join(others_changed)
        ),
    ]
