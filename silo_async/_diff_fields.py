"""Field-level detail of a changed record: which fields changed, from what, to what.

A record is walked as JSON: nested objects give dotted paths (``address.city``; a key that is
not a plain name is quoted, ``tags["a.b"]``), a value that is not an object on both sides is one
entry ``{path, from?, to?}`` (a missing side is absent, as in ``scalars``), and a list on both
sides is summarised rather than listed: its lengths and the items added, removed or changed,
named by ``id`` (objects with a string id), by value (plain values) or by position.

Everything is bounded, so a rollout that rewrites the whole world still gives a small diff:
long values are cut (``cut`` says how many characters were left out), lists name at most
:data:`MAX_LIST_ITEMS` items each (``itemsOmitted`` counts the rest), and the caller keeps at
most :data:`MAX_FIELDS` entries per record (``Budget`` counts what it left out).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ._jsonutil import clone_json, compact_json, json_equal

__all__ = ["MAX_FIELDS", "MAX_LIST_ITEMS", "MAX_RECORDS", "MAX_TOTAL", "MAX_VALUE", "fields"]

#: Field entries kept per changed record.
MAX_FIELDS = 20
#: Changed records given field detail per collection.
MAX_RECORDS = 50
#: Field entries kept in the whole diff.
MAX_TOTAL = 200
#: Characters kept of a value (a string's text, or another value's compact JSON).
MAX_VALUE = 120
#: Items named per list in each of ``added``, ``removed`` and ``changed``.
MAX_LIST_ITEMS = 10

_ABSENT: Any = object()
_NAME = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")
_ATOMS = (str, int, float, bool, type(None))


def _join(path: str, key: Any) -> str:
    key = str(key)
    if _NAME.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{compact_json(key)}]"


def _bounded(value: Any) -> tuple[Any, int]:
    """``value`` as kept in the diff, and how many characters were cut from it (0: none)."""
    if isinstance(value, str):
        if len(value) <= MAX_VALUE:
            return value, 0
        return value[:MAX_VALUE] + "…", len(value) - MAX_VALUE
    if type(value) in _ATOMS:
        return value, 0
    text = compact_json(value)
    if len(text) <= MAX_VALUE:
        return clone_json(value), 0
    return text[:MAX_VALUE] + "…", len(text) - MAX_VALUE


def _entry(path: str, before: Any, after: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path}
    cut: dict[str, int] = {}
    for side, value in (("from", before), ("to", after)):
        if value is not _ABSENT:
            entry[side], cut_chars = _bounded(value)
            if cut_chars:
                cut[side] = cut_chars
    if cut:
        entry["cut"] = cut
    return entry


def _item_key(item: Any) -> tuple[str, Any] | None:
    """How an item of a list is named: its string id, or its value when it is plain."""
    if isinstance(item, Mapping) and isinstance(item.get("id"), str):
        return "id", item["id"]
    if type(item) in _ATOMS:
        return type(item).__name__, item
    return None


def _list_changes(before: list[Any], after: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    named_b, named_a = [_item_key(x) for x in before], [_item_key(x) for x in after]
    keys_b = [k for k in named_b if k is not None]
    keys_a = [k for k in named_a if k is not None]
    if len(keys_b) < len(before) or len(keys_a) < len(after):  # positional: item by item
        common = min(len(before), len(after))
        added = [f"[{i}]" for i in range(common, len(after))]
        removed = [f"[{i}]" for i in range(common, len(before))]
        changed = [f"[{i}]" for i in range(common) if not json_equal(before[i], after[i])]
        return added, removed, changed
    if all(k[0] == "id" for k in (*keys_b, *keys_a)):
        old = {k[1]: x for k, x in zip(keys_b, before, strict=True)}
        new = {k[1]: x for k, x in zip(keys_a, after, strict=True)}
        return (
            [i for i in new if i not in old],
            [i for i in old if i not in new],
            [i for i in new if i in old and not json_equal(old[i], new[i])],
        )
    return _multiset(keys_b, keys_a)


def _multiset(keys_b: list[Any], keys_a: list[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """Plain values (or a mix): what appears more often after, and more often before."""
    return _extra(keys_a, Counter(keys_b)), _extra(keys_b, Counter(keys_a)), []


def _extra(keys: list[Any], other: Counter[Any]) -> list[Any]:
    """The items of ``keys`` that ``other`` has no (remaining) match for, in order."""
    out = []
    for key in keys:
        if other[key] > 0:
            other[key] -= 1
        else:
            out.append(key[1])
    return out


def _list_entry(path: str, before: list[Any], after: list[Any]) -> dict[str, Any]:
    added, removed, changed = _list_changes(before, after)
    entry: dict[str, Any] = {"path": path, "fromLength": len(before), "toLength": len(after)}
    omitted = 0
    for name, items in (("added", added), ("removed", removed), ("changed", changed)):
        if items:
            entry[name] = [_bounded(x)[0] for x in items[:MAX_LIST_ITEMS]]
            omitted += max(0, len(items) - MAX_LIST_ITEMS)
    if omitted:
        entry["itemsOmitted"] = omitted
    return entry


def _walk(path: str, before: Any, after: Any, out: list[dict[str, Any]]) -> None:
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in [*after, *(k for k in before if k not in after)]:
            b, a = before.get(key, _ABSENT), after.get(key, _ABSENT)
            if b is _ABSENT or a is _ABSENT or not json_equal(b, a):
                _walk(_join(path, key), b, a, out)
    elif isinstance(before, list | tuple) and isinstance(after, list | tuple):
        out.append(_list_entry(path, list(before), list(after)))
    else:
        out.append(_entry(path, before, after))


def fields(before: Any, after: Any) -> list[dict[str, Any]]:
    """Every changed field of a record, in the record's key order (unbounded in count).

    The empty path stands for the record itself (a record that is not an object, or that
    changed type).
    """
    out: list[dict[str, Any]] = []
    _walk("", before, after, out)
    return out
