"""Dues: when an amount owed is overdue, by how many days, and the ageing of what is owed.

The same rules hold for what the company owes vendors (``payables``) and what customers owe it
(``sales``): an amount is overdue once its due date has passed with something still owed, and
an ageing report puts each party's outstanding into buckets by days past due.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from silo_async.world.amounts import sum_money
from silo_async.world.clock import days_between, today

from ..state import State

__all__ = ["Bucket", "ageing", "days_past_due", "is_past_due", "owed_totals"]

#: An ageing bucket: its name and the first and last day past due it holds.
Bucket = tuple[str, int, int]


def is_past_due(state: State, due_date: str, owed: float) -> bool:
    """Something is still ``owed`` and ``due_date`` has passed.

    A draft's due date (None) is never compared: nothing is owed on a draft.
    """
    return owed > 0 and due_date < today(state)


def days_past_due(state: State, due_date: str, owed: float) -> int:
    """Days past ``due_date`` (0 when nothing is owed or it is not due yet)."""
    if not is_past_due(state, due_date, owed):
        return 0
    return days_between(due_date, today(state))


def owed_totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``{outstanding, overdue}``: what a party's invoice rows leave owed, and the overdue part.

    Each row carries ``outstanding`` and ``isOverdue`` (an invoice's figures).
    """
    return {
        "outstanding": sum_money(r["outstanding"] for r in rows),
        "overdue": sum_money(r["outstanding"] for r in rows if r["isOverdue"]),
    }


def ageing(
    owed: Iterable[tuple[str, int, float]], buckets: Sequence[Bucket], key: str
) -> list[dict[str, Any]]:
    """What each party owes per bucket and in all: ``{key: party, <bucket>: amount, ..., total}``.

    Args:
        owed: ``(party id, days past due, amount still owed)`` of each document; documents with
            nothing owed are left out.
        buckets: the buckets, covering every number of days past due.
        key: names the party in each row, e.g. ``vendorId``.

    Returns:
        One row per party that owes something, sorted by party id.
    """
    per: dict[str, dict[str, float]] = {}
    for party, days, amount in owed:
        if amount <= 0:
            continue
        bucket = next(name for name, lo, hi in buckets if lo <= days <= hi)
        row = per.setdefault(party, {name: 0 for name, _, _ in buckets})
        row[bucket] = sum_money([row[bucket], amount])
    return [{key: p, **row, "total": sum_money(row.values())} for p, row in sorted(per.items())]
