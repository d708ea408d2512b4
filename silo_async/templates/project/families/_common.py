"""What the project tracker's families share: who is still here, and who made the changes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.grade import written_by
from silo_async.world.tools import sorted_by_id

from ..state import Record, State, is_departed

__all__ = ["active_sprint_of", "as_actor", "present", "team_of"]


def present(world: State) -> list[Record]:
    """Members who have not left, in id order."""
    return [m for m in sorted_by_id(world["members"]) if not is_departed(m)]


def team_of(world: State, team_id: str | None) -> list[Record]:
    """The members of a team who are still here."""
    return [m for m in present(world) if m["teamId"] == team_id]


def active_sprint_of(world: State, project_id: str) -> Record | None:
    """The project's active sprint, if it has one."""
    for sprint in sorted_by_id(world["sprints"]):
        if sprint["projectId"] == project_id and sprint["status"] == "active":
            return sprint
    return None


def as_actor(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """``checks`` of a family whose params name the actor (``actor``, ``actorId``)."""
    label = f"every change was made as {p['actor']}"
    return [written_by(final, initial, p["actorId"], label=label)]
