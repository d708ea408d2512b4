"""The clock tools: read the simulated clock, and move it forward on purpose.

The clock is the only "now" a world knows (nothing in a world reads the wall clock); it moves
only when :data:`advance_clock` is called.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from .._errors import ToolError
from ._audit import audit
from ._dates import STAMP, now, parse_date, today
from ._define import define_tool
from ._fields import Input
from ._kinds import integer, string

__all__ = ["MAX_ADVANCE_DAYS", "advance_clock", "get_current_time"]

#: The furthest one ``advance_clock`` call moves the clock.
MAX_ADVANCE_DAYS = 365


def _view(state: Mapping[str, Any]) -> dict[str, Any]:
    day = today(state)
    return {
        "now": now(state),
        "today": day,
        "weekday": parse_date(day).strftime("%A"),
        "timezone": state["clock"].get("timezone", "UTC"),
    }


@define_tool(
    "get_current_time",
    "The current simulated date and time (UTC). Due dates, ages and overdue flags are all "
    "measured against it.",
)
def get_current_time(state: Any, input: dict[str, Any]) -> dict[str, Any]:
    """``{now, today, weekday, timezone}``."""
    return _view(state)


class _Advance(Input):
    days = integer(
        "Days to move forward (default 0).", minimum=0, maximum=MAX_ADVANCE_DAYS, default=0
    )
    hours = integer("Hours to move forward (default 0).", minimum=0, maximum=23, default=0)
    reason = string("Why time is moving, for the audit log.", default=None)


@define_tool(
    "advance_clock",
    f"Move the simulated clock forward by whole days (at most {MAX_ADVANCE_DAYS}) and hours. "
    "Ages, due dates and overdue flags follow; nothing else changes by itself.",
    _Advance,
)
def advance_clock(state: Any, args: _Advance) -> dict[str, Any]:
    """Advance ``state["clock"]["now"]``, audited as the ``system`` actor."""
    days, hours = args.days, args.hours
    if days == 0 and hours == 0:
        raise ToolError(
            "invalid_input",
            "Give a positive number of days or hours to move the clock by.",
            {"fields": ["days", "hours"]},
        )
    before = now(state)
    moved = dt.datetime.strptime(before, STAMP) + dt.timedelta(days=days, hours=hours)
    state["clock"]["now"] = moved.strftime(STAMP)
    reason = args.reason  # read after the clock moved, as it always has been
    detail = f"Clock moved {days} day(s) and {hours} hour(s)" + (f": {reason}." if reason else ".")
    change = {"field": "now", "from": before, "to": now(state)}
    audit_id = audit(state, "system", "advance_clock", "clock", "clock", detail, [change])
    return {"previous": before, **_view(state), "auditId": audit_id}
