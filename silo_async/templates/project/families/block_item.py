"""block-item: one item waits for another; the link is recorded and the board tells the truth.

The agent must find both items by title, record which blocks which (the right way round), and
— when the waiting item is already being worked on while its new blocker is not done — move it
to Blocked, the only honest status for it. An item not yet started stays where it is.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..state import State, is_closed, is_done
from ._common import as_actor, team_of

__all__ = ["family"]


def _linked(world: State, a: str, b: str) -> bool:
    """Whether a path of links already joins ``a`` and ``b`` (either way): no new link then."""
    edges: dict[str, set[str]] = {}
    for dep in world["dependencies"].values():
        edges.setdefault(dep["blockerId"], set()).add(dep["blockedId"])
        edges.setdefault(dep["blockedId"], set()).add(dep["blockerId"])
    seen, stack = set(), [a]
    while stack:
        current = stack.pop()
        if current == b:
            return True
        if current not in seen:
            seen.add(current)
            stack.extend(edges.get(current, ()))
    return False


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """Two items of one project that are not linked yet; the waiting one open."""
    items = sorted_by_id(world["workItems"])
    pairs = [
        (blocked, blocker)
        for blocked in items
        if not is_closed(world, blocked)
        and world["projects"][blocked["projectId"]]["status"] == "active"
        for blocker in items
        if blocker["projectId"] == blocked["projectId"]
        and blocker["id"] != blocked["id"]
        and not is_closed(world, blocker)
        and not _linked(world, blocked["id"], blocker["id"])
    ]
    if not pairs:
        raise silo.NoInstance("no two open items of an active project are unlinked")
    blocked, blocker = rng.choice(pairs)
    project = world["projects"][blocked["projectId"]]
    actor = rng.choice(team_of(world, project["teamId"]))
    started = blocked["statusId"] == "in_progress" and not is_done(world, blocker)
    return {
        "blocked": blocked["title"],
        "blockedId": blocked["id"],
        "blocker": blocker["title"],
        "blockerId": blocker["id"],
        "project": project["name"],
        "actor": actor["name"],
        "actorId": actor["id"],
        "toBlocked": started,
    }


def instruction(p: Mapping[str, Any]) -> str:
    """Titles only: the agent finds the items."""
    return (
        f'I\'m {p["actor"]}. In {p["project"]}, "{p["blocked"]}" cannot be finished until '
        f'"{p["blocker"]}" is done. Record that dependency. If "{p["blocked"]}" is already '
        "in progress, move it to Blocked; otherwise leave its status as it is. Do it as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """The link, then the status when work had started."""
    actor = p["actorId"]
    calls = [
        silo.Call(
            "add_dependency",
            {"blockerId": p["blockerId"], "blockedId": p["blockedId"], "actorId": actor},
        )
    ]
    if p["toBlocked"]:
        calls.append(
            silo.Call(
                "transition_work_item",
                {"workItemId": p["blockedId"], "toStatusId": "blocked", "actorId": actor},
            )
        )
    return calls


family = silo.TaskFamily(
    id="block-item",
    title="Record that one item blocks another",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD"),
)
