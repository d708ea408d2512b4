"""Small, fast helpers for JSON-like data: cloning, strict equality, text forms."""

from __future__ import annotations

import copy
import json
from typing import Any

__all__ = ["clone_json", "compact_json", "json_equal", "output_text", "pretty_json", "to_jsonable"]

_ATOMS = (str, int, float, bool, type(None))
_MISSING: Any = object()


def clone_json(value: Any) -> Any:
    """Return a deep copy of JSON-like data, much faster than :func:`copy.deepcopy`.

    Dicts, lists and tuples are rebuilt (tuples become lists, as JSON would); strings, numbers,
    booleans and ``None`` are immutable and shared. Anything else falls back to ``deepcopy`` so
    no live handle ever escapes.
    """
    t = type(value)
    if t is dict:
        return {k: v if type(v) in _ATOMS else clone_json(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [v if type(v) in _ATOMS else clone_json(v) for v in value]
    if t in _ATOMS:
        return value
    return copy.deepcopy(value)


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON text sees it: types must match (``True != 1``, ``1 != 1.0``).

    Dict key order does not matter; lists and tuples compare alike.
    """
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is dict:
        if tb is not dict or len(a) != len(b):
            return False
        for k, v in a.items():
            # Clones share immutable atoms, so unchanged fields are usually the same object.
            w = b.get(k, _MISSING)
            if v is not w and not json_equal(v, w):
                return False
        return True
    if ta is list or ta is tuple:
        if (tb is not list and tb is not tuple) or len(a) != len(b):
            return False
        return all(x is y or json_equal(x, y) for x, y in zip(a, b, strict=True))
    return ta is tb and bool(a == b)


def to_jsonable(value: Any) -> Any:
    """Make ``value`` JSON-serialisable, turning unknown objects into their ``str``."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))
    return value


_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str).encode


def compact_json(value: Any) -> str:
    """Compact JSON with no spaces (Silo's output rule); unknown objects become strings."""
    return _compact(value)


def pretty_json(value: Any) -> str:
    """Pretty JSON as written to disk: 2-space indent, UTF-8, trailing newline."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n"


def output_text(output: Any) -> str:
    """The text form of an agent's output: ``str`` as-is, ``None`` -> ``""``, else compact JSON."""
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    return compact_json(output)
