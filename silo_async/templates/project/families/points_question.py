"""points-question: one figure about the board, computed from records; nothing may change.

Four questions whose answers are computed, never stored: a member's load (points of their open
items in active sprints), a sprint's delivered points (its done items), how many open items of
a project are blocked by an unfinished blocker (whatever their stored status says — the seed has
an item marked Blocked whose blocker is done), or how many open items of a project are due by a
date, overdue ones included. The answer must commit to its figure.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.grade import few_numbers
from silo_async.world.tools import sorted_by_id

from ..state import (
    State,
    blocked_item_ids,
    is_closed,
    member_load,
    sprint_delivered_points,
)
from ._common import present

__all__ = ["family"]

_FEW = 3


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A question, its subject and its answer."""
    question = rng.choice(("load", "delivered", "blocked", "due_by"))
    if question == "load":
        member = rng.choice(present(world))
        subject, answer = member["name"], member_load(world, member["id"])
    elif question == "delivered":
        sprint = rng.choice(sorted_by_id(world["sprints"]))
        subject, answer = sprint["name"], sprint_delivered_points(world, sprint["id"])
    elif question == "blocked":
        project = rng.choice(sorted_by_id(world["projects"]))
        subject, answer = project["name"], len(blocked_item_ids(world, project["id"]))
    else:
        project = rng.choice(sorted_by_id(world["projects"]))
        by = add_days(today(world), rng.randint(0, 30))
        subject, answer = project["name"], _due_by(world, project["id"], by)
    asker = rng.choice(present(world))
    out = {"question": question, "subject": subject, "asker": asker["name"], "answer": answer}
    return out | ({"by": by} if question == "due_by" else {})


def _due_by(world: State, project_id: str, by: str) -> int:
    """Open items of the project due on or before ``by`` (overdue ones included)."""
    return sum(
        1
        for item in world["workItems"].values()
        if item["projectId"] == project_id
        and not is_closed(world, item)
        and item["dueDate"] is not None
        and item["dueDate"] <= by
    )


def instruction(p: Mapping[str, Any]) -> str:
    """The question in a person's words."""
    ask = {
        "load": f"how many story points of open work does {p['subject']} carry in active sprints",
        "delivered": f"how many story points did {p['subject']} deliver (items done)",
        "blocked": (
            f"how many open items in {p['subject']} are actually blocked right now, by a "
            "blocker that isn't done"
        ),
        "due_by": (
            f"how many open items in {p['subject']} are due on or before {p.get('by')}, "
            "counting the ones already overdue"
        ),
    }[p["question"]]
    return f"I'm {p['asker']}. Quick question: {ask}? Answer with the number; change nothing."


def answer(p: Mapping[str, Any]) -> str:
    """The figure the answer must state."""
    return str(p["answer"])


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """A question changes nothing."""
    return []


def checks(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """The answer commits to a figure instead of listing every one it saw."""
    return [
        silo.check(
            f"commits to an answer (at most {_FEW} figures)", few_numbers(ctx.agent_output, _FEW)
        )
    ]


family = silo.TaskFamily(
    id="points-question",
    title="Answer a question about points and blockers",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    answer=answer,
    checks=checks,
)
