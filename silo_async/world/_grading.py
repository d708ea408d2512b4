"""The verifier side: reading an agent's answer, and comparing the final world with the first.

Answer parsing is lenient but not exploitable. Record ids (``PO-204``, which would otherwise read
as -204) and ISO dates (``2026-03-16``) are removed before figures are read; thousands
separators (``1,250`` ``1_250`` ``1'250``), currency signs and codes, ``k``/``K``/``thousand``
and ``M``/``mn``/``million`` suffixes and number words (``two``, ``forty-one``) are understood, in
place, so :func:`final_number` is really the last figure stated. A lower-case ``m`` is not a
million (``600 m`` of hose is six hundred metres). :func:`few_numbers` lets a verifier fail an
answer that lists every number in sight hoping one of them is right.

World comparisons take ``(final, initial)`` in the order verifiers receive them.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Mapping
from typing import Any

from .._goldmatch import states
from .._jsonutil import json_equal
from ._values import fold

__all__ = [
    "changed_ids",
    "few_numbers",
    "final_number",
    "find_by",
    "mentions",
    "mentions_id",
    "modified_ids",
    "new_ids",
    "new_records",
    "numbers_in",
    "states_number",
    "told",
    "unchanged",
]

_ID = re.compile(r"\b[A-Za-z]{1,8}(?:-[A-Za-z]{1,8})*-\d+(?:-[A-Za-z]*\d+)*\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:T[0-9:.]+Z?)?\b")
_GROUPED = re.compile(r"(?<=\d)[,_'\u00a0\u202f](?=\d{3}(?!\d))")
_CURRENCY = re.compile(r"[$€£¥]|\b(?:USD|EUR|GBP)\b")
_NUMBER = re.compile(
    r"(?<![\w.])([-+]?\d+(?:\.\d+)?)(?:\s*(k|K|thousand|M|mn|million|bn|billion)\b)?"
)
_SCALE = {
    "k": 1e3,
    "K": 1e3,
    "thousand": 1e3,
    "M": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "bn": 1e9,
    "billion": 1e9,
}
_ONES = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD = re.compile(
    rf"\b(?:({'|'.join(_TENS)})(?:[- ]({'|'.join(_ONES[1:10])}))?|({'|'.join(_ONES)}))\b",
    re.IGNORECASE,
)


def _word_value(match: re.Match[str]) -> str:
    tens, unit, small = match.groups()
    if small:
        return str(_ONES.index(small.lower()))
    return str(20 + 10 * _TENS.index(tens.lower()) + (_ONES.index(unit.lower()) if unit else 0))


def numbers_in(text: str) -> list[float]:
    """Every figure stated in ``text``, ids and dates excluded, in order of appearance."""
    cleaned = _DATE.sub(" ", _ID.sub(" ", text))
    cleaned = _GROUPED.sub("", _CURRENCY.sub(" ", cleaned))
    cleaned = _WORD.sub(_word_value, cleaned)
    found: list[float] = []
    for match in _NUMBER.finditer(cleaned):
        value = float(match.group(1))
        found.append(value * _SCALE.get(match.group(2) or "", 1.0))
    return found


def states_number(text: str, value: float, tolerance: float = 0.01) -> bool:
    """Whether some figure in ``text`` is within ``tolerance`` of ``value``."""
    return any(abs(n - value) <= tolerance for n in numbers_in(text))


def final_number(text: str) -> float | None:
    """The last figure stated in ``text`` (None when there is none)."""
    numbers = numbers_in(text)
    return numbers[-1] if numbers else None


def few_numbers(text: str, limit: int) -> bool:
    """At least one and at most ``limit`` distinct figures: an answer commits, not enumerates."""
    return 1 <= len(set(numbers_in(text))) <= limit


def mentions(text: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``text`` as whole words (case- and accent-insensitive).

    ``"Routing S1"`` does not match ``"Routing S10"``; ``"Élodie"`` matches ``"elodie"``.
    """
    pattern = rf"(?<!\w){re.escape(fold(needle.strip()))}(?!\w)"
    return re.search(pattern, fold(text)) is not None


def mentions_id(text: str, record_id: str) -> bool:
    """Whether ``record_id`` appears as a whole id (``PO-20`` does not match ``PO-204``)."""
    pattern = rf"(?<![A-Za-z0-9-]){re.escape(record_id)}(?![0-9])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def told(ctx: Any, text: str) -> bool:
    """Whether the agent told the user ``text``: some ``message_user`` text of it contains it.

    Case-insensitive; thousands separators and a currency sign before a figure are ignored on
    both sides (``"$1,200"`` matches ``"1200"`` and ``"1,200 dollars"``), and a figure matches
    only a whole figure (``"1200"`` is not told by ``"12000"``). The final answer is not a turn:
    only what the agent said through ``message_user`` counts.

    Args:
        ctx: the verifier's context (its ``conversation``).
        text: what the user must have been told.
    """
    turns = getattr(ctx, "conversation", ()) or ()
    return any(states(str(turn.get("agentText", "")), text) for turn in turns)


def unchanged(final: Any, initial: Any) -> bool:
    """The whole world is exactly as it started (JSON equality: key order aside, types kept).

    Equal ``marshal`` bytes prove it at C speed (same values, types and order) for the common
    case of a world the agent left alone; only other worlds are compared value by value.
    """
    try:
        if marshal.dumps(final) == marshal.dumps(initial):
            return True
    except ValueError:  # not plain data: the slow comparison decides
        pass
    return json_equal(final, initial)


def _rows(world: Mapping[str, Any], collection: str) -> Mapping[str, Any]:
    value = world[collection]
    if isinstance(value, Mapping):
        return value
    return {row["id"]: row for row in value}


def changed_ids(final: Mapping[str, Any], initial: Mapping[str, Any], collection: str) -> list[str]:
    """Ids added, removed or modified in ``collection``, sorted."""
    before, after = _rows(initial, collection), _rows(final, collection)
    ids = set(before) | set(after)
    return sorted(
        i for i in ids if i not in before or i not in after or not json_equal(before[i], after[i])
    )


def modified_ids(
    final: Mapping[str, Any], initial: Mapping[str, Any], collection: str
) -> list[str]:
    """Ids of records that existed at the start and were changed or removed, sorted."""
    before, after = _rows(initial, collection), _rows(final, collection)
    return sorted(i for i in before if i not in after or not json_equal(before[i], after[i]))


def new_ids(final: Mapping[str, Any], initial: Mapping[str, Any], collection: str) -> list[str]:
    """Ids present in ``final`` but not in ``initial``, sorted."""
    before = _rows(initial, collection)
    return sorted(i for i in _rows(final, collection) if i not in before)


def new_records(final: Mapping[str, Any], initial: Mapping[str, Any], collection: str) -> list[Any]:
    """The records added to ``collection`` during the rollout, in id order."""
    after = _rows(final, collection)
    return [after[i] for i in new_ids(final, initial, collection)]


def find_by(world: Mapping[str, Any], collection: str, field: str, value: str) -> Any:
    """The first record (in id order) whose ``field`` equals ``value`` case-insensitively, or None.

    Verifiers find records by what they are (a name, a title) rather than by hard-coded id, so a
    renumbered seed still grades.
    """
    rows = _rows(world, collection)
    wanted = fold(value)
    for key in sorted(rows):
        if fold(str(rows[key].get(field, ""))) == wanted:
            return rows[key]
    return None
