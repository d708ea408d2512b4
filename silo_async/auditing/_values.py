"""What an audit's agents have seen: every scalar of the outputs, by key, and the text's ids.

Probes and mutants build their inputs from values met along the way, never from the seed files:
the explorer fills an ``opportunityId`` with an id seen under that key (or an ``id`` of a record
listed under ``opportunities``), the spammer answers with every number, id and capitalised
phrase it met, and ``alter`` swaps an argument for another value of the same kind. This module
keeps those values in the order they were first met (so every choice among them is
deterministic) and says what *kind* a value is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..world.grade import numbers_in

__all__ = ["Seen", "id_prefix", "is_date", "is_id", "kind_of", "stem", "text_values"]

#: Hyphenated record ids: ``OPP-004``, ``PO-2026-0012``, ``AUD-0001``.
_HYPHEN_ID = re.compile(r"^([A-Za-z]{1,12}(?:-[A-Za-z]{1,12})*)-\d+(?:-[A-Za-z0-9]+)*$")
#: Other id-like tokens: letters and digits mixed, no spaces (``4WQ150``, ``mia_li_3668``).
_TOKEN_ID = re.compile(r"^(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]*$")
_TEXT_TOKEN = re.compile(r"(?<![\w-])[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9](?![\w-])")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$")
_TEXT_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:T[0-9:.]+Z?)?\b")
_PHRASE = re.compile(r"\b[A-Z][a-z]+(?:[ -](?:[A-Z][a-z]+|&|of|and))*(?<![ -])\b")
_VERBS = ("get", "list", "search", "find", "read", "show", "view", "lookup", "fetch")
Scalar = str | int | float | bool


@functools.lru_cache(maxsize=4096)
def stem(name: str) -> str:
    """A key or a collection's name reduced to its noun: ``opportunityId`` -> ``opportunity``.

    ``opportunities``, ``opportunity_id``, ``get_opportunity`` and ``OpportunityIds`` all give
    ``opportunity``, so an id listed under one can fill an argument named by another.
    """
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().replace("-", "_").split("_")
    words = [w for w in words if w]
    if words and words[0] in _VERBS and len(words) > 1:
        words = words[1:]
    if len(words) > 1 and words[-1] in ("id", "ids", "number", "code", "key"):
        words = words[:-1]
    noun = "".join(words)
    for plural, singular in (("ies", "y"), ("sses", "ss"), ("ses", "s"), ("s", "")):
        if noun.endswith(plural) and len(noun) > len(plural) + 2 and not noun.endswith("ss"):
            return noun[: -len(plural)] + singular
    return noun


def is_date(value: object) -> bool:
    """An ISO date or timestamp string."""
    return isinstance(value, str) and _DATE.match(value) is not None


def is_id(value: object) -> bool:
    """A record id: a short token of letters and digits with no spaces, not a date."""
    return isinstance(value, str) and _is_id(value)


@functools.lru_cache(maxsize=65536)
def _is_id(value: str) -> bool:
    if len(value) > 40 or is_date(value):
        return False
    return _HYPHEN_ID.match(value) is not None or _TOKEN_ID.match(value) is not None


def id_prefix(value: str) -> str | None:
    """The letters of a hyphenated id (``OPP`` for ``OPP-004``), or ``None``."""
    found = _HYPHEN_ID.match(value)
    return found.group(1).upper() if found else None


def kind_of(value: Any, key: str, enum: Iterable[Any] | None = None) -> str | None:
    """What kind of value ``alter`` may swap ``value`` for (``None``: not swapped).

    An enum value (the schema lists it), a figure, a date, a hyphenated id (its prefix is its
    kind: an ``OPP-`` id is swapped for another ``OPP-`` id), or another string of the world
    met under the same key (``field:<key>``). Booleans and nulls are decisions, not values
    taken from anywhere.
    """
    if isinstance(value, bool) or value is None:
        return None
    if enum is not None:
        return "enum"
    if isinstance(value, int | float):
        return "number"
    if not isinstance(value, str) or not value:
        return None
    if is_date(value):
        return "date"
    prefix = id_prefix(value)
    if prefix is not None:
        return f"id:{prefix}"
    return f"field:{stem(key)}"


@functools.lru_cache(maxsize=65536)
def text_values(
    text: str,
) -> tuple[tuple[str, ...], tuple[float, ...], tuple[str, ...], tuple[str, ...]]:
    """The ids, figures, dates and capitalised phrases stated in ``text``, in order.

    Cached: the same texts (names, statuses, descriptions) come back in output after output.
    """
    dates = tuple(_TEXT_DATE.findall(text))
    ids = tuple(t for t in _TEXT_TOKEN.findall(text) if is_id(t) and (t.upper() == t or "_" in t))
    phrases = tuple(_PHRASE.findall(text))
    return ids, tuple(numbers_in(text)), dates, phrases


def _walk(value: Any, key: str, parent: str) -> Iterator[tuple[str, str, Scalar]]:
    """Every scalar leaf with its key and the stem of the record holding it.

    A record's stem is the key it is listed or nested under (``opportunities`` ->
    ``opportunity``), so its ``id`` is known as an opportunity's id.
    """
    if isinstance(value, Mapping):
        for k, v in value.items():
            name = str(k)
            if isinstance(v, Mapping | list):
                yield from _walk(v, name, stem(name))
            elif isinstance(v, str | int | float):
                yield name, parent, v
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, key, parent)
    elif isinstance(value, str | int | float):  # bool is an int: kept
        yield key, parent, value


class Seen:
    """Every value met so far, in first-met order, by key and by kind."""

    def __init__(self) -> None:
        self.by_key: dict[str, list[Scalar]] = {}
        self.ids: list[str] = []
        self.numbers: list[float] = []
        self.dates: list[str] = []
        self.strings: list[str] = []
        self.phrases: list[str] = []
        self._known: set[tuple[str, Any]] = set()

    def _add(self, bucket: list[Any], value: Any, tag: str) -> None:
        mark = (tag, value)
        if mark not in self._known:
            self._known.add(mark)
            bucket.append(value)

    def _keyed(self, key: str, value: Scalar) -> None:
        name = stem(key) if key.lower() != "id" else key.lower()
        mark = ("key:" + name, (type(value) is bool, value))
        if mark not in self._known:
            self._known.add(mark)
            self.by_key.setdefault(name, []).append(value)

    def scalar(self, key: str, parent: str, value: Scalar) -> None:
        """Record one scalar met under ``key`` in a record known as ``parent``."""
        self._keyed(key, value)
        if key.lower() == "id" and parent:
            self._keyed(parent, value)
        if isinstance(value, bool):
            return
        if isinstance(value, int | float):
            self._add(self.numbers, float(value), "number")
            return
        if is_date(value):
            self._add(self.dates, value, "date")
        elif is_id(value):
            self._add(self.ids, value, "id")
        self._add(self.strings, value, "string")
        if " " in value:  # free text may state ids, figures and names; a token is itself
            self.text(value)

    def output(self, value: Any, tool: str = "") -> None:
        """Record every scalar of a tool's output (a bare record is known by the tool's noun)."""
        for key, parent, leaf in _walk(value, "", stem(tool) if tool else ""):
            self.scalar(key, parent, leaf)

    def text(self, text: str) -> None:
        """Record the ids, figures, dates and capitalised phrases stated in free text."""
        ids, numbers, dates, phrases = text_values(text)
        for found in ids:
            self._add(self.ids, found, "id")
        for number in numbers:
            self._add(self.numbers, number, "number")
        for date in dates:
            self._add(self.dates, date, "date")
        for phrase in phrases:
            self._add(self.phrases, phrase, "phrase")

    def under(self, key: str) -> list[Scalar]:
        """The values met under ``key`` (or listed as ids of records named like it)."""
        return list(self.by_key.get(stem(key), ()))
