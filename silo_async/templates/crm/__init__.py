"""CRM: a B2B software sales team with a departed rep, stalled deals and duplicate records.

Quillfeather Labs sells laboratory software. Its sales organisation (a director, five account
executives — one of whom has just left —, an SDR and sales ops) works accounts, contacts, leads
and a staged pipeline on a simulated clock. The seed is deliberately messy: a deactivated rep
still owns accounts, deals, a lead and follow-ups; deals have stalled; two are past their close
date; a lead conversion created a duplicate contact; a qualified lead belongs to a company that is
already a customer under a slightly different name.

The entrypoint exports what the runtime loads: ``create_state`` (a fresh world per rollout),
``bind_tools`` (the tools closed over one world) and ``verifiers``. Tasks are discovered from
``tasks/*.json``; tools and verifiers are only what their registries list.
"""

from __future__ import annotations

import silo_async as silo

from .environment import create_state
from .state import State
from .tools import tools
from .verifiers import verifiers

__all__ = ["State", "bind_tools", "create_state", "tools", "verifiers"]


def bind_tools(state: State) -> list[silo.BoundTool]:
    """The runtime tools for one world, in registry order."""
    return silo.bind_tools(state, tools)
