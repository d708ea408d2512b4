"""Small, fast helpers for JSON-like data: cloning, strict equality, text forms."""

from __future__ import annotations

import copy
import json
import marshal
from collections.abc import Callable
from typing import Any

__all__ = [
    "Snapshot",
    "clone_json",
    "compact_json",
    "json_equal",
    "output_text",
    "pretty_json",
    "to_jsonable",
]

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
            w = b.get(k, _MISSING)
            # Atoms of the same type are compared inline: most fields of a world row are atoms,
            # and a diff compares every row of every collection.
            if v is w or (type(v) is type(w) and type(v) in _ATOMS and v == w):
                continue
            if not _container_equal(v, w):
                return False
        return True
    if ta is list or ta is tuple:
        return _container_equal(a, b)
    return ta is tb and bool(a == b)


def _container_equal(a: Any, b: Any) -> bool:
    ta, tb = type(a), type(b)
    if ta is list or ta is tuple:
        if (tb is not list and tb is not tuple) or len(a) != len(b):
            return False
        # A loop, not all(<genexpr>): most lists in a world are short or empty.
        for x, y in zip(a, b, strict=True):  # noqa: SIM110
            if x is not y and not json_equal(x, y):
                return False
        return True
    return ta is dict and json_equal(a, b)


def to_jsonable(value: Any) -> Any:
    """Make ``value`` JSON-serialisable, turning unknown objects into their ``str``."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))
    return value


def _compact_encoder() -> Callable[[Any], str]:
    """One compact encoder for the whole process.

    ``JSONEncoder.encode`` builds a new C encoder on every call, which is 40% of the cost of
    encoding a trace event; CPython's C encoder is stateless without a circular-reference
    table, so it is built once and shared (also by threads). Other interpreters use the
    pure-Python path.
    """
    slow = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str).encode
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython always has the C encoder
        return slow
    fast = make(None, str, json.encoder.encode_basestring, None, ":", ",", False, False, True)

    def encode(value: Any) -> str:
        try:
            return "".join(fast(value, 0))
        except RecursionError:
            raise ValueError("Circular reference detected (or data nested too deeply).") from None

    return encode


_compact = _compact_encoder()


def compact_json(value: Any) -> str:
    """Compact JSON with no spaces (Silo's output rule); unknown objects become strings.

    Raises:
        ValueError: ``value`` contains a circular reference.
    """
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


class Snapshot:
    """A frozen copy of a world, taken before the agent acts; :meth:`thaw` gives it back.

    The copy is kept as ``marshal`` bytes when the world is made of plain built-in types (the
    usual case): bytes instead of thousands of dicts and lists mean a rollout that waits on a
    model costs the garbage collector nothing for its snapshot, and packing is faster than a
    deep copy. A dict world is packed one top-level key at a time, so :meth:`unchanged` can tell
    which collections the rollout did not touch without comparing them row by row. Other worlds
    (custom classes, subclasses of built-ins) are deep-copied with :func:`clone_json`.
    """

    __slots__ = ("_copy", "_packed")

    def __init__(self, value: Any) -> None:
        self._packed: dict[Any, bytes] | bytes | None
        self._copy: Any = None
        try:
            if type(value) is dict:
                self._packed = {key: marshal.dumps(item) for key, item in value.items()}
            else:
                self._packed = marshal.dumps(value)
        except ValueError:  # not made of exact built-in types (or nested too deeply)
            self._packed = None
            self._copy = clone_json(value)

    def thaw(self) -> Any:
        """A fresh copy of the world as it was when the snapshot was taken."""
        packed = self._packed
        if isinstance(packed, dict):
            return {key: marshal.loads(item) for key, item in packed.items()}
        if packed is not None:
            return marshal.loads(packed)
        return clone_json(self._copy)

    def unchanged(self, value: Any) -> set[Any]:
        """Top-level keys of a dict world whose value is still exactly what was packed.

        Equal bytes mean equal types, values and order; anything else (including bytes that
        differ only in marshal's bookkeeping) is simply not listed, never wrongly listed.
        """
        packed = self._packed
        if not isinstance(packed, dict) or type(value) is not dict:
            return set()
        same: set[Any] = set()
        for key, before in packed.items():
            if key in value:
                try:
                    if marshal.dumps(value[key]) == before:
                        same.add(key)
                except ValueError:
                    pass  # no longer plain data: certainly changed
        return same
