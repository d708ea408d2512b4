"""Build a fresh support world from ``data/*.json`` on every call.

The data files hold facts only. :class:`~silo_async.world.Seed` indexes each collection by id,
checks every reference below and the id counters, and parses the files once per process;
``_check`` holds the seed to the rules no reference list states (a line's SIM serves that line,
a phone's owner has an account, a plan history is in date order). Everything that follows from
the facts (in service or not, balances, the plan in force) is derived on read in ``state.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from silo_async import world as w

from .state import State

__all__ = ["SEED", "create_state"]

# (collection, field, target collection): every non-null value must name an existing record.
_REFERENCES: list[w.records.Reference] = [
    ("lines", "customerId", "customers"),
    ("lines", "simId", "sims"),
    ("lines", "planHistory.planId", "plans"),
    ("sims", "lineId", "lines"),
    ("devices", "ownerId", "customers"),
    ("devices", "simId", "sims"),
    ("devices", "country", "countries"),
    ("messages", "deviceId", "devices"),
    ("holds", "lineId", "lines"),
    ("bills", "customerId", "customers"),
    ("bills", "charges.lineId", "lines"),
    ("unbilledCharges", "lineId", "lines"),
    ("credits", "billId", "bills"),
    ("credits", "createdBy", "staff"),
    ("credits", "caseId", "cases"),
    ("cards", "customerId", "customers"),
    ("payments", "billId", "bills"),
    ("payments", "cardId", "cards"),
    ("payments", "caseId", "cases"),
    ("lineAddons", "lineId", "lines"),
    ("lineAddons", "addonId", "addons"),
    ("simOrders", "lineId", "lines"),
    ("simOrders", "simId", "sims"),
    ("cases", "customerId", "customers"),
    ("cases", "openedBy", "staff"),
    ("verificationCodes", "caseId", "cases"),
    ("verificationCodes", "lineId", "lines"),
    ("incidents", "subscriberLineIds", "lines"),
]


def _check(world: dict[str, Any]) -> None:
    for line in world["lines"].values():
        sim = world["sims"][line["simId"]]
        if sim["lineId"] != line["id"] or sim["status"] != "active":
            raise w.records.SeedError(
                f"data/lines.json: {line['id']} uses {sim['id']}, which is not its active SIM."
            )
        starts = [p["start"] for p in line["planHistory"]]
        if not starts or starts != sorted(starts):
            raise w.records.SeedError(
                f"data/lines.json: {line['id']} needs a plan history in date order."
            )
    for bill in world["bills"].values():
        ids = [c["id"] for c in bill["charges"]]
        if len(set(ids)) != len(ids):
            raise w.records.SeedError(f"data/bills.json: {bill['id']} repeats a charge id.")


# Reference data first, then accounts and what hangs off them, then the customer's own side,
# then the contact history and the log: state-diff.json reads best in this order.
_ORDER = (
    "clock", "company", "policies", "policy", "staff", "plans", "addons", "countries",
    "customers", "lines", "sims", "holds", "bills", "unbilledCharges", "credits", "cards",
    "payments", "lineAddons", "simOrders", "incidents", "devices", "messages", "cases",
    "verificationCodes", "auditLog", "sequences",
)  # fmt: skip

SEED = w.Seed(Path(__file__).parent / "data", references=_REFERENCES, build=_check, order=_ORDER)


def create_state() -> State:
    """Return a fresh, independent copy of the seed world."""
    world: State = SEED.clone()
    return world
