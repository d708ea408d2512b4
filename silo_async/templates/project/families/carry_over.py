"""carry-over: some members' important unfinished items move from the ending sprint to the next.

Unfinished means open (not done, not cancelled), important means at or above a priority. The
next sprint is the project's planned one, and its point budget holds: items go in the order a
lead would pick — highest priority first, then the smaller estimate, then the older item — and
one that would break the budget (less the points the lead keeps free) stays where it is (the
next, smaller one may still fit).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..state import PRIORITY_RANK, State, is_closed, items_in_sprint, sprint_committed_points
from ._common import as_actor, present

__all__ = ["family"]


def _next_sprint(world: State, project_id: str) -> dict[str, Any] | None:
    planned = [
        s
        for s in sorted_by_id(world["sprints"])
        if s["projectId"] == project_id and s["status"] == "planned"
    ]
    return min(planned, key=lambda s: (s["startDate"], s["id"])) if planned else None


def _order(item: dict[str, Any]) -> tuple[int, int, str]:
    return (-PRIORITY_RANK[item["priority"]], int(item["points"]), item["id"])


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """An active sprint with a next one, members with open items in it, a bar, who decides."""
    choices = []
    for sprint in sorted_by_id(world["sprints"]):
        following = _next_sprint(world, sprint["projectId"])
        if sprint["status"] != "active" or following is None:
            continue
        open_items = [i for i in items_in_sprint(world, sprint["id"]) if not is_closed(world, i)]
        people = sorted({i["assigneeId"] for i in open_items if i["assigneeId"]})
        if people:
            choices.append((sprint, following, people, open_items))
    if not choices:
        raise silo.NoInstance("no active sprint with a planned successor has open work")
    sprint, following, people, open_items = rng.choice(choices)
    chosen = sorted(rng.sample(people, rng.randint(1, min(2, len(people)))))
    bar = rng.choice(sorted(PRIORITY_RANK, key=PRIORITY_RANK.__getitem__)[:3])
    mine = [
        i
        for i in open_items
        if i["assigneeId"] in chosen and PRIORITY_RANK[i["priority"]] >= PRIORITY_RANK[bar]
    ]
    if not mine:
        raise silo.NoInstance(f"{', '.join(chosen)} have no open {bar}-or-higher item there")
    project = world["projects"][sprint["projectId"]]
    deciders = {project["leadId"], world["teams"][project["teamId"]]["leadId"]}
    deciders |= {m["id"] for m in present(world) if m["role"] == "manager"}
    actor = world["members"][rng.choice(sorted(deciders))]
    # The lead keeps some of the next sprint's budget free for new work.
    spare = rng.choice((0, 2, 3, 5, 8))
    room = int(following["pointBudget"]) - sprint_committed_points(world, following["id"]) - spare
    moving = []
    for item in sorted(mine, key=_order):
        if int(item["points"]) <= room:
            moving.append(item["id"])
            room -= int(item["points"])
    return {
        "sprint": sprint["name"],
        "next": following["name"],
        "nextId": following["id"],
        "members": [world["members"][m]["name"] for m in chosen],
        "bar": bar,
        "spare": spare,
        "actor": actor["name"],
        "actorId": actor["id"],
        "moving": moving,
    }


def instruction(p: Mapping[str, Any]) -> str:
    """The lead's rule for what moves."""
    whose = " and ".join(p["members"])
    return (
        f"I'm {p['actor']}. {p['sprint']} is ending. Move {whose}'s unfinished items of "
        f"{p['bar']} priority or higher from it into {p['next']}, highest priority first (then "
        f"the smaller estimate, then the older item), skipping any that would take {p['next']} "
        f"over its point budget{_keeping(p['spare'])}. Leave the rest where it is. Make the "
        "changes as me."
    )


def _keeping(spare: int) -> str:
    return f" or leave it fewer than {spare} points free" if spare else ""


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Each moving item added to the next sprint, in the order picked."""
    return [
        silo.Call(
            "add_item_to_sprint",
            {"sprintId": p["nextId"], "workItemId": item, "actorId": p["actorId"]},
        )
        for item in p["moving"]
    ]


family = silo.TaskFamily(
    id="carry-over",
    title="Carry important unfinished work into the next sprint",
    difficulty="hard",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD"),
)
