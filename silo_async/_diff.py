"""State diff: what a rollout changed, in Silo's shape, without its blind spots.

``{"scalars": [{field, from?, to?}], "collections": {key: {added, removed, changed}}}``.
A top-level value that is a mapping or list on both sides is a *collection*: its rows are keyed
by id (lists of objects with string ``id`` are keyed by that id, other lists by index) and
reported as added/removed/changed ids. Everything else that differs is a *scalar* change; a
missing side is simply absent from the entry (so a removed key has no ``to``). Unlike Silo, keys
removed from the world, values turning into ``null`` and values changing type are all reported,
and rows are compared by value, not by key order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._jsonutil import clone_json, json_equal

__all__ = ["state_diff"]

_ABSENT = object()


def _rows(value: Any) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    rows: dict[str, Any] = {}
    for index, item in enumerate(value):
        row_id = item.get("id") if isinstance(item, Mapping) else None
        rows[row_id if isinstance(row_id, str) else str(index)] = item
    return rows


def _is_collection(before: Any, after: Any) -> bool:
    if isinstance(after, Mapping):
        return isinstance(before, Mapping | list)
    return isinstance(after, list) and isinstance(before, list | Mapping)


def _collection_change(before: Any, after: Any) -> dict[str, list[str]] | None:
    old, new = _rows(before), _rows(after)
    added = [k for k in new if k not in old]
    removed = [k for k in old if k not in new]
    changed = [k for k, v in new.items() if k in old and not json_equal(old[k], v)]
    if added or removed or changed:
        return {"added": added, "removed": removed, "changed": changed}
    return None


def _scalar(field: str, before: Any, after: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"field": field}
    if before is not _ABSENT:
        entry["from"] = clone_json(before)
    if after is not _ABSENT:
        entry["to"] = clone_json(after)
    return entry


def state_diff(initial: Any, final: Any) -> dict[str, Any]:
    """Describe how ``final`` differs from ``initial`` (both JSON-like worlds)."""
    scalars: list[dict[str, Any]] = []
    collections: dict[str, dict[str, list[str]]] = {}
    if not isinstance(initial, Mapping) or not isinstance(final, Mapping):
        if not json_equal(initial, final):
            scalars.append(_scalar("", initial, final))
        return {"scalars": scalars, "collections": collections}
    keys = list(final) + [k for k in initial if k not in final]
    for key in keys:
        before = initial.get(key, _ABSENT)
        after = final.get(key, _ABSENT)
        if before is not _ABSENT and after is not _ABSENT and _is_collection(before, after):
            change = _collection_change(before, after)
            if change is not None:
                collections[str(key)] = change
        elif before is _ABSENT or after is _ABSENT or not json_equal(before, after):
            scalars.append(_scalar(str(key), before, after))
    return {"scalars": scalars, "collections": collections}
