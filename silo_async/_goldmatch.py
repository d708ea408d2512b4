"""Gold grading: the final world compared, record by record, with the world a gold solution reached.

A *record* is what the state diff calls one (``_diff.py``): an entry of a top-level collection
(keyed by id), or a top-level value named by its key. :class:`GoldPlan` reads once what the gold
solution changed (initial -> gold world); :meth:`GoldPlan.checks` then grades any final world
against it: one required check per record the gold changed, ``<record id> matches the gold
solution``, in state-diff order (the scalars, then each collection's added, removed and changed
records), then ``nothing else changed``. ``ignore`` paths (dotted, ``*`` matching any key or
index) are left out on both sides and for every check.

A plan is a pure function of the initial and gold worlds, so an instance keeps its plan and
grades its K runs without replaying gold K times.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ._diff_fields import fields
from ._jsonutil import clone_json, compact_json, json_equal
from ._verify import Check, check

__all__ = ["NOTHING_ELSE", "GoldPlan", "matches", "states"]

#: The label of the check that the agent changed nothing the gold solution left alone.
NOTHING_ELSE = "nothing else changed"
#: Records ``nothing else changed`` names; fields a record's detail names.
_NAMED_RECORDS = 5
_NAMED_FIELDS = 3

_ABSENT: Any = object()
#: A compiled set of ignore paths: a trie of path segments; ``_END`` marks where a path ends
#: (what it reaches is left out whole). An empty trie leaves everything in.
Trie = dict[str, Any]
_END = ""
_EMPTY: Trie = {}


def _compile(ignore: Iterable[str]) -> Trie:
    root: Trie = {}
    for path in ignore:
        node = root
        for segment in path.split("."):
            node = node.setdefault(segment, {})
        node[_END] = True
    return root


def _merge(a: Trie, b: Trie) -> Trie:
    merged = dict(a)
    for key, node in b.items():
        merged[key] = node if key not in merged or key == _END else _merge(merged[key], node)
    return merged


def _step(node: Trie, key: Any, row_id: Any = None) -> Trie | None:
    """The trie below ``key``, or ``None`` when a path ends there (left out whole).

    A list item is also named by its string ``row_id``.
    """
    if not node:
        return _EMPTY
    below = node.get("*")
    for name in (key, row_id):
        if name is None:
            continue
        exact = node.get(name if type(name) is str else str(name))
        if exact is not None:
            below = exact if below is None else _merge(below, exact)
    if below is None:
        return _EMPTY
    return None if _END in below else below


def _strip(value: Any, node: Trie) -> Any:
    """``value`` without the paths ``node`` names (a copy only where something goes)."""
    if not node:
        return value
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            below = _step(node, key)
            if below is not None:
                out[key] = _strip(item, below)
        return out
    if isinstance(value, list | tuple):
        kept = []
        for index, item in enumerate(value):
            row_id = item.get("id") if isinstance(item, Mapping) else None
            below = _step(node, index, row_id if isinstance(row_id, str) else None)
            if below is not None:
                kept.append(_strip(item, below))
        return kept
    return value


def _equal(a: Any, b: Any, node: Trie) -> bool:
    """``a`` and ``b`` equal as JSON once ``node``'s paths are left out of both."""
    if _same_bytes(a, b):  # the same data (most records): equal whatever is left out
        return True
    return json_equal(_strip(a, node), _strip(b, node))


def _rows(value: Any) -> Mapping[Any, Any]:
    """A collection's records by key, as the state diff keys them (id, else index)."""
    if isinstance(value, Mapping):
        return value
    rows: dict[Any, Any] = {}
    for index, item in enumerate(value):
        row_id = item.get("id") if isinstance(item, Mapping) else None
        rows[row_id if isinstance(row_id, str) else str(index)] = item
    return rows


def _is_collection(value: Any) -> bool:
    return isinstance(value, Mapping | list)


def _top_keys(world: Mapping[Any, Any], other: Mapping[Any, Any]) -> list[Any]:
    return [*world, *(k for k in other if k not in world)]


def _same_bytes(a: Any, b: Any) -> bool:
    """Equal ``marshal`` bytes: the same plain data, proved at C speed (False when unsure)."""
    try:
        return marshal.dumps(a) == marshal.dumps(b)
    except ValueError:
        return False


@attrs.frozen
class _Record:
    """One record the gold solution changed, and what it must be."""

    key: Any  # the top-level key
    row: Any  # the record's key in its collection (``_ABSENT`` for a top-level value)
    expected: Any  # the stripped gold value (``_ABSENT``: the gold removes it)
    ignore: Trie  # the ignore paths inside the record
    added: bool = False  # the gold solution creates it (it is not in the initial world)

    @property
    def label(self) -> str:
        name = self.key if self.row is _ABSENT else self.row
        return f"{name} matches the gold solution"


def _changed(before: Any, after: Any, node: Trie) -> bool:
    """Whether a record changed (added, removed or edited), ignored paths aside."""
    return before is _ABSENT or after is _ABSENT or not _equal(before, after, node)


def _unchanged(before: Any, after: Any, packed: Any) -> bool:
    """A top-level value the same as it started: by the snapshot's bytes when there are some."""
    if packed is None:
        return _same_bytes(before, after)
    try:
        same: bool = marshal.dumps(after) == packed
    except ValueError:
        return False
    return same


def _walk(
    initial: Mapping[Any, Any],
    world: Mapping[Any, Any],
    trie: Trie,
    packed: Mapping[Any, bytes] | None = None,
) -> tuple[list[tuple[Any, Any, Trie]], list[tuple[Any, Any, Trie]]]:
    """The records ``world`` changed from ``initial``, as ``(key, row, ignore)``.

    In state-diff order: the top-level values, then each collection's records (added, removed,
    changed). ``packed``: ``initial`` packed by top-level key (``_jsonutil.pack``), when at hand.
    """
    scalars: list[tuple[Any, Any, Trie]] = []
    rows: list[tuple[Any, Any, Trie]] = []
    for key in _top_keys(world, initial):
        node = _step(trie, key)
        if node is None:
            continue
        before, after = initial.get(key, _ABSENT), world.get(key, _ABSENT)
        if _unchanged(before, after, None if packed is None else packed.get(key)):
            continue
        if _is_collection(before) and _is_collection(after):  # _ABSENT is neither
            rows.extend(_changed_rows(key, before, after, node))
            continue
        if _changed(before, after, node):
            scalars.append((key, _ABSENT, node))
    return scalars, rows


def _changed_rows(key: Any, before: Any, after: Any, node: Trie) -> list[tuple[Any, Any, Trie]]:
    old, new = _rows(before), _rows(after)
    added: list[Any] = []
    changed: list[Any] = []
    dumps = marshal.dumps
    for row, now in new.items():
        # Most rows are untouched: equal bytes settle them before any ignore path is read.
        was = old.get(row, _ABSENT)
        if was is not _ABSENT:
            try:
                if dumps(was) == dumps(now):
                    continue
            except ValueError:  # not plain data: compared below
                pass
        below = _step(node, row)
        if below is None:
            continue
        if was is _ABSENT:
            added.append((key, row, below))
        elif not json_equal(_strip(was, below), _strip(now, below)):
            changed.append((key, row, below))
    removed = []
    for row in old:
        if row not in new:
            below = _step(node, row)
            if below is not None:
                removed.append((key, row, below))
    return [*added, *removed, *changed]


def _field_name(path: str) -> str:
    return path or "the whole record"


def _differences(expected: Any, got: Any) -> str:
    """The first differing fields of a record, as a check's detail.

    ``ownerId: expected "USR-004", got "USR-002"; stageId: ...``.
    """
    entries = fields(got, expected)
    shown = []
    for entry in entries[:_NAMED_FIELDS]:
        if "fromLength" in entry:
            shown.append(f"{_field_name(entry['path'])}: the list differs")
            continue
        want = compact_json(entry["to"]) if "to" in entry else "absent"
        have = compact_json(entry["from"]) if "from" in entry else "absent"
        shown.append(f"{_field_name(entry['path'])}: expected {want}, got {have}")
    more = len(entries) - len(shown)
    return "; ".join(shown) + (f" (and {more} more)" if more > 0 else "")


def _value_of(world: Mapping[Any, Any], key: Any, row: Any, tables: dict[Any, Any]) -> Any:
    """A record of ``world`` (``_ABSENT`` when it has none); ``tables`` caches rows by key."""
    if row is _ABSENT:
        return world.get(key, _ABSENT)
    table = tables.get(key)
    if table is None:
        value = world.get(key, _ABSENT)
        table = tables[key] = _rows(value) if _is_collection(value) else {}
    return table.get(row, _ABSENT)


def _without_id(value: Any) -> Any:
    """A record without its ``id`` (what two creations in another order still share)."""
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if k != "id"}
    return value


def _pair_new_records(
    records: Iterable[_Record],
    final: Mapping[Any, Any],
    changed: Iterable[tuple[Any, Any, Trie]],
    tables: dict[Any, Any],
) -> dict[tuple[Any, Any], Any]:
    """Which new record of the final world stands for each record the gold solution creates.

    Ids of new records follow the order they were created in; a correct agent may create the
    same records in another order. So a gold record whose id does not match is paired with a
    record the agent created in the same collection that equals it but for its id (each
    created record stands for one gold record at most). ``(key, gold row) -> final row``.
    """
    records = [r for r in records if r.added and r.expected is not _ABSENT]
    if not records:
        return {}
    created: dict[Any, list[Any]] = {}
    for key, row, _ in changed:
        if _value_of(final, key, row, tables) is not _ABSENT:
            created.setdefault(key, []).append(row)
    claimed: dict[tuple[Any, Any], Any] = {}
    taken: set[tuple[Any, Any]] = set()
    pending = []
    for record in records:  # a record where the gold put it needs no pairing
        got = _value_of(final, record.key, record.row, tables)
        if got is not _ABSENT and _equal(_strip(got, record.ignore), record.expected, _EMPTY):
            taken.add((record.key, record.row))
        else:
            pending.append(record)
    for record in pending:
        want = _without_id(record.expected)
        for row in created.get(record.key, ()):
            if (record.key, row) in taken:
                continue
            got = _strip(_value_of(final, record.key, row, tables), record.ignore)
            if json_equal(_without_id(got), want):
                claimed[(record.key, record.row)] = row
                taken.add((record.key, row))
                break
    return claimed


def _claims(records: Iterable[_Record], claimed: Mapping[tuple[Any, Any], Any]) -> list[Any]:
    return [(r, claimed[(r.key, r.row)]) for r in records if (r.key, r.row) in claimed]


def _record_check(
    record: _Record, final: Mapping[Any, Any], tables: dict[Any, Any], stand_in: Any = None
) -> Check:
    if stand_in is not None:  # created in another order: equal but for its id
        return check(record.label, True, f"as {stand_in}")
    got = _value_of(final, record.key, record.row, tables)
    expected = record.expected
    if expected is _ABSENT:
        detail = "" if got is _ABSENT else "still present; the gold solution removes it"
        return check(record.label, got is _ABSENT, detail)
    if got is _ABSENT:
        return check(record.label, False, "missing; the gold solution has it")
    got = _strip(got, record.ignore)
    if _equal(got, expected, _EMPTY):
        return check(record.label, True)
    return check(record.label, False, _differences(expected, got))


@attrs.frozen(eq=False)
class GoldPlan:
    """What a gold solution changed, read once; grades any number of final worlds.

    Attributes:
        records: the records the gold changed, in state-diff order.
        ignore: the compiled ``ignore`` paths.
    """

    records: tuple[_Record, ...]
    ignore: Trie
    _touched: frozenset[tuple[Any, Any]] = attrs.field(alias="touched")

    @classmethod
    def of(
        cls, gold: Any, initial: Any, ignore: Iterable[str] = (), packed: Any = None
    ) -> GoldPlan:
        """The plan of a gold world reached from ``initial``; ``ignore`` as a family's.

        ``packed``: ``initial`` as :func:`~silo_async._jsonutil.pack` froze it, when at hand
        (its bytes spare packing ``initial`` again).
        """
        trie = _compile(ignore)
        if not isinstance(gold, Mapping) or not isinstance(initial, Mapping):
            gold, initial, packed = {"": gold}, {"": initial}, None
        scalars, rows = _walk(initial, gold, trie, packed if isinstance(packed, dict) else None)
        tables: dict[Any, Any] = {}
        records = []
        initial_tables: dict[Any, Any] = {}
        for key, row, node in (*scalars, *rows):
            value = _value_of(gold, key, row, tables)
            expected = value if value is _ABSENT else clone_json(_strip(value, node))
            added = row is not _ABSENT and _value_of(initial, key, row, initial_tables) is _ABSENT
            records.append(_Record(key, row, expected, node, added))
        touched = frozenset((r.key, r.row) for r in records)
        return cls(tuple(records), trie, touched)

    @property
    def changes_world(self) -> bool:
        """Whether the gold solution changed anything (ignored paths aside)."""
        return bool(self.records)

    def checks(self, final: Any, initial: Any, packed: Any = None) -> list[Check]:
        """The record checks, then ``nothing else changed`` (``packed`` as for :meth:`of`)."""
        if not isinstance(final, Mapping) or not isinstance(initial, Mapping):
            final, initial, packed = {"": final}, {"": initial}, None
        tables: dict[Any, Any] = {}
        scalars, rows = _walk(
            initial, final, self.ignore, packed if isinstance(packed, dict) else None
        )
        claimed = _pair_new_records(self.records, final, rows, tables)
        out = [_record_check(r, final, tables, claimed.get((r.key, r.row))) for r in self.records]
        touched = self._touched | {(r.key, row) for r, row in _claims(self.records, claimed)}
        others = [
            key if row is _ABSENT else row
            for key, row, _ in (*scalars, *rows)
            if (key, row) not in touched
        ]
        detail = ""
        if others:
            named = ", ".join(str(o) for o in others[:_NAMED_RECORDS])
            more = len(others) - _NAMED_RECORDS
            detail = f"changed, and the gold solution leaves alone: {named}" + (
                f" (and {more} more)" if more > 0 else ""
            )
        out.append(check(NOTHING_ELSE, not others, detail))
        return out


def matches(final: Any, expected: Any, initial: Any, ignore: Iterable[str] = ()) -> list[Check]:
    """Grade ``final`` against ``expected`` (a gold world reached from ``initial``).

    One required check per record ``expected`` changed, labelled ``<record id> matches the
    gold solution`` (its detail names the first differing fields), in state-diff order; then
    ``nothing else changed``, naming up to five records changed that ``expected`` left alone.
    ``ignore`` paths (dotted, ``*`` matching any key or index, e.g. ``"auditLog"`` or
    ``"activities.*.subject"``) are left out on both sides and for every check.

    Args:
        final: the world the agent left.
        expected: the gold world (e.g. ``await ctx.replay(calls)``).
        initial: the world both started from.
        ignore: the paths to leave out.
    """
    return GoldPlan.of(expected, initial, ignore).checks(final, initial)


# What ``world.grade.told`` compares: a thousands separator between digits and a currency sign
# just before a figure are ignored ("$1,200" is said as "1200" or "1,200").
_SAID_GROUPED = re.compile(r"(?<=\d)[,_'\u00a0\u202f](?=\d{3}(?!\d))")
_SAID_CURRENCY = re.compile(r"[$€£¥](?=\s?\d)")


def _said(text: str) -> str:
    return _SAID_CURRENCY.sub("", _SAID_GROUPED.sub("", text)).casefold()


def states(text: str, wanted: str) -> bool:
    """Whether ``text`` states ``wanted``, as ``world.grade.told`` compares.

    Case-insensitive; thousands separators and a currency sign before a figure are ignored on
    both sides, and a figure matches only a whole figure (``"1200"`` is not in ``"12000"``).
    """
    needle = _said(wanted).strip()
    if not needle:
        return False
    start = r"(?<!\d)" if needle[0].isdigit() else ""
    end = r"(?!\d)" if needle[-1].isdigit() else ""
    return re.search(start + re.escape(needle) + end, _said(text)) is not None
