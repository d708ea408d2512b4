"""Precise wording for a task file whose required field is wrong, not absent.

``Task.from_dict`` reports every bad field as missing. For a file edited by hand, the project
layer says what is actually there: a value of the wrong type, or the field under a near-miss
spelling (``verifier_id``, ``VerifierId``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["field_problem"]

_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),
    (int, "a number"),
    (float, "a number"),
    (str, "a string"),
    (list, "an array"),
    (dict, "an object"),
)


def _json_type(value: Any) -> str:
    for kind, label in _JSON_TYPES:
        if isinstance(value, kind):
            return label
    return "null" if value is None else type(value).__name__


def _folded(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def field_problem(data: Any, field: str | None, source: str) -> str | None:
    """A better message than "missing" for ``field`` of task ``data``, or None to keep it.

    Args:
        data: the task's JSON object.
        field: the field ``Task.from_dict`` rejected (camelCase, as on disk).
        source: how messages name the task, e.g. ``Task file "tasks/x.json"``.
    """
    if not isinstance(data, Mapping) or not field:
        return None
    if field in data:
        value = data[field]
        if value is None or isinstance(value, str):
            return None  # null and blank strings really are "missing a non-empty" value
        return f'{source} has "{field}" as {_json_type(value)}; it must be a non-empty string.'
    near = [k for k in data if isinstance(k, str) and _folded(k) == _folded(field)]
    if near:
        return f'{source} is missing "{field}" (found "{near[0]}"; spell the key "{field}").'
    return None
