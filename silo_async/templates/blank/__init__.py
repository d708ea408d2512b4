"""Blank environment: an empty world to grow step by step.

The entrypoint exports the three things the runtime loads: ``create_state`` (a fresh world per
rollout), ``bind_tools`` (the tools closed over one world) and ``verifiers``. Tasks are
discovered from ``tasks/*.json``; tools and verifiers are only what their registries list.
"""

from __future__ import annotations

import silo_async as silo

from .environment import create_state
from .state import State
from .tools import tools
from .verifiers import verifiers

__all__ = ["State", "bind_tools", "create_state", "verifiers"]


def bind_tools(state: State) -> list[silo.BoundTool]:
    """The runtime tools for one world, in registry order."""
    return silo.bind_tools(state, tools)
