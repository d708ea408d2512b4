"""Projections: where derived values become visible to the agent (it never sees the state)."""

from __future__ import annotations

from typing import Any

from silo_async import world as w

from ..state import (
    Record,
    State,
    hours_for_item,
    is_blocked,
    is_closed,
    is_departed,
    is_overdue,
    member_load,
    over_capacity_by,
    remaining_capacity,
    sprint_committed_points,
    sprint_delivered_points,
    sprint_over_budget_by,
    sprint_remaining_points,
    unresolved_blockers,
)

__all__ = ["item_summary", "member_summary", "sprint_summary"]


def member_summary(state: State, member: Record) -> dict[str, Any]:
    """A member with their active-sprint load and remaining capacity."""
    return {
        **member,
        "active": not is_departed(member),
        "loadPoints": member_load(state, member["id"]),
        "remainingCapacityPoints": remaining_capacity(state, member["id"]),
        "overCapacityBy": over_capacity_by(state, member["id"]),
    }


def item_summary(state: State, item: Record) -> dict[str, Any]:
    """A work item with its computed blocked/overdue flags and hours."""
    return {
        **item,
        "statusName": state["workflowStates"][item["statusId"]]["name"],
        "closed": is_closed(state, item),
        "blocked": is_blocked(state, item),
        "unresolvedBlockerIds": unresolved_blockers(state, item["id"]),
        "overdue": is_overdue(state, item),
        "daysInStatus": w.clock.days_between(item["statusChangedOn"], w.clock.today(state)),
        "hoursLogged": hours_for_item(state, item["id"]),
    }


def sprint_summary(state: State, sprint: Record) -> dict[str, Any]:
    """A sprint with committed, delivered and remaining points and its budget position."""
    return {
        **sprint,
        "committedPoints": sprint_committed_points(state, sprint["id"]),
        "deliveredPoints": sprint_delivered_points(state, sprint["id"]),
        "remainingPoints": sprint_remaining_points(state, sprint["id"]),
        "overBudgetBy": sprint_over_budget_by(state, sprint["id"]),
        "daysRemaining": max(0, w.clock.days_between(w.clock.today(state), sprint["endDate"])),
    }
