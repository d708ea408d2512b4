"""Seeding a world from ``data/*.json``: parsed once per process, cloned per rollout.

Each ``data/<key>.json`` becomes ``world[<key>]``. A file holding a list of objects with string
``id`` s becomes a map of id to record (constant-time lookups; the state diff keys rows by id),
unless it is named in ``lists`` (the audit log stays a list); any other JSON is kept as it is.
Keys come in ``order``, then alphabetically.
References between records are checked when the seed is built, so a broken seed fails at once,
naming the record, instead of surfacing as a puzzling tool error mid-rollout. Every
:meth:`Seed.clone` is an independent copy made from one packed byte string, several times
faster than copying the parsed objects.
"""

from __future__ import annotations

import json
import marshal
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["Reference", "Seed", "SeedError"]

#: ``(collection, field, target)``: every non-null ``field`` of every record of ``collection``
#: must be an id in ``target``. ``field`` may be a dotted path through nested objects and lists
#: (``lines.productId``), and a value may be a list of ids.
Reference = tuple[str, str, str]
Build = Callable[[dict[str, Any]], None]

_ID = re.compile(r"^([A-Z][A-Z0-9]*)-([0-9]+)$")
_CACHE: dict[tuple[Any, ...], bytes] = {}
_LOCK = threading.Lock()


class SeedError(ValueError):
    """The data of a world is inconsistent (a dangling reference, a duplicate id, ...)."""


def _is_records(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(r, dict) and isinstance(r.get("id"), str) for r in value)
    )


def _read(path: Path, as_list: bool) -> Any:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SeedError(f"data/{path.name} cannot be read as JSON: {exc}") from None
    if as_list or not _is_records(value):
        return value
    records: dict[str, Any] = {}
    for record in value:
        if record["id"] in records:
            raise SeedError(f"data/{path.name}: id {record['id']} appears twice.")
        records[record["id"]] = record
    return records


def _values_at(record: Any, path: Sequence[str]) -> Iterable[Any]:
    if not path:
        yield from record if isinstance(record, list) else [record]
        return
    items = record if isinstance(record, list) else [record]
    for item in items:
        if isinstance(item, dict) and item.get(path[0]) is not None:
            yield from _values_at(item[path[0]], path[1:])


def _rows(value: Any) -> Iterable[Any]:
    return value.values() if isinstance(value, dict) else value


def _check_references(world: Mapping[str, Any], references: Iterable[Reference]) -> None:
    """Raise :class:`SeedError` for the first reference naming a missing record."""
    for collection, field, target in references:
        if collection not in world or target not in world:
            missing = collection if collection not in world else target
            raise SeedError(f"Reference {collection}.{field} -> {target}: no data/{missing}.json.")
        for record in _rows(world[collection]):
            for value in _values_at(record, field.split(".")):
                if value not in world[target]:
                    raise SeedError(
                        f"data/{collection}.json: {record.get('id')}.{field} names {value}, "
                        f"which is not in data/{target}.json."
                    )


def _check_sequences(world: Mapping[str, Any]) -> None:
    """Every counter in ``world["sequences"]`` must be at least the highest id already used.

    Counters are last-used: one behind the data would mint an id that already exists.
    """
    sequences = world.get("sequences")
    if not isinstance(sequences, dict):
        return
    for key, value in world.items():
        if not isinstance(value, dict | list) or key == "sequences":
            continue
        for record in _rows(value):
            found = _ID.match(record.get("id", "")) if isinstance(record, dict) else None
            if (
                found
                and found.group(1) in sequences
                and sequences[found.group(1)] < int(found.group(2))
            ):
                raise SeedError(
                    f"data/sequences.json: {found.group(1)} is {sequences[found.group(1)]} but "
                    f"data/{key}.json already uses {record['id']}."
                )


class Seed:
    """The seed world of one environment, built lazily from its ``data/`` directory.

    Args:
        data_dir: the directory holding ``*.json``.
        lists: files whose list of records stays a list (default: ``auditLog``).
        references: :data:`Reference` s to check.
        build: ``build(world)`` derives values and checks further rules, in place; it runs
            once, after the references are checked.
        order: the world's keys in this order first (``state-diff.json`` lists collections
            in key order: master data before documents reads best), then the other files
            alphabetically.

    Example::

        SEED = Seed(Path(__file__).parent / "data", references=[("users", "teamId", "teams")])

        def create_state() -> State:
            return SEED.clone()
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        lists: Sequence[str] = ("auditLog",),
        references: Sequence[Reference] = (),
        build: Build | None = None,
        order: Sequence[str] = (),
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.lists = tuple(lists)
        self.references = tuple(references)
        self.build = build
        self.order = tuple(order)
        self._packed: bytes | None = None

    def _key(self) -> tuple[Any, ...]:
        files = tuple(
            (p.name, p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(self.data_dir.glob("*.json"))
        )
        build = None if self.build is None else self.build.__qualname__
        return (self.data_dir, files, self.lists, self.references, build, self.order)

    def _assemble(self) -> dict[str, Any]:
        paths = {path.stem: path for path in self.data_dir.glob("*.json")}
        missing = [key for key in self.order if key not in paths]
        if missing:
            raise SeedError(f"No data/{missing[0]}.json, although the seed's order names it.")
        keys = [*self.order, *sorted(k for k in paths if k not in self.order)]
        world = {key: _read(paths[key], key in self.lists) for key in keys}
        _check_references(world, self.references)
        _check_sequences(world)
        if self.build is not None:
            self.build(world)
        return world

    def packed(self) -> bytes:
        """The seed world packed once per process (parsed and checked on the first call).

        Raises:
            SeedError: the data is inconsistent.
        """
        if self._packed is None:
            key = self._key()
            with _LOCK:
                packed = _CACHE.get(key)
                if packed is None:
                    packed = _CACHE[key] = marshal.dumps(self._assemble())
            self._packed = packed
        return self._packed

    def clone(self) -> Any:
        """A fresh, independent copy of the seed world."""
        return marshal.loads(self._packed or self.packed())
