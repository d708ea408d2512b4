"""Project tracker template: a software team's projects, sprints, work items and time.

Kestrel Freight's three delivery teams run four projects. The seed is deliberately messy (a
departed engineer still holding work, a stale Blocked status, an over-committed engineer, a
sprint over its point budget, time logged on closed items...), and the tasks depend on it.

Exports the environment contract: ``create_state``, ``bind_tools(state)`` and ``verifiers``,
and ``families`` (``families/__init__.py``): task families whose instances ``FAMILY#SEED`` are
generated tasks.
"""

from __future__ import annotations

import silo_async as silo

from .environment import create_state
from .families import families
from .state import State
from .tools import tools
from .verifiers import verifiers

__all__ = ["State", "bind_tools", "create_state", "families", "tools", "verifiers"]


def bind_tools(state: State) -> list[silo.BoundTool]:
    """The runtime tools for one world."""
    return silo.bind_tools(state, tools)
