"""Clock: the simulated date every rule is measured against."""

from __future__ import annotations

from datetime import date
from typing import Any

from ..state import State, today
from .contract import define

__all__ = ["get_clock"]


@define(
    "get_clock",
    "Read the simulated clock: the current timestamp, today's date and the weekday. Due dates, "
    "overdue flags and new records are all measured against this clock.",
)
def get_clock(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Return ``{now, today, weekday, timezone}``."""
    day = today(state)
    return {
        "now": state["clock"]["now"],
        "today": day,
        "weekday": date.fromisoformat(day).strftime("%A"),
        "timezone": state["clock"].get("timezone", "UTC"),
    }
