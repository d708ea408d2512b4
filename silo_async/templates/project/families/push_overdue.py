"""push-overdue: every overdue item of a project gets a new due date, each its own.

"Overdue" is computed, not stored: an open item (not done, not cancelled) due before today.
Each moves by the same number of days from its own due date — so the agent must read each due
date and add to it — and items that are not overdue, or closed, stay as they are.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days
from silo_async.world.tools import sorted_by_id

from ..state import State, is_overdue
from ._common import as_actor, present

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A project with overdue items, who moves them, and by how many days."""
    projects = []
    for project in sorted_by_id(world["projects"]):
        late = [
            i
            for i in sorted_by_id(world["workItems"])
            if i["projectId"] == project["id"] and is_overdue(world, i)
        ]
        if late and project["status"] != "archived":
            projects.append((project, late))
    if not projects:
        raise silo.NoInstance("no project has an overdue item")
    project, late = rng.choice(projects)
    leads = [project["leadId"], world["teams"][project["teamId"]]["leadId"]]
    managers = [m["id"] for m in present(world) if m["role"] == "manager"]
    actor = world["members"][rng.choice(sorted({*leads, *managers}))]
    days = rng.randint(3, 28)
    return {
        "project": project["name"],
        "actor": actor["name"],
        "actorId": actor["id"],
        "days": days,
        "moves": {i["id"]: add_days(i["dueDate"], days) for i in late},
    }


def instruction(p: Mapping[str, Any]) -> str:
    """A lead's request: a relative move, not a date."""
    return (
        f"I'm {p['actor']}. Every open item in {p['project']} that is past its due date needs "
        f"more time: push each one's due date back by {p['days']} days from the date it has "
        "now. Leave items that aren't overdue alone. Make the changes as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """One new due date per overdue item."""
    return [
        silo.Call("set_due_date", {"workItemId": item, "dueDate": due, "actorId": p["actorId"]})
        for item, due in sorted(p["moves"].items())
    ]


family = silo.TaskFamily(
    id="push-overdue",
    title="Push back a project's overdue items",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD"),
)
