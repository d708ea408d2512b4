"""One rollout's world: tau2's own environment over copy-on-read databases, and its calls.

tau2 builds a fresh environment for every simulation (and two more to grade it), parsing or
deep-copying its whole database each time — 7 MB for airline. Here the database is parsed once
per process and shared read-only; a rollout's world is a shallow copy of tau2's environment
whose toolkits hold *copy-on-read* databases: each id-keyed collection (``flights``,
``reservations``...) hands out a private deep copy of a record the first time a tool reaches
it, so a rollout pays for the records it touches, never for the rest. Records it never reached
are the shared objects themselves, unchanged, which makes comparing two worlds (the final one
and the gold one) a matter of the records either touched.

Every tool call of the rollout goes through tau2's own ``Environment.get_response`` — the code
tau2's orchestrator runs — and is logged with its requestor, for the ``action`` component.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

__all__ = [
    "CopyOnRead",
    "Tau2ToolError",
    "World",
    "clone_db",
    "clone_environment",
    "db_differences",
    "shared_json",
    "snapshot_of",
]


class CopyOnRead(dict):  # type: ignore[type-arg]
    """A dict of records over a shared one: a record is deep-copied when first reached.

    Reading through the Python API (``d[k]``, ``get``, ``values()``, ``items()``, ``pop``)
    copies; C-level readers that do not change anything (pydantic's serializer, ``json``) see
    the shared records of keys never reached, which are unchanged by construction.
    ``touched`` holds the keys whose value is this dict's own (copied, assigned or removed).
    """

    __slots__ = ("touched",)

    def __init__(self, shared: dict[Any, Any]) -> None:
        super().__init__(shared)
        self.touched: set[Any] = set()

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if key not in self.touched:
            value = copy.deepcopy(value)
            dict.__setitem__(self, key, value)
            self.touched.add(key)
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        dict.__setitem__(self, key, value)
        self.touched.add(key)

    def __delitem__(self, key: Any) -> None:
        dict.__delitem__(self, key)
        self.touched.add(key)

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self:
            return self[key]
        return default

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[key] for key in list(self)]

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        return [(key, self[key]) for key in list(self)]

    def pop(self, key: Any, *default: Any) -> Any:
        if key not in self:
            if default:
                return default[0]
            raise KeyError(key)
        value = self[key]
        self.__delitem__(key)
        return value

    def popitem(self) -> tuple[Any, Any]:
        key = next(reversed(list(self)))
        return key, self.pop(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def copy(self) -> dict[Any, Any]:
        return dict(self.items())

    def __copy__(self) -> dict[Any, Any]:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> Any:
        return (dict, (self.copy(),))


def clone_db(db: Any) -> Any:
    """A rollout's copy of a tau2 database: its dict fields copy-on-read, the rest deep-copied."""
    fields = {}
    for name in type(db).model_fields:
        value = getattr(db, name)
        fields[name] = CopyOnRead(value) if isinstance(value, dict) else copy.deepcopy(value)
    return type(db).model_construct(_fields_set=set(db.model_fields_set), **fields)


def clone_environment(base: Any) -> Any:
    """A fresh tau2 environment sharing ``base``'s parsed data (policy, tools, records).

    tau2's toolkits take their database as their one argument; the environment object itself
    holds only the domain's name, policy, toolkits and mode.
    """
    env = copy.copy(base)
    env.tools = type(base.tools)(clone_db(base.tools.db))
    if base.user_tools is not None:
        env.user_tools = type(base.user_tools)(clone_db(base.user_tools.db))
    return env


class World:
    """One rollout's tau2 environment and the tool calls made on it, in order.

    Attributes:
        env: tau2's environment (its toolkits over copy-on-read databases).
        calls: ``(requestor, name, arguments)`` of every call that reached tau2, agent's
            (``assistant``) and user's (``user``) alike.
    """

    __slots__ = ("_tool_call", "calls", "env")

    def __init__(self, env: Any, tool_call: Any) -> None:
        self.env = env
        self.calls: list[tuple[str, str, Any]] = []
        self._tool_call = tool_call  # tau2's ToolCall class

    def call(self, requestor: str, name: str, arguments: Any) -> str:
        """Run one call as tau2's orchestrator does; its text, or the error it raises.

        The call is logged first (tau2's action check counts failed calls too).

        Raises:
            Tau2ToolError: tau2 answered with an error (its ``Error: ...`` text).
        """
        self.calls.append((requestor, name, arguments))
        made = self._tool_call(
            id=f"call_{len(self.calls)}", name=name, arguments=arguments, requestor=requestor
        )
        message = self.env.get_response(made)
        if message.error:
            raise Tau2ToolError(message.content)
        return str(message.content)


class Tau2ToolError(RuntimeError):
    """tau2 answered a call with an error; the message is tau2's own text."""


def _field_json(value: Any) -> str:
    return json.dumps(_dumped(value), sort_keys=True, default=str)


def _dumped(value: Any) -> Any:
    """A field's value as pydantic's ``model_dump`` gives it (what tau2 hashes)."""
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: _dumped(v) for k, v in dict.items(value)}
    if isinstance(value, list | tuple):
        return [_dumped(v) for v in value]
    return value


def db_differences(final: Any, gold: Any, limit: int = 5) -> list[str]:
    """Where two tau2 databases of one domain differ (``[]``: tau2's hashes are equal).

    tau2 hashes ``json.dumps(db.model_dump(), sort_keys=True, default=str)``; that text is the
    same exactly when every field's text is, and an id-keyed collection's text exactly when its
    keys and each record's text are. Records neither database touched are the same shared
    objects, so only the touched ones are compared. Names up to ``limit`` differences
    (``reservations.ABC123``, ``bills``).
    """
    found: list[str] = []
    for name in type(final).model_fields:
        mine, theirs = getattr(final, name), getattr(gold, name)
        if isinstance(mine, CopyOnRead) and isinstance(theirs, CopyOnRead):
            found += (f"{name}.{key}" for key in _records_differing(mine, theirs))
        elif _field_json(mine) != _field_json(theirs):
            found.append(name)
        if len(found) >= limit:
            break
    return found[:limit]


def _records_differing(mine: CopyOnRead, theirs: CopyOnRead) -> Iterator[Any]:
    for key in sorted(mine.touched | theirs.touched, key=str):
        present = (key in mine, key in theirs)
        if present == (False, False):
            continue
        if present != (True, True) or _record_json(mine, key) != _record_json(theirs, key):
            yield key


def _record_json(records: CopyOnRead, key: Any) -> str:
    return _field_json(dict.__getitem__(records, key))


def snapshot_of(db: Any, shared: dict[str, dict[Any, Any]], prefix: str = "") -> dict[str, Any]:
    """A database as JSON, one top-level entry per field (``prefix`` before each name).

    ``shared`` holds, per id-keyed field, the JSON of every record of the shared (base)
    database: a record the rollout never touched is that very object, so only touched records
    are dumped again.
    """
    out: dict[str, Any] = {}
    for name in type(db).model_fields:
        value = getattr(db, name)
        base = shared.get(name) if isinstance(value, CopyOnRead) else None
        if isinstance(value, CopyOnRead) and base is not None:
            touched = value.touched
            out[prefix + name] = {
                k: _json_of(dict.__getitem__(value, k)) if k in touched else base[k]
                for k in dict.keys(value)
            }
        else:
            out[prefix + name] = _json_of(value)
    return out


def shared_json(db: Any) -> dict[str, dict[Any, Any]]:
    """The JSON of every record of a shared database's id-keyed fields (see :func:`snapshot_of`)."""
    return {
        name: {k: _json_of(v) for k, v in value.items()}
        for name in type(db).model_fields
        if isinstance(value := getattr(db, name), dict)
    }


def _json_of(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return json.loads(json.dumps(_dumped(value), default=str))
