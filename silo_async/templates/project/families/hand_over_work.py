"""hand-over-work: a member changes teams; their open work in the old team stays there.

The member moves to the new team, and each of their open items in projects of the team they
leave goes to the one colleague named — who must have the capacity for the items in active
sprints (sampling picks a colleague who has) — and those without a due date get the date the
colleague is given. Items in other teams' projects, and closed items, keep their assignee:
history is not rewritten.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

from ..state import (
    Record,
    State,
    active_sprint_ids,
    open_items_for_member,
    remaining_capacity,
    teams_led_by,
)
from ._common import as_actor, present, team_of

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A member with open work in their team's projects, a new team, an heir and who acts."""
    active = set(active_sprint_ids(world))
    choices: list[tuple[Record, list[str], list[Record]]] = []
    for member in present(world):
        if member["teamId"] is None or teams_led_by(world, member["id"]):
            continue
        projects = {p["id"] for p in world["projects"].values() if p["teamId"] == member["teamId"]}
        work = [i for i in open_items_for_member(world, member["id"]) if i["projectId"] in projects]
        load = sum(int(i["points"]) for i in work if i.get("sprintId") in active)
        heirs = [
            m
            for m in team_of(world, member["teamId"])
            if m["id"] != member["id"] and remaining_capacity(world, m["id"]) >= load
        ]
        if work and heirs:
            choices.append((member, [i["id"] for i in work], heirs))
    if not choices:
        raise silo.NoInstance("nobody with open work has a colleague with room for it")
    member, items, heirs = rng.choice(choices)
    heir = rng.choice(heirs)
    team = rng.choice([t for t in sorted_by_id(world["teams"]) if t["id"] != member["teamId"]])
    actor = rng.choice([m for m in present(world) if m["role"] in ("lead", "manager")])
    return {
        "member": member["name"],
        "memberId": member["id"],
        "team": team["name"],
        "teamId": team["id"],
        "heir": heir["name"],
        "heirId": heir["id"],
        "actor": actor["name"],
        "actorId": actor["id"],
        "items": items,
        "undated": [i for i in items if world["workItems"][i]["dueDate"] is None],
        "due": add_days(today(world), rng.randint(5, 30)),
    }


def instruction(p: Mapping[str, Any]) -> str:
    """Names only."""
    return (
        f"I'm {p['actor']}. {p['member']} is joining the {p['team']} team. Move them to that "
        f"team, and give every open item of theirs in their current team's projects to "
        f"{p['heir']}, and give the ones that have no due date a due date of {p['due']}. Their "
        "closed items stay as they are. Make the changes as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """The move, then each item to the colleague."""
    actor = p["actorId"]
    calls = [
        silo.Call(
            "move_member_to_team",
            {"memberId": p["memberId"], "teamId": p["teamId"], "actorId": actor},
        )
    ]
    calls += [
        silo.Call(
            "assign_work_item", {"workItemId": item, "memberId": p["heirId"], "actorId": actor}
        )
        for item in p["items"]
    ]
    calls += [
        silo.Call("set_due_date", {"workItemId": item, "dueDate": p["due"], "actorId": actor})
        for item in p["undated"]
    ]
    return calls


family = silo.TaskFamily(
    id="hand-over-work",
    title="Move a member to another team and hand their work over",
    difficulty="hard",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD"),
)
