"""Support: a mobile carrier's customer chat, where the customer holds the phone.

Larkspur Mobile, an Irish carrier: twenty customers with twenty-three lines, their SIMs, plans,
roaming passes, bills, cards and payments, cases, fraud holds and network incidents, on a
simulated clock. Every task is a conversation: the customer opens it, knows what the world does
not show (their security PIN, where they are, what their screen says, the card they want to use,
the number on their new SIM) and holds their own phone and banking app: the agent can ask them to
switch off airplane mode, type an APN, enable data roaming, restart, read a texted code or
approve a payment, and only they can do it. The seed is messy on purpose: a phone left in
airplane mode, a wrong APN, a roaming bar, a line suspended for an unpaid bill, a data boost
charged twice, a bill at the old plan's price, a duplicate line, a fraud hold, an outage.

What the runtime loads: ``create_state`` builds a fresh world from ``data/*.json`` for each
rollout, ``bind_tools`` closes the tools listed in ``tools/__init__.py`` over it, and
``verifiers`` is the list in ``verifiers/__init__.py``; the tasks are the files in ``tasks/``.
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
