"""Build a fresh CRM world from ``data/*.json`` on every call.

The data files hold facts only. :class:`~silo_async.world.Seed` indexes each collection by id,
checks every reference below (a broken seed fails at import, naming the record, instead of
surfacing as a puzzling tool error mid-rollout) and the id counters, and parses the files once
per process; ``_derive`` completes the values derived from facts: each deal's current
``stageId`` comes from its stage history. Values that depend on the clock (days in stage,
staleness, past-due) are derived on read in ``state.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from silo_async import world as w

from .state import RELATED_COLLECTIONS, State

__all__ = ["SEED", "create_state"]

# (collection, field, target collection): every non-null value must name an existing record.
_REFERENCES: list[w.records.Reference] = [
    ("users", "managerId", "users"),
    ("accounts", "ownerId", "users"),
    ("contacts", "accountId", "accounts"),
    ("contacts", "mergedIntoId", "contacts"),
    ("leads", "ownerId", "users"),
    ("leads", "convertedAccountId", "accounts"),
    ("leads", "convertedContactId", "contacts"),
    ("leads", "convertedOpportunityId", "opportunities"),
    ("opportunities", "accountId", "accounts"),
    ("opportunities", "primaryContactId", "contacts"),
    ("opportunities", "ownerId", "users"),
    ("opportunities", "sourceLeadId", "leads"),
    ("opportunities", "stageHistory.stageId", "stages"),
    ("activities", "ownerId", "users"),
]


def _derive(world: dict[str, Any]) -> None:
    for activity in world["activities"].values():
        related = activity["relatedTo"]
        if related["id"] not in world[RELATED_COLLECTIONS[related["type"]]]:
            raise w.records.SeedError(
                f"data/activities.json: {activity['id']} relates to missing "
                f"{related['type']} {related['id']}."
            )
    for opp in world["opportunities"].values():
        if not opp["stageHistory"]:
            raise w.records.SeedError(
                f"data/opportunities.json: {opp['id']} has an empty stageHistory."
            )
        opp["stageId"] = opp["stageHistory"][-1]["stageId"]


# Master data first, then the records people work on, then the log: state-diff.json reads best.
_ORDER = (
    "clock", "company", "policies", "users", "stages", "accounts", "contacts", "leads",
    "opportunities", "activities", "auditLog", "sequences",
)  # fmt: skip

SEED = w.Seed(Path(__file__).parent / "data", references=_REFERENCES, build=_derive, order=_ORDER)


def create_state() -> State:
    """Return a fresh, independent copy of the seed world."""
    world: State = SEED.clone()
    return world
