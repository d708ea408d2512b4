"""Mutants of a solver: its calls with one world-changing step left out, doubled or altered.

Every call of the solver that changed the world yields a ``drop`` mutant (the call left out)
and a ``repeat`` mutant (made twice); each argument of it whose value the solver *took* — from
the instruction, the world, an earlier output, a user's reply or the tool's own enum — yields
an ``alter`` mutant: that argument replaced by another value of the same kind (another ``OPP-``
id, another figure, another enum value...) seen in earlier outputs or the world, such that the
tool's schema still accepts the call. Text the solver wrote itself — a value whose first
appearance is one of its own inputs, even if a tool later echoes it — is never altered. A
``message_user`` turn yields a ``drop`` mutant only (when the user's actions during it changed
the world), and the user's own calls are never mutated: the scripted user plays them again
when told the same things.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from .._jsonutil import clone_json, compact_json
from .._result import RunResult
from ..testing import ScriptedCall
from ..world.grade import numbers_in
from ._inputs import InputMaker
from ._recording import Step
from ._values import Seen, id_prefix, is_date, is_id, kind_of

__all__ = ["ALTER_TRIES", "Alteration", "Mutant", "Provenance", "alterations", "mutants_of"]

#: Values tried in turn for one ``alter`` mutant, until one changes the world.
ALTER_TRIES = 3


@attrs.frozen
class Mutant:
    """One mutant: the solver's calls with one step dropped, repeated or altered.

    Attributes:
        kind: ``drop``, ``repeat`` or ``alter``.
        step: the step mutated.
        calls: the calls the mutant makes, in order.
        argument: for ``alter``, the dotted path of the argument replaced.
        value: for ``alter``, the value put in its place.
    """

    kind: str
    step: Step
    calls: tuple[ScriptedCall, ...]
    argument: str | None = None
    value: Any = None

    def call(self) -> dict[str, Any]:
        """``{"index", "tool", "input"}``, plus ``argument`` and ``value`` for ``alter``."""
        found: dict[str, Any] = {
            "index": self.step.index,
            "tool": self.step.tool,
            "input": self.step.input,
        }
        if self.kind == "alter":
            found["argument"] = self.argument
            found["value"] = self.value
        return found


def _calls(steps: Sequence[Step]) -> list[ScriptedCall]:
    return [ScriptedCall(s.tool, s.input) for s in steps]


def mutants_of(steps: Sequence[Step]) -> list[Mutant]:
    """The ``drop`` and ``repeat`` mutants of every step that changed the world."""
    found: list[Mutant] = []
    calls = _calls(steps)
    for step in steps:
        if not step.changed:
            continue
        i = step.index
        found.append(Mutant("drop", step, tuple(calls[:i] + calls[i + 1 :])))
        if not step.turn:
            found.append(Mutant("repeat", step, tuple(calls[: i + 1] + calls[i:])))
    return found


# -- where a value came from ---------------------------------------------------------------------


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    elif isinstance(value, str | int | float):
        yield value


def _same_number(a: Any, b: float) -> bool:
    return (
        isinstance(a, int | float)
        and not isinstance(a, bool)
        and math.isclose(float(a), b, rel_tol=1e-9, abs_tol=1e-9)
    )


def _in_text(value: Any, text: str) -> bool:
    """Whether free text states ``value`` (a whole word, or the same figure)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return any(_same_number(n, float(value)) for n in numbers_in(text))
    needle = str(value)
    if not needle:
        return False
    return re.search(rf"(?<![\w-]){re.escape(needle)}(?![\w-])", text) is not None


def _in_json(value: Any, payload: Any, *, loose: bool) -> bool:
    """Whether a JSON payload holds ``value`` (``loose``: also inside its strings' text)."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    for leaf in _scalars(payload):
        if isinstance(leaf, bool) or isinstance(value, bool):
            continue
        if number and _same_number(leaf, float(value)):
            return True
        if not number and leaf == value:
            return True
        textual = number or is_id(value) or is_date(value)
        if loose and textual and isinstance(leaf, str) and _in_text(value, leaf):
            return True
    return False


@attrs.frozen
class _Entry:
    position: float
    given: bool
    text: str | None
    payload: Any


class Provenance:
    """Where each value of the solver's rollout first appeared: given to it, or written by it.

    Given: the instruction (with the user's opening), every tool output (the user's calls'
    included: they are the world's), every reply of the user. Written: the solver's own inputs
    and what it said to the user.
    """

    def __init__(self, result: RunResult) -> None:
        entries = [_Entry(-1, True, result.task.prompt, None)]
        for position, event in enumerate(result.trace):
            kind = event.get("type")
            if kind == "tool_call" and event.get("actor", "agent") != "user":
                entries.append(_Entry(position, False, None, event.get("input")))
            elif kind == "tool_result":
                entries.append(_Entry(position, True, None, event.get("output")))
            elif kind == "user_turn":
                entries.append(_Entry(position, False, str(event.get("agentText", "")), None))
                entries.append(_Entry(position + 0.5, True, str(event.get("reply", "")), None))
        self.entries = entries
        self._seen = Seen()
        self._next = 0

    def _holds(self, entry: _Entry, value: Any) -> bool:
        if entry.text is not None:
            return _in_text(value, entry.text)
        return _in_json(value, entry.payload, loose=entry.given)

    def taken(self, value: Any, step: Step) -> bool:
        """Whether the solver took ``value`` (given to it before it first wrote it)."""
        for entry in self.entries:
            if entry.position > step.position:
                return False
            if self._holds(entry, value):
                return entry.given
        return False

    def seen_before(self, step: Step) -> Seen:
        """Every value given to the solver before ``step``.

        One :class:`Seen` grows as later steps are asked for (ask in step order): a solver of
        many calls is not read again from the start for each of them.
        """
        while self._next < len(self.entries):
            entry = self.entries[self._next]
            if entry.position >= step.position:
                break
            self._next += 1
            if not entry.given:
                continue
            if entry.text is not None:
                self._seen.text(entry.text)
            else:
                self._seen.output(entry.payload)
        return self._seen


# -- alter -----------------------------------------------------------------------------------------


@attrs.frozen
class Alteration:
    """An argument ``alter`` may replace, and the values to try in turn."""

    step: Step
    argument: str
    path: tuple[str | int, ...]
    candidates: tuple[Any, ...]

    def mutant(self, steps: Sequence[Step], value: Any) -> Mutant:
        """The mutant with this argument set to ``value``."""
        calls = _calls(steps)
        altered = clone_json(self.step.input)
        _set(altered, self.path, value)
        calls[self.step.index] = ScriptedCall(self.step.tool, altered)
        return Mutant("alter", self.step, tuple(calls), self.argument, value)


def _set(target: Any, path: tuple[str | int, ...], value: Any) -> None:
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def _leaves(
    value: Any, schema: Any, path: tuple[str | int, ...] = (), key: str = ""
) -> Iterator[tuple[tuple[str | int, ...], str, Any, Any]]:
    """``(path, key, leaf, leaf schema)`` for every scalar argument."""
    schema = schema if isinstance(schema, Mapping) else {}
    if isinstance(value, Mapping):
        properties = schema.get("properties") or {}
        for name, item in value.items():
            yield from _leaves(item, properties.get(name, {}), (*path, str(name)), str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, schema.get("items", {}), (*path, index), key)
    else:
        yield path, key, value, schema


def _pool(kind: str, key: str, original: Any, seen: Seen, schema: Mapping[str, Any]) -> list[Any]:
    """Values of ``kind`` in ``seen`` other than ``original``, in first-met order."""
    if kind == "enum":
        found: list[Any] = list(schema.get("enum") or ())
    elif kind == "number":
        found = [v for v in seen.under(key) if isinstance(v, int | float)] + seen.numbers
        if isinstance(original, int):
            found = [int(v) for v in found if not isinstance(v, bool) and float(v).is_integer()]
    elif kind == "date":
        found = [d for d in seen.dates if len(d) == len(original)]
    elif kind.startswith("id:"):
        found = [v for v in seen.ids if id_prefix(v) == kind[3:]]
    else:
        found = [v for v in seen.under(key) if isinstance(v, str) and not is_id(v)]
    unique: dict[object, Any] = {}
    for value in found:
        if isinstance(value, bool) or value is None or value == original:
            continue
        # 3 and 3.0 are one figure; "3" is another value; an enum may list objects.
        figure = isinstance(value, int | float)
        unique.setdefault(float(value) if figure else compact_json(value), value)
    return list(unique.values())


def alterations(
    steps: Sequence[Step],
    result: RunResult,
    world: Callable[[], Seen],
    makers: Mapping[str, InputMaker],
    rng_seed: str,
) -> list[Alteration]:
    """Every argument of a world-changing call that ``alter`` replaces, with its candidates.

    Candidates come from the values given to the solver before the call (shuffled with a
    random generator seeded from ``rng_seed``, the step and the argument), then the world's
    (``world()``, read only when the first are too few); only those the tool's schema accepts
    in the argument's place are kept.
    """
    provenance = Provenance(result)
    found: list[Alteration] = []
    for step in steps:
        maker = makers.get(step.tool)
        if not step.changed or step.turn or maker is None or not isinstance(step.input, dict):
            continue
        earlier: Seen | None = None
        for path, key, value, schema in _leaves(step.input, maker.schema):
            enum = schema.get("enum") if isinstance(schema.get("enum"), list) else None
            kind = kind_of(value, key, enum)
            if kind is None or (enum is None and not provenance.taken(value, step)):
                continue
            earlier = earlier or provenance.seen_before(step)
            argument = ".".join(str(p) for p in path)
            rng = random.Random(f"{rng_seed}/{step.index}/{argument}")
            candidates: list[Any] = []
            for source in (earlier, None):  # the world is read only when needed
                tier = _pool(kind, key, value, source or world(), schema)
                rng.shuffle(tier)
                _take(candidates, tier, step, path, maker)
                if len(candidates) == ALTER_TRIES:
                    break
            if candidates:
                found.append(Alteration(step, argument, path, tuple(candidates)))
    return found


def _take(
    candidates: list[Any],
    tier: Sequence[Any],
    step: Step,
    path: tuple[str | int, ...],
    maker: InputMaker,
) -> None:
    """Add the values of ``tier`` the schema accepts in the argument's place, up to the tries."""
    for value in tier:
        if len(candidates) == ALTER_TRIES:
            return
        if any(value == c and type(value) is type(c) for c in candidates):
            continue
        altered = clone_json(step.input)
        _set(altered, path, value)
        if maker.valid(altered):
            candidates.append(value)
