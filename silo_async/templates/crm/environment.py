"""Build a fresh CRM world from ``data/*.json`` on every call.

The data files hold facts only. Here they are indexed by id (constant-time lookups, and the state
diff keys records by id), checked for dangling references (a broken seed fails at import, naming
the record, instead of surfacing as a puzzling tool error mid-rollout), and completed with the
values derived from facts: each deal's current ``stageId`` comes from its stage history. Values
that depend on the clock (days in stage, staleness, past-due) are derived on read in ``state.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import silo_async as silo

from .state import RELATED_COLLECTIONS, State

__all__ = ["create_state"]

_DATA = Path(__file__).parent / "data"

# State key -> data file, for collections stored on disk as lists of records with an id.
_COLLECTIONS = {
    "users": "users.json",
    "stages": "stages.json",
    "accounts": "accounts.json",
    "contacts": "contacts.json",
    "leads": "leads.json",
    "opportunities": "opportunities.json",
    "activities": "activities.json",
}

# (collection, field, target collection): every non-null value must name an existing record.
_REFERENCES = (
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
    ("activities", "ownerId", "users"),
)


def _read(name: str) -> Any:
    return json.loads((_DATA / name).read_text(encoding="utf-8"))


def _check_references(world: dict[str, Any]) -> None:
    for collection, field, target in _REFERENCES:
        for record in world[collection].values():
            value = record.get(field)
            if value is not None and value not in world[target]:
                raise ValueError(
                    f"data/{collection}.json: {record['id']}.{field} names {value}, "
                    f"which is not in data/{target}.json."
                )
    for activity in world["activities"].values():
        related = activity["relatedTo"]
        if related["id"] not in world[RELATED_COLLECTIONS[related["type"]]]:
            raise ValueError(
                f"data/activities.json: {activity['id']} relates to missing "
                f"{related['type']} {related['id']}."
            )


def _check_sequences(world: dict[str, Any]) -> None:
    # Sequences are last-used counters: a counter behind the data would mint a duplicate id.
    prefixes = {
        "ACC": "accounts",
        "CON": "contacts",
        "LEAD": "leads",
        "OPP": "opportunities",
        "ACT": "activities",
    }
    for prefix, collection in prefixes.items():
        highest = max((int(key.rsplit("-", 1)[1]) for key in world[collection]), default=0)
        if world["sequences"].get(prefix, 0) < highest:
            raise ValueError(
                f"data/sequences.json: {prefix} is {world['sequences'].get(prefix, 0)} but "
                f"data/{collection}.json already uses {highest}."
            )


def _derive(world: dict[str, Any]) -> None:
    for opp in world["opportunities"].values():
        history = opp["stageHistory"]
        if not history:
            raise ValueError(f"data/opportunities.json: {opp['id']} has an empty stageHistory.")
        opp["stageId"] = history[-1]["stageId"]
        for entry in history:
            if entry["stageId"] not in world["stages"]:
                raise ValueError(
                    f"data/opportunities.json: {opp['id']} history names unknown stage "
                    f"{entry['stageId']}."
                )


def _assemble() -> dict[str, Any]:
    company = _read("company.json")
    world: dict[str, Any] = {
        "clock": company["clock"],
        "company": {k: company[k] for k in ("name", "product", "currency")},
        "policies": company["policies"],
    }
    for key, name in _COLLECTIONS.items():
        world[key] = {record["id"]: record for record in _read(name)}
    world["auditLog"] = _read("auditLog.json")
    world["sequences"] = _read("sequences.json")
    _check_references(world)
    _check_sequences(world)
    _derive(world)
    return world


# Parsed and checked once per process; every world is a deep copy, so rollouts never share records.
_SEED = _assemble()


def create_state() -> State:
    """Return a fresh, independent copy of the seed world."""
    world: State = silo.clone_json(_SEED)
    return world
