"""Shared grading helpers: lookups by property, world comparisons and answer parsing.

Lookups go by title, name or key rather than by id, so a renumbered seed still grades.
Answer parsing is lenient (separators, number words, any position) but ids and dates are
removed first, so ``WI-012`` is never read as the number 12 and ``2026-05-11`` never as 2026.
"""

from __future__ import annotations

import re
from typing import Any

import silo_async as silo

from ..state import Record, State

__all__ = [
    "changed_ids",
    "find_by",
    "mentions",
    "mentions_id",
    "new_audit_entries",
    "numbers_in",
    "same",
    "states_number",
    "unchanged",
]

_ID_OR_DATE = re.compile(r"\b[A-Za-z]{2,5}-\d+\b|\b\d{4}-\d{2}-\d{2}\b")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20,
}  # fmt: skip
_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)


def numbers_in(text: str) -> list[float]:
    """Every number stated in ``text``, ids and ISO dates excluded, number words included."""
    cleaned = _THOUSANDS.sub("", _ID_OR_DATE.sub(" ", text))
    values = [float(m) for m in _NUMBER.findall(cleaned)]
    values += [float(_WORDS[w.lower()]) for w in _WORD.findall(cleaned)]
    return values


def states_number(text: str, value: float, tolerance: float = 0.01) -> bool:
    """Whether any number stated in ``text`` is within ``tolerance`` of ``value``."""
    return any(abs(n - value) <= tolerance for n in numbers_in(text))


def mentions(text: str, needle: str) -> bool:
    """Case-insensitive match of a whole name ("Routing S1" does not match "Routing S10")."""
    pattern = rf"(?<!\w){re.escape(needle)}(?!\w)"
    return re.search(pattern, text, re.IGNORECASE) is not None


def mentions_id(text: str, record_id: str) -> bool:
    """Whether ``record_id`` appears as a whole id (``WI-01`` does not match ``WI-012``)."""
    pattern = rf"(?<![A-Za-z0-9-]){re.escape(record_id)}(?![0-9])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def find_by(state: State, collection: str, field: str, value: str) -> Record | None:
    """The first record whose ``field`` equals ``value`` (case-insensitive), else None."""
    records: dict[str, Record] = state[collection]  # type: ignore[literal-required]
    wanted = value.lower()
    return next((r for r in records.values() if str(r.get(field, "")).lower() == wanted), None)


def same(a: Any, b: Any) -> bool:
    """JSON equality (key order ignored; ``1`` and ``1.0`` and ``True`` kept apart)."""
    return silo.json_equal(a, b)


def unchanged(final: State, initial: State) -> bool:
    """The whole world is exactly as it started (answer tasks must not write)."""
    return same(final, initial)


def changed_ids(final: State, initial: State, collection: str) -> set[str]:
    """Ids added, removed or modified in ``collection`` between the two worlds."""
    before: dict[str, Any] = initial[collection]  # type: ignore[literal-required]
    after: dict[str, Any] = final[collection]  # type: ignore[literal-required]
    ids = set(before) | set(after)
    return {i for i in ids if i not in before or i not in after or not same(before[i], after[i])}


def new_audit_entries(final: State, initial: State) -> list[Record]:
    """Audit entries appended during the rollout."""
    known = {e["id"] for e in initial["auditLog"]}
    return [e for e in final["auditLog"] if e["id"] not in known]
