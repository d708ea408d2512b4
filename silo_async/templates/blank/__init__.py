"""Blank environment: an empty world to grow step by step.

The entrypoint exports the three things the runtime loads: ``create_state`` (a fresh world per
rollout), ``bind_tools`` (the tools closed over one world) and ``verifiers``, and may export
``families`` (task families, generating tasks ``FAMILY#SEED``) and ``vary`` (a world's surface
changed per instance). Tasks are discovered from ``tasks/*.json``; tools, verifiers and families
are only what their registries list.
"""

from __future__ import annotations

import silo_async as silo

from .environment import create_state
from .families import families
from .state import State
from .tools import tools
from .verifiers import verifiers

__all__ = ["State", "bind_tools", "create_state", "families", "verifiers"]


def bind_tools(state: State) -> list[silo.BoundTool]:
    """The runtime tools for one world, in registry order."""
    return silo.bind_tools(state, tools)
