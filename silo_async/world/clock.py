"""``silo_async.world.clock``: the simulated clock, the only "now" a world knows.

``state["clock"]["now"]`` is an ISO-8601 UTC timestamp; nothing in a world reads the wall clock,
and it moves only when the tool ``advance_clock`` (:mod:`silo_async.world.tools`) is called.

* :func:`now`, :func:`today`, :func:`parse_date`, :func:`add_days`, :func:`days_between`;
* :data:`MAX_ADVANCE_DAYS` (the furthest one ``advance_clock`` call moves it) and
  :class:`Clock` (what ``state["clock"]`` holds).
"""

from __future__ import annotations

from ._clock import MAX_ADVANCE_DAYS as MAX_ADVANCE_DAYS
from ._dates import add_days as add_days
from ._dates import days_between as days_between
from ._dates import now as now
from ._dates import parse_date as parse_date
from ._dates import today as today
from ._types import Clock as Clock

__all__ = [
    "MAX_ADVANCE_DAYS",
    "Clock",
    "add_days",
    "days_between",
    "now",
    "parse_date",
    "today",
]
