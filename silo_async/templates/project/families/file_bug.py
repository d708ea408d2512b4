"""file-bug: a bug report becomes a work item, in the current sprint only if it fits.

The agent hears a title, a severity in words and an estimate; it must find the project and the
assignee by name, and decide where the item goes: into the project's active sprint when both
the sprint's point budget and the assignee's remaining capacity allow, else into the backlog —
still assigned and due — which is what a lead would do rather than break a budget.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

from ..state import State, remaining_capacity, sprint_committed_points
from ._common import active_sprint_of, as_actor, team_of

__all__ = ["family"]

_TITLES = (
    "Export times out for large manifests",
    "Login loop after password reset",
    "Totals row ignores filtered rows",
    "Date picker shows the wrong week",
    "Retry storm after a gateway restart",
    "Search misses accented names",
    "CSV header order changes between runs",
    "Session cookie not marked secure",
    "Notifications sent twice on retry",
    "Map pins drift at high zoom",
    "Memory leak in the polling worker",
    "Time zone lost when copying an item",
    "Pagination skips the last page",
    "Dark mode hides error banners",
    "Upload progress stuck at 99%",
    "Stale cache after a config change",
    "Negative durations in the audit view",
    "Keyboard focus lost in dialogs",
    "Wrong currency symbol on receipts",
    "Health check passes while the queue is down",
)
#: How people say how bad a bug is, per priority.
_SEVERITY = {
    "low": "a minor annoyance",
    "medium": "a normal bug",
    "high": "a serious bug",
    "urgent": "a production emergency",
}
_POINTS = (1, 2, 3, 5)


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A project with an active sprint, a bug, who reports it, who gets it and where it goes."""
    projects = [
        p
        for p in sorted_by_id(world["projects"])
        if p["status"] == "active" and active_sprint_of(world, p["id"]) is not None
    ]
    if not projects:
        raise silo.NoInstance("no active project has an active sprint")
    project = rng.choice(projects)
    sprint = active_sprint_of(world, project["id"])
    assert sprint is not None
    people = team_of(world, project["teamId"])
    if len(people) < 2:
        raise silo.NoInstance(f"{project['id']}'s team has fewer than two members left")
    reporter, assignee = rng.sample(people, 2)
    points, priority = rng.choice(_POINTS), rng.choice(sorted(_SEVERITY))
    fits = (
        sprint_committed_points(world, sprint["id"]) + points <= int(sprint["pointBudget"])
        and remaining_capacity(world, assignee["id"]) >= points
    )
    return {
        "project": project["name"],
        "projectId": project["id"],
        "title": rng.choice(_TITLES),
        "priority": priority,
        "points": points,
        "actor": reporter["name"],
        "actorId": reporter["id"],
        "assignee": assignee["name"],
        "assigneeId": assignee["id"],
        "sprintId": sprint["id"] if fits else None,
        "due": add_days(today(world), rng.randint(2, 20)),
    }


def instruction(p: Mapping[str, Any]) -> str:
    """The reporter's words: severity, not the priority's name."""
    return (
        f"I'm {p['actor']}. I found a bug in {p['project']}: \"{p['title']}\". It's "
        f"{_SEVERITY[p['priority']]}, about {p['points']} points of work. File it as a bug, "
        f"assign it to {p['assignee']} and make it due {p['due']}. Put it in the project's "
        "current sprint if the sprint's point budget and their capacity allow; otherwise leave "
        "it in the backlog. File it as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """One creation, with every field set."""
    item: dict[str, Any] = {
        "projectId": p["projectId"],
        "title": p["title"],
        "type": "bug",
        "points": p["points"],
        "priority": p["priority"],
        "assigneeId": p["assigneeId"],
        "dueDate": p["due"],
        "actorId": p["actorId"],
    }
    if p["sprintId"] is not None:
        item["sprintId"] = p["sprintId"]
    return [silo.Call("create_work_item", item)]


family = silo.TaskFamily(
    id="file-bug",
    title="File a bug where it fits",
    difficulty="easy",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD"),
)
