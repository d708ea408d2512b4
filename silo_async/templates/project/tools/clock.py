"""Clock: the simulated date every rule is measured against."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from ..state import State, today
from .contract import ACTOR, define, integer
from .helpers import acting_member, audit

__all__ = ["advance_clock", "get_clock"]


def _clock_view(state: State) -> dict[str, Any]:
    day = today(state)
    return {
        "now": state["clock"]["now"],
        "today": day,
        "weekday": date.fromisoformat(day).strftime("%A"),
        "timezone": state["clock"].get("timezone", "UTC"),
    }


@define(
    "get_clock",
    "Read the simulated clock: the current timestamp, today's date and the weekday. Due dates, "
    "overdue flags and new records are all measured against this clock.",
)
def get_clock(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Return ``{now, today, weekday, timezone}``."""
    return _clock_view(state)


@define(
    "advance_clock",
    "Move the simulated clock forward by whole days (1-30). Overdue flags, days in status and "
    "sprint days remaining follow; nothing else changes.",
    {**ACTOR, "days": integer("Days to move forward.", minimum=1, maximum=30)},
    ["actorId", "days"],
)
def advance_clock(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Advance ``state["clock"]["now"]``; the only way simulated time passes."""
    actor = acting_member(state, input)
    before = state["clock"]["now"]
    moved = datetime.fromisoformat(before.replace("Z", "+00:00")) + timedelta(days=input["days"])
    state["clock"]["now"] = moved.strftime("%Y-%m-%dT%H:%M:%SZ")
    detail = f"Clock {before} -> {state['clock']['now']}"
    audit_id = audit(state, actor["id"], "advance_clock", "clock", "clock", detail)
    return {"updated": _clock_view(state), "auditId": audit_id}
