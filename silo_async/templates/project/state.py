"""The project tracker's world: the ``State`` type and pure domain helpers.

Data files hold facts only. Everything derived — story-point totals, member load, remaining
capacity, blocked and overdue flags, logged hours — is computed here, on read, from those facts.
Tools and verifiers share these helpers, so a verifier's expected answer is always the value the
tools would have shown on the initial world.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from silo_async.world import Records, WorldState
from silo_async.world.amounts import round_half_up
from silo_async.world.clock import today

__all__ = [
    "PRIORITY_RANK",
    "Record",
    "State",
    "active_sprint_ids",
    "blocked_item_ids",
    "closed_on",
    "hours_by_project",
    "hours_for_item",
    "hours_for_member",
    "hours_for_project",
    "is_blocked",
    "is_closed",
    "is_departed",
    "is_done",
    "is_overdue",
    "items_in_sprint",
    "logs_after_close",
    "member_load",
    "open_items_for_member",
    "over_capacity_by",
    "overdue_item_ids",
    "remaining_capacity",
    "sprint_committed_points",
    "sprint_delivered_points",
    "sprint_over_budget_by",
    "sprint_remaining_points",
    "teams_led_by",
    "unresolved_blockers",
]

Record = dict[str, Any]

#: Priority order, lowest first: used to pick "lowest priority first".
PRIORITY_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2, "urgent": 3}


class State(WorldState):
    """The whole world: the toolkit's clock, audit log and counters, and these collections.

    Collections are maps of id to record (insertion order = id order).
    """

    teams: Records[Record]
    members: Records[Record]
    projects: Records[Record]
    sprints: Records[Record]
    workflowStates: Records[Record]
    workItems: Records[Record]
    dependencies: Records[Record]
    comments: Records[Record]
    timeLogs: Records[Record]


# --- members -------------------------------------------------------------------------------------


def is_departed(member: Record) -> bool:
    """A member with a departure date has left and can neither act nor take work."""
    return member.get("departedOn") is not None


# --- workflow ------------------------------------------------------------------------------------


def is_done(state: State, item: Record) -> bool:
    """The item sits in a workflow state flagged ``isDone``."""
    return bool(state["workflowStates"][item["statusId"]]["isDone"])


def is_closed(state: State, item: Record) -> bool:
    """Done or cancelled: no more work, no more time."""
    return bool(state["workflowStates"][item["statusId"]]["isClosed"])


def closed_on(state: State, item: Record) -> str | None:
    """The date a closed item entered its closed state, else None."""
    return str(item["statusChangedOn"]) if is_closed(state, item) else None


def unresolved_blockers(state: State, item_id: str) -> list[str]:
    """Ids of the items blocking ``item_id`` that are not done, sorted."""
    items = state["workItems"]
    found = {
        dep["blockerId"]
        for dep in state["dependencies"].values()
        if dep["blockedId"] == item_id
        and dep["blockerId"] in items
        and not is_done(state, items[dep["blockerId"]])
    }
    return sorted(found)


def is_blocked(state: State, item: Record) -> bool:
    """Open and waiting on at least one blocker that is not done.

    This is computed, so it can disagree with an item whose stored status says ``blocked``.
    """
    return not is_closed(state, item) and bool(unresolved_blockers(state, item["id"]))


def blocked_item_ids(state: State, project_id: str | None = None) -> list[str]:
    """Ids of every blocked item (optionally in one project), sorted."""
    return [
        item["id"]
        for item in state["workItems"].values()
        if (project_id is None or item["projectId"] == project_id) and is_blocked(state, item)
    ]


def is_overdue(state: State, item: Record) -> bool:
    """Open, with a due date strictly before today."""
    due = item.get("dueDate")
    return not is_closed(state, item) and due is not None and due < today(state)


def overdue_item_ids(state: State) -> list[str]:
    """Ids of every overdue item, sorted."""
    return [item["id"] for item in state["workItems"].values() if is_overdue(state, item)]


# --- sprints and capacity ------------------------------------------------------------------------


def items_in_sprint(state: State, sprint_id: str) -> list[Record]:
    """The work items attached to a sprint, in id order."""
    return [item for item in state["workItems"].values() if item.get("sprintId") == sprint_id]


def _sprint_points(state: State, sprint_id: str, counts: Callable[[State, Record], bool]) -> int:
    """Points of the sprint's items that ``counts``."""
    return sum(int(i["points"]) for i in items_in_sprint(state, sprint_id) if counts(state, i))


def sprint_committed_points(state: State, sprint_id: str) -> int:
    """Points of every non-cancelled item in the sprint (what the budget is compared with)."""
    return _sprint_points(state, sprint_id, lambda state, item: not _is_cancelled(state, item))


def _is_cancelled(state: State, item: Record) -> bool:
    flags = state["workflowStates"][item["statusId"]]
    return bool(flags["isClosed"]) and not bool(flags["isDone"])


def sprint_delivered_points(state: State, sprint_id: str) -> int:
    """Points of the sprint's done items (its velocity)."""
    return _sprint_points(state, sprint_id, is_done)


def sprint_remaining_points(state: State, sprint_id: str) -> int:
    """Points of the sprint's open (not closed) items."""
    return _sprint_points(state, sprint_id, lambda state, item: not is_closed(state, item))


def sprint_over_budget_by(state: State, sprint_id: str) -> int:
    """How far committed points exceed the sprint's point budget (0 when within it)."""
    budget = int(state["sprints"][sprint_id]["pointBudget"])
    return max(0, sprint_committed_points(state, sprint_id) - budget)


def active_sprint_ids(state: State) -> list[str]:
    """Ids of the sprints whose status is ``active``."""
    return [s["id"] for s in state["sprints"].values() if s["status"] == "active"]


def open_items_for_member(state: State, member_id: str) -> list[Record]:
    """Every open (not closed) item assigned to the member, in id order."""
    return [
        item
        for item in state["workItems"].values()
        if item.get("assigneeId") == member_id and not is_closed(state, item)
    ]


def member_load(state: State, member_id: str) -> int:
    """Points of the member's open items in active sprints: what capacity is measured against."""
    active = set(active_sprint_ids(state))
    return sum(
        int(item["points"])
        for item in open_items_for_member(state, member_id)
        if item.get("sprintId") in active
    )


def remaining_capacity(state: State, member_id: str) -> int:
    """Sprint capacity minus load (negative when over capacity)."""
    capacity = int(state["members"][member_id]["sprintCapacityPoints"])
    return capacity - member_load(state, member_id)


def over_capacity_by(state: State, member_id: str) -> int:
    """Points by which the member's load exceeds their capacity (0 when within it)."""
    return max(0, -remaining_capacity(state, member_id))


def teams_led_by(state: State, member_id: str) -> list[str]:
    """Ids of the teams the member leads, in id order."""
    return [t["id"] for t in state["teams"].values() if t["leadId"] == member_id]


# --- time ----------------------------------------------------------------------------------------


def hours_for_item(state: State, item_id: str) -> float:
    """Hours logged against one item."""
    return round_half_up(
        sum(float(t["hours"]) for t in state["timeLogs"].values() if t["workItemId"] == item_id),
        2,
    )


def hours_for_member(state: State, member_id: str) -> float:
    """Hours one member has logged."""
    return round_half_up(
        sum(float(t["hours"]) for t in state["timeLogs"].values() if t["memberId"] == member_id),
        2,
    )


def hours_for_project(state: State, project_id: str) -> float:
    """Hours logged against the project's items."""
    items = state["workItems"]
    return round_half_up(
        sum(
            float(t["hours"])
            for t in state["timeLogs"].values()
            if t["workItemId"] in items and items[t["workItemId"]]["projectId"] == project_id
        ),
        2,
    )


def hours_by_project(state: State) -> dict[str, float]:
    """Hours per project id, for every project."""
    return {pid: hours_for_project(state, pid) for pid in state["projects"]}


def logs_after_close(state: State) -> list[str]:
    """Ids of time logs dated after their item was closed (the day of closing still counts)."""
    found: list[str] = []
    for log in state["timeLogs"].values():
        item = state["workItems"].get(log["workItemId"])
        closed = closed_on(state, item) if item is not None else None
        if closed is not None and log["date"] > closed:
            found.append(log["id"])
    return found
