r"""Small, fast helpers for JSON-like data: cloning, strict equality, text forms.

The rules every artifact and every copy follows (docs/agents.md, "Numbers, strings and nesting"):

* **Strict JSON.** Everything written is RFC 8259 JSON: a float that is NaN or ±Infinity is
  written as ``null`` (what JavaScript's ``JSON.stringify``, and so Silo, writes), and so is an
  integer too long for Python to print (beyond ``sys.get_int_max_str_digits()``).
* **Any string.** Text is written as UTF-8; a lone surrogate (``"\ud83d"``, which
  ``json.loads`` and models can produce) is written as its ``\uXXXX`` escape, which reads back
  as the same string (:func:`utf8`).
* **Bounded nesting.** Copies and tool inputs nest at most :data:`MAX_DEPTH` arrays/objects;
  deeper data is refused with :class:`JSONDepthError` (a ``ValueError``) instead of exhausting
  Python's recursion limit somewhere later.
"""

from __future__ import annotations

import copy
import json
import marshal
import math
from collections.abc import Iterator, Mapping
from typing import Any

from ._jsonfast import FastPathError, compact, pretty

__all__ = [
    "FORMAT",
    "MAX_DEPTH",
    "JSONDepthError",
    "Packed",
    "ThawedOnRead",
    "bounded_text",
    "changes",
    "clone_json",
    "compact_json",
    "compact_reference",
    "deeper_than",
    "json_equal",
    "output_text",
    "pack",
    "parse_json",
    "pretty_json",
    "pretty_reference",
    "text_form",
    "thaw",
    "to_jsonable",
    "utf8",
]

_ATOMS = frozenset({str, int, float, bool, type(None)})
_MISSING: Any = object()

#: The most arrays/objects a copy or a tool input may nest (``{"a": [1]}`` nests 2). Far more
#: than any tool needs, far below Python's recursion limit (about 1,000 frames), which every
#: recursive reader of the data (copies, validators, encoders, decoders) would otherwise hit.
MAX_DEPTH = 64


class JSONDepthError(ValueError):
    """Data nests more than :data:`MAX_DEPTH` arrays/objects (or refers to itself)."""

    def __init__(self, limit: int = MAX_DEPTH) -> None:
        super().__init__(f"Data nested deeper than {limit} levels (or circular).")


def clone_json(value: Any, _depth: int = MAX_DEPTH) -> Any:
    """Return a deep copy of JSON-like data, much faster than :func:`copy.deepcopy`.

    Dicts, lists and tuples are rebuilt (tuples become lists, as JSON would); strings, numbers,
    booleans and ``None`` are immutable and shared. Anything else falls back to ``deepcopy`` so
    no live handle ever escapes.

    Raises:
        JSONDepthError: ``value`` nests more than :data:`MAX_DEPTH` arrays/objects.
    """
    t = type(value)
    if t is dict:
        if not _depth:
            raise JSONDepthError
        # Copied in C, then only the containers replaced: most values of a tool's output are
        # strings and numbers, and a comprehension would rebuild the dict key by key.
        out = value.copy()
        for k, v in value.items():
            if type(v) not in _ATOMS:
                out[k] = clone_json(v, _depth - 1)
        return out
    if t is list or t is tuple:
        if not _depth:
            raise JSONDepthError
        d = _depth - 1
        return [v if type(v) in _ATOMS else clone_json(v, d) for v in value]
    if t in _ATOMS:
        return value
    return copy.deepcopy(value)


def deeper_than(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` nests more than ``limit`` dicts/lists/tuples (a cycle always does).

    Never recurses more than ``limit`` frames, so it is safe on any input.
    """
    t = type(value)
    if t is dict:
        items: Any = value.values()
    elif t is list or t is tuple:
        items = value
    else:
        return False
    if limit <= 0:
        return True
    for v in items:
        tv = type(v)
        if (tv is dict or tv is list or tv is tuple) and deeper_than(v, limit - 1):
            return True
    return False


def utf8(text: str) -> bytes:
    r"""``text`` as UTF-8 bytes, whatever it holds: every artifact writer encodes with this.

    A lone surrogate (the only thing UTF-8 cannot encode) becomes its ``\uXXXX`` escape:
    inside JSON, where such a code point can only sit in a string, that is the escape of the
    very same character, so nothing is lost; in plain text it stays visible.
    """
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def parse_json(text: str | bytes) -> Any:
    """``json.loads(text)``; a document nested too deeply to decode is a :class:`ValueError`.

    Like any other JSON that does not read. Every reader of a file silo_async wrote (run
    files, traces, ``eval.json``, the index) reads through this: such a file was damaged or
    written by hand, and ``RecursionError`` is no way to say so.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("it nests too deeply to be read") from None


def text_form(value: Any) -> str:
    """``str(value)``, or a short description when even that is too deep for Python."""
    try:
        return str(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to be shown>"


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
    """Make ``value`` strict JSON data (what ``result.json`` holds of an agent's output).

    Unknown objects become their ``str``, NaN and ±Infinity ``null``; data nested deeper than
    :data:`MAX_DEPTH` becomes its text form.
    """
    if deeper_than(value):
        return text_form(value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return json.loads(compact_json(value))
    return value


def _finite(value: Any) -> Any:
    """A copy of ``value`` the strict encoders can write: what JSON cannot hold made ``null``.

    Only called after a strict encoding failed, so its cost is paid by odd data alone.
    """
    if isinstance(value, dict):
        return {_key(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            int.__repr__(value)
        except ValueError:  # more digits than Python agrees to print
            return None
    return value


def _key(key: Any) -> Any:
    # Keys the C encoder takes are kept; a non-finite float key is named as JavaScript names
    # it, any other object by its str() (JSON keys are strings).
    if isinstance(key, str | int) or key is None:
        return key
    if isinstance(key, float):
        if math.isfinite(key):
            return key
        return "NaN" if math.isnan(key) else ("Infinity" if key > 0 else "-Infinity")
    return str(key)


def compact_json(value: Any) -> str:
    """Compact, strict JSON with no spaces (Silo's output rule).

    Unknown objects become strings; NaN, ±Infinity and integers too long to print become
    ``null``. Byte for byte :func:`compact_reference`, written by its fast path
    (:mod:`silo_async._jsonfast`) when the data allows.

    Raises:
        ValueError: ``value`` contains a circular reference (or nests too deeply for Python).
    """
    try:
        return compact(value)
    except FastPathError:  # odd data (or no C encoder): the reference decides
        return compact_reference(value)


def compact_reference(value: Any) -> str:
    """Compact JSON by the standard library: ``json.dumps`` with ``(",", ":")`` separators.

    UTF-8 text (``ensure_ascii=False``), unknown objects as their ``str``, and what strict JSON
    cannot hold (NaN, ±Infinity, integers too long to print) as ``null``.

    Raises:
        ValueError: ``value`` contains a circular reference (or nests too deeply for Python).
    """
    return _dumps(value, {"separators": (",", ":"), "ensure_ascii": False, "default": str})


def _dumps(value: Any, options: dict[str, Any]) -> str:
    try:
        try:
            return json.dumps(value, allow_nan=False, **options)
        except (ValueError, TypeError):
            return json.dumps(_finite(value), **options)
    except RecursionError:
        raise ValueError("Circular reference detected (or data nested too deeply).") from None


def pretty_json(value: Any) -> str:
    """Pretty, strict JSON as written to disk: 2-space indent, trailing newline.

    The same rules as :func:`compact_json`; encode the text with :func:`utf8`. Byte for byte
    :func:`pretty_reference`, written by its fast path (:mod:`silo_async._jsonfast`) when the
    data allows.

    Raises:
        ValueError: ``value`` contains a circular reference (or nests too deeply for Python).
    """
    try:
        return pretty(value)
    except FastPathError:  # odd data: the reference decides
        return pretty_reference(value)


def pretty_reference(value: Any) -> str:
    """Pretty JSON by the standard library: ``json.dumps(value, indent=2)`` and a newline.

    The definition :func:`pretty_json` follows: UTF-8 text (``ensure_ascii=False``), unknown
    objects as their ``str``, and what strict JSON cannot hold (NaN, ±Infinity, integers too long
    to print) as ``null``.

    Raises:
        ValueError: ``value`` contains a circular reference (or nests too deeply for Python).
    """
    return _dumps(value, {"indent": 2, "ensure_ascii": False, "default": str}) + "\n"


def output_text(output: Any) -> str:
    """The text form of an agent's output: ``str`` as-is, ``None`` -> ``""``, else compact JSON.

    Raises:
        ValueError: ``output`` is circular or nests deeper than :data:`MAX_DEPTH` levels.
    """
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    return bounded_text(output, compact_json(output))


def bounded_text(value: Any, text: str, limit: int = MAX_DEPTH) -> str:
    """``text`` (the JSON of ``value``), unless ``value`` nests deeper than ``limit`` levels.

    Data nested N levels deep opens at least N brackets (and closes them), so only a text
    longer than ``2 * limit`` with more than ``limit`` opening brackets (counted in C, those
    inside strings included) is walked: the usual value, long or short, never is.

    Raises:
        JSONDepthError: ``value`` nests deeper than ``limit`` levels.
    """
    if (
        len(text) > 2 * limit
        and text.count("[") + text.count("{") > limit
        and deeper_than(value, limit)
    ):
        raise JSONDepthError(limit)
    return text


class _Copied:
    """A world that marshal cannot hold, kept as a deep copy (custom classes, subclasses)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


#: A packed world: one marshal string per top-level key of a dict world (a large collection:
#: one per row, see :data:`ROWS_FROM`), one for any other plain world, or a deep copy. Dicts of
#: bytes (and bytes) are invisible to the garbage collector, so a waiting rollout costs it
#: nothing for its snapshot.
Packed = dict[Any, "bytes | dict[Any, bytes]"] | bytes | _Copied

#: The marshal format of snapshots: version 2 writes no shared-object references, whose presence
#: depends on reference counts, so equal data always gives equal bytes (the comparisons below
#: rely on it: a row merely read must not look changed).
FORMAT = 2

#: A top-level collection (a dict) with at least this many rows is packed row by row: a
#: rollout that changes three reservations among thousands re-reads and diffs three rows, not
#: the whole collection. Smaller ones are packed whole (one marshal call is cheaper).
ROWS_FROM = 256


def _pack_entry(item: Any) -> bytes | dict[Any, bytes]:
    if type(item) is dict and len(item) >= ROWS_FROM:
        return {row: marshal.dumps(value, FORMAT) for row, value in item.items()}
    return marshal.dumps(item, FORMAT)


def _thaw_entry(entry: bytes | dict[Any, bytes]) -> Any:
    if isinstance(entry, dict):
        return {row: marshal.loads(data) for row, data in entry.items()}
    return marshal.loads(entry)


def pack(value: Any) -> Packed:
    """Freeze ``value`` as it is now, before the agent acts; :func:`thaw` gives it back.

    A world of plain built-in types (the usual case) is kept as ``marshal`` bytes: bytes instead
    of thousands of dicts and lists mean a rollout that waits on a model costs the garbage
    collector nothing for its snapshot, and packing is faster than a deep copy. A dict world is
    packed one top-level key at a time (a large collection one row at a time), so
    :func:`changes` can tell which collections (and rows) the rollout did not touch without
    comparing them row by row. Other worlds (custom classes, subclasses of built-ins) are
    deep-copied with :func:`clone_json`.
    """
    try:
        if type(value) is dict:
            return {key: _pack_entry(item) for key, item in value.items()}
        return marshal.dumps(value, FORMAT)
    except ValueError:  # not made of exact built-in types (or nested too deeply)
        return _Copied(clone_json(value))


def thaw(packed: Packed) -> Any:
    """A fresh copy of the world :func:`pack` froze."""
    if isinstance(packed, dict):
        return {key: _thaw_entry(item) for key, item in packed.items()}
    if isinstance(packed, bytes):
        return marshal.loads(packed)
    return clone_json(packed.value)


class ThawedOnRead(Mapping[Any, Any]):
    """A packed dict world as a read-only mapping: each top-level value thawed when first read.

    What a verifier gets as ``initial`` for an environment with ``snapshot=`` (a large world
    that is not JSON): a verifier that never reads ``initial`` (or reads one collection of it)
    does not pay for thawing the whole snapshot.
    """

    __slots__ = ("_packed", "_thawed")

    def __init__(self, packed: dict[Any, bytes | dict[Any, bytes]]) -> None:
        self._packed = packed
        self._thawed: dict[Any, Any] = {}

    def __getitem__(self, key: Any) -> Any:
        thawed = self._thawed
        if key not in thawed:
            thawed[key] = _thaw_entry(self._packed[key])
        return thawed[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __repr__(self) -> str:
        return f"ThawedOnRead({list(self._packed)!r})"


def changes(packed: Packed, value: Any) -> tuple[dict[Any, Any], dict[Any, Any]] | None:
    """The packed top-level entries that may differ: ``(before, after)``, in world order.

    Keys whose bytes are still those of the snapshot are left out of both; ``before`` keeps
    the snapshot's order, ``after`` the world's. A collection packed row by row that is still
    a dict keeps only its rows that may differ, on each side (a row changed, added or removed),
    in their own order: what a diff reports of it is the same. ``None`` when the world (or the
    snapshot) is not a dict of plain data, which the caller then compares the slow way.
    """
    if not isinstance(packed, dict) or type(value) is not dict:
        return None
    before: dict[Any, Any] = {}
    after: dict[Any, Any] = {}
    try:
        for key, item in value.items():
            old = packed.get(key)
            if isinstance(old, dict) and type(item) is dict:
                rows = _row_changes(old, item)
                if rows is not None:
                    before[key], after[key] = rows
                continue
            data = marshal.dumps(item, FORMAT)
            if old != data:
                after[key] = data
    except ValueError:  # no longer plain data
        return None
    for key, old in packed.items():
        if key not in before and (key in after or key not in value):
            before[key] = old
    before = {k: before[k] for k in packed if k in before}
    return before, after


def _row_changes(
    old: dict[Any, bytes], rows: dict[Any, Any]
) -> tuple[dict[Any, bytes], dict[Any, bytes]] | None:
    """The rows of one row-packed collection that may differ (``None``: none does)."""
    after = {}
    for row, item in rows.items():
        data = marshal.dumps(item, FORMAT)
        if old.get(row) != data:
            after[row] = data
    before = {row: data for row, data in old.items() if row in after or row not in rows}
    if not before and not after:
        return None
    return before, after
