"""What the ERP families share: who may do a kind of work, and who made the changes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.grade import written_by
from silo_async.world.tools import sorted_by_id

from ..state import Record, State, full_name, has_permission

__all__ = ["as_actor", "money", "name_of", "users_who"]


def users_who(world: State, area: str) -> list[Record]:
    """Active users whose role works in ``area`` (``policies.permissions``), in id order."""
    return [
        u for u in sorted_by_id(world["users"]) if u["active"] and has_permission(world, u, area)
    ]


def name_of(user: Mapping[str, Any]) -> str:
    """A user's full name."""
    return full_name(user)


def money(amount: float) -> str:
    """``€1,234.50`` — how the instruction and the answers say an amount."""
    return f"€{amount:,.2f}"


def as_actor(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """``checks`` of a family whose params name the actor (``actor``, ``actorId``)."""
    label = f"every change was made as {p['actor']}"
    return [written_by(final, initial, p["actorId"], label=label)]
