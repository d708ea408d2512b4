"""What every CRM verifier shares: answer parsing and lookups by property.

Answer parsing is lenient but not exploitable. Record ids (``OPP-004``) and dates
(``2026-09-14``) are removed before numbers are read, so they never count as figures; thousands
separators, currency signs and ``k``/``M`` suffixes are understood; and :func:`few_numbers` lets a
verifier fail an answer that lists every number in sight hoping one of them is right.

Records are found by what they are (a name, a role, an email) rather than by hard-coded id, so a
renumbered seed still grades correctly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import silo_async as silo

from ..state import Account, Lead, Opportunity, State, User, full_name

__all__ = [
    "account_named",
    "added",
    "changed",
    "few_numbers",
    "final_number",
    "lead_named",
    "mentions",
    "numbers_in",
    "opportunity_named",
    "states_number",
    "unchanged",
    "user_named",
]

T = TypeVar("T")

_ID = re.compile(r"\b[A-Za-z]{2,6}-\d+\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:T[0-9:.]+Z?)?\b")
_GROUPED = re.compile(r"(?<=\d)[,_'](?=\d{3}(?!\d))")
_NUMBER = re.compile(
    r"(?<![\w.])(-?\d+(?:\.\d+)?)(?:\s*(k|thousand|m|mn|million)\b)?", re.IGNORECASE
)
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6}
# Small counts are often written as words ("two deals").
_WORDS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
]  # fmt: skip
_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)


def _plain(text: str) -> str:
    # Case- and accent-insensitive comparison ("Élodie" matches "elodie").
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def numbers_in(text: str) -> list[float]:
    """Every figure stated in ``text``, ids and dates excluded, in order of appearance."""
    cleaned = _DATE.sub(" ", _ID.sub(" ", text))
    cleaned = _GROUPED.sub("", cleaned.replace("$", " ").replace("USD", " "))
    cleaned = _WORD.sub(lambda m: str(_WORDS.index(m.group(1).lower())), cleaned)
    found: list[float] = []
    for match in _NUMBER.finditer(cleaned):
        value = float(match.group(1))
        suffix = (match.group(2) or "").lower()
        found.append(value * _SCALE.get(suffix, 1.0))
    return found


def states_number(text: str, value: float, tolerance: float = 0.01) -> bool:
    """True when some figure in ``text`` is within ``tolerance`` of ``value``."""
    return any(abs(n - value) <= tolerance for n in numbers_in(text))


def final_number(text: str) -> float | None:
    """The last figure stated in ``text``."""
    numbers = numbers_in(text)
    return numbers[-1] if numbers else None


def few_numbers(text: str, limit: int) -> bool:
    """At least one and at most ``limit`` distinct figures: an answer commits, not enumerates."""
    return 1 <= len(set(numbers_in(text))) <= limit


def mentions(text: str, needle: str) -> bool:
    """Case- and accent-insensitive substring test."""
    return _plain(needle) in _plain(text)


def unchanged(final: State, initial: State) -> bool:
    """The whole world is exactly as it started (JSON equality: key order ignored, types kept)."""
    return silo.json_equal(final, initial)


def added(final: State, initial: State, collection: str) -> list[Any]:
    """Records of ``collection`` present in ``final`` but not in ``initial``, by id."""
    before: dict[str, Any] = initial[collection]  # type: ignore[literal-required]
    after: dict[str, Any] = final[collection]  # type: ignore[literal-required]
    return [after[key] for key in sorted(after) if key not in before]


def changed(final: State, initial: State, collection: str, ignore: Iterable[str] = ()) -> list[str]:
    """Ids of records of ``collection`` that differ (or vanished), except ``ignore``."""
    skip = set(ignore)
    before: dict[str, Any] = initial[collection]  # type: ignore[literal-required]
    after: dict[str, Any] = final[collection]  # type: ignore[literal-required]
    return sorted(key for key in before if key not in skip and after.get(key) != before[key])


def _named(records: Iterable[T], name: str, name_of: Callable[[T], str], kind: str) -> T:
    """The first of ``records`` whose name is ``name`` (case and accents aside)."""
    for record in records:
        if _plain(name_of(record)) == _plain(name):
            return record
    raise LookupError(f"No {kind} named {name!r} in the seed.")


def user_named(state: State, name: str) -> User:
    """The user with this full name."""
    return _named(state["users"].values(), name, full_name, "user")


def account_named(state: State, name: str) -> Account:
    """The account with this exact name (case-insensitive)."""
    return _named(state["accounts"].values(), name, lambda a: a["name"], "account")


def lead_named(state: State, name: str) -> Lead:
    """The lead for this person (full name); the oldest one if several match."""
    leads = sorted(state["leads"].values(), key=lambda lead: lead["id"])
    return _named(leads, name, full_name, "lead")


def opportunity_named(state: State, name: str) -> Opportunity:
    """The deal with this exact name (case-insensitive)."""
    return _named(state["opportunities"].values(), name, lambda o: o["name"], "opportunity")
