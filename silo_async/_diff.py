"""State diff: what a rollout changed, in Silo's shape, without its blind spots.

``{"scalars": [{field, from?, to?}], "collections": {key: {added, removed, changed, fields?,
fieldsOmitted?}}}``. A top-level value that is a mapping or list on both sides is a
*collection*: its rows are keyed by id (lists of objects with string ``id`` are keyed by that
id, other lists by index) and reported as added/removed/changed ids. Everything else that
differs is a *scalar* change; a missing side is simply absent from the entry (so a removed key
has no ``to``). Unlike Silo, keys removed from the world, values turning into ``null`` and values
changing type are all reported, and rows are compared by value, not by key order.

Beyond Silo, a collection with changed rows says what changed in each: ``fields`` maps a changed
id to its changed fields (see :mod:`._diff_fields`), bounded per record, per collection and over
the whole diff; ``fieldsOmitted`` (only when something was left out) counts the changed
``records`` left without detail and the ``fields`` cut from the records shown. The order of
everything follows the world's own key order, so the diff is byte-deterministic.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from typing import Any

from ._diff_fields import MAX_FIELDS, MAX_RECORDS, MAX_TOTAL, fields
from ._jsonutil import FORMAT, clone_json, compact_json, json_equal, thaw

__all__ = ["pack_diff", "state_diff", "unpack_diff"]

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


class _Budget:
    """Field entries the rest of the diff may still hold."""

    def __init__(self) -> None:
        self.left = MAX_TOTAL


def _field_detail(
    old: Mapping[str, Any], new: Mapping[str, Any], changed: list[str], budget: _Budget
) -> dict[str, Any]:
    detail: dict[str, list[dict[str, Any]]] = {}
    records = omitted = 0
    for key in changed:
        if len(detail) >= MAX_RECORDS or budget.left <= 0:
            records += 1
            continue
        entries = fields(old[key], new[key])
        keep = min(len(entries), MAX_FIELDS, budget.left)
        detail[key] = entries[:keep]
        budget.left -= keep
        omitted += len(entries) - keep
    if records or omitted:
        return {"fields": detail, "fieldsOmitted": {"records": records, "fields": omitted}}
    return {"fields": detail}


def _same(a: Any, b: Any) -> bool:
    """JSON equality of two rows; equal marshal bytes settle it in C (the usual, unchanged row)."""
    try:
        if marshal.dumps(a, FORMAT) == marshal.dumps(b, FORMAT):  # same types, values, order
            return True
    except ValueError:  # not plain data: compared below
        pass
    return json_equal(a, b)


def _collection_change(before: Any, after: Any, budget: _Budget) -> dict[str, Any] | None:
    old, new = _rows(before), _rows(after)
    added = [k for k in new if k not in old]
    removed = [k for k in old if k not in new]
    changed = [k for k, v in new.items() if k in old and not _same(old[k], v)]
    if not (added or removed or changed):
        return None
    change: dict[str, Any] = {"added": added, "removed": removed, "changed": changed}
    if changed:
        change.update(_field_detail(old, new, changed, budget))
    return change


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
    collections: dict[str, dict[str, Any]] = {}
    budget = _Budget()
    if not isinstance(initial, Mapping) or not isinstance(final, Mapping):
        if not json_equal(initial, final):
            scalars.append(_scalar("", initial, final))
        return {"scalars": scalars, "collections": collections}
    keys = list(final) + [k for k in initial if k not in final]
    for key in keys:
        before = initial.get(key, _ABSENT)
        after = final.get(key, _ABSENT)
        if before is not _ABSENT and after is not _ABSENT and _is_collection(before, after):
            change = _collection_change(before, after, budget)
            if change is not None:
                collections[str(key)] = change
        elif before is _ABSENT or after is _ABSENT or not json_equal(before, after):
            scalars.append(_scalar(str(key), before, after))
    return {"scalars": scalars, "collections": collections}


def pack_diff(before: dict[Any, bytes], after: dict[Any, bytes]) -> bytes:
    """The packed collections a state diff compares, as one string of bytes."""
    return marshal.dumps((before, after))


def unpack_diff(packed: bytes) -> str:
    """The state diff (``state-diff.json``'s content, compact) of :func:`pack_diff`'s bytes."""
    before, after = marshal.loads(packed)
    return compact_json(state_diff(thaw(before), thaw(after)))
