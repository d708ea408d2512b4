"""Simulated time: "now" and "today" read from ``state["clock"]``, and calendar arithmetic.

``state["clock"]`` is ``{"now": "2026-03-16T09:00:00Z", "timezone": "UTC"}``; dates elsewhere
in a world are ``YYYY-MM-DD`` strings, which compare correctly as text.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

__all__ = ["STAMP", "add_days", "days_between", "now", "parse_date", "today"]

#: The format of ``state["clock"]["now"]``.
STAMP = "%Y-%m-%dT%H:%M:%SZ"


def now(state: Mapping[str, Any]) -> str:
    """The simulated time, an ISO-8601 UTC timestamp."""
    return str(state["clock"]["now"])


def today(state: Mapping[str, Any]) -> str:
    """The simulated date, ``YYYY-MM-DD``."""
    return str(state["clock"]["now"])[:10]


def parse_date(text: str) -> dt.date:
    """``YYYY-MM-DD`` (or the date part of an ISO timestamp) as a date."""
    return dt.date.fromisoformat(text[:10])


def add_days(date: str, days: int) -> str:
    """``date`` plus ``days`` (negative goes back), as ``YYYY-MM-DD``."""
    return (parse_date(date) + dt.timedelta(days=days)).isoformat()


def days_between(start: str, end: str) -> int:
    """Whole calendar days from ``start`` to ``end`` (negative when ``end`` is earlier)."""
    return (parse_date(end) - parse_date(start)).days
