"""CRM: a B2B software sales team with a departed rep, stalled deals and duplicate records.

Quillfeather Labs sells laboratory software. Its sales organisation (a director, five account
executives — one of whom has just left —, an SDR and sales ops) works accounts, contacts, leads
and a staged pipeline on a simulated clock. The seed is deliberately messy: a deactivated rep
still owns accounts, deals, a lead and follow-ups; deals have stalled; two are past their close
date; a lead conversion created a duplicate contact; a qualified lead belongs to a company that is
already a customer under a slightly different name.

What the runtime loads: ``create_state`` builds a fresh world from ``data/*.json`` for each
rollout, ``bind_tools`` closes the tools listed in ``tools/__init__.py`` over it, and
``verifiers`` is the list in ``verifiers/__init__.py``; the tasks are the files in ``tasks/``,
and ``families`` (``families/__init__.py``) generate more: instances ``FAMILY#SEED``, each on a
world ``vary`` (``variation.py``) has given new names, brands and amounts.
"""

from __future__ import annotations

import silo_async as silo

from .environment import create_state
from .families import families
from .state import State
from .tools import tools
from .variation import vary
from .verifiers import verifiers

__all__ = ["State", "bind_tools", "create_state", "families", "tools", "vary", "verifiers"]


def bind_tools(state: State) -> list[silo.BoundTool]:
    """The runtime tools for one world, in registry order."""
    return silo.bind_tools(state, tools)
