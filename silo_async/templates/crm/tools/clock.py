"""The simulated clock: the only source of "now" in this world (nothing reads the wall clock)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import silo_async as silo

from ..state import State, now, today
from .contract import crm_tool, integer
from .helpers import audit

__all__ = ["advance_clock", "get_current_time"]


@crm_tool("get_current_time", "The current simulated date and time (UTC) in this CRM.")
def get_current_time(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Read the simulated clock."""
    return {"now": now(state), "today": today(state), "timezone": state["clock"]["timezone"]}


@crm_tool(
    "advance_clock",
    "Move the simulated clock forward. Days in stage, staleness, ages and due dates all follow it.",
    {
        "days": integer("Whole days to move forward (default 0).", minimum=0),
        "hours": integer("Hours to move forward (default 0).", minimum=0),
    },
)
def advance_clock(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Advance the clock by days and hours, within the company's limit per call."""
    days = int(input.get("days", 0))
    hours = int(input.get("hours", 0))
    if days == 0 and hours == 0:
        raise silo.tool_error(
            "invalid_input", "Give a positive number of days or hours to advance the clock by."
        )
    limit = state["policies"]["maxClockAdvanceDays"]
    if days * 24 + hours > limit * 24:
        raise silo.tool_error(
            "limit_exceeded",
            f"The clock moves at most {limit} days per call; asked for {days} days and "
            f"{hours} hours.",
            {"maxDays": limit},
        )
    before = now(state)
    moved = dt.datetime.fromisoformat(before.replace("Z", "+00:00")) + dt.timedelta(
        days=days, hours=hours
    )
    state["clock"]["now"] = moved.strftime("%Y-%m-%dT%H:%M:%SZ")
    audit(
        state,
        "system",
        "advance_clock",
        "clock",
        "clock",
        f"Clock advanced by {days} days and {hours} hours.",
        [{"field": "now", "from": before, "to": now(state)}],
    )
    return {"previous": before, "now": now(state), "today": today(state)}
