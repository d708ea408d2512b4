"""Build a fresh project-tracker world from ``data/*.json`` on every call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import silo_async as silo

from .state import State

__all__ = ["create_state"]

_DATA = Path(__file__).parent / "data"

# File name -> state key, for the collections stored on disk as lists of records with an id.
_COLLECTIONS = {
    "teams": "teams.json",
    "members": "members.json",
    "projects": "projects.json",
    "sprints": "sprints.json",
    "workflowStates": "workflowStates.json",
    "workItems": "workItems.json",
    "dependencies": "dependencies.json",
    "comments": "comments.json",
    "timeLogs": "timeLogs.json",
}


def _read(name: str) -> Any:
    return json.loads((_DATA / name).read_text(encoding="utf-8"))


def _assemble() -> dict[str, Any]:
    world: dict[str, Any] = {"clock": _read("clock.json")}
    for key, name in _COLLECTIONS.items():
        # Maps of id -> record: constant-time lookups, and the state diff keys records by id.
        world[key] = {record["id"]: record for record in _read(name)}
    world["auditLog"] = _read("auditLog.json")
    world["sequences"] = _read("sequences.json")
    return world


# Parsed once per process; every world is a deep copy, so rollouts never share records.
_SEED = _assemble()


def create_state() -> State:
    """Return a fresh, independent copy of the seed world."""
    world: State = silo.clone_json(_SEED)
    return world
