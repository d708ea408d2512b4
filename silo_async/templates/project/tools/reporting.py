"""Reporting: read-only roll-ups computed from the facts on every call."""

from __future__ import annotations

from typing import Any

from silo_async import world as w

from ..state import (
    State,
    blocked_item_ids,
    hours_for_project,
    is_closed,
    is_departed,
    is_overdue,
    items_in_sprint,
    sprint_committed_points,
    sprint_delivered_points,
    sprint_over_budget_by,
    unresolved_blockers,
)
from .helpers import check_filters, require
from .views import item_summary, member_summary, sprint_summary

__all__ = [
    "blocked_items_report",
    "member_load_report",
    "overdue_items_report",
    "project_time_report",
    "sprint_budget_report",
    "sprint_report",
    "velocity_report",
]


class _Sprint(w.Input):
    sprintId = w.fields.string("Sprint id.", raw=True)


@w.define_tool(_Sprint)
def sprint_report(state: State, args: _Sprint) -> dict[str, Any]:
    """Burn-down view of one sprint: committed, delivered and remaining points, points by workflow
    state, days remaining and the open items with their blocked flags.
    """
    sprint = require(state, "sprints", args.sprintId)
    items = items_in_sprint(state, sprint["id"])
    by_status: dict[str, int] = {}
    for item in items:
        by_status[item["statusId"]] = by_status.get(item["statusId"], 0) + int(item["points"])
    summary = sprint_summary(state, sprint)
    committed, delivered = summary["committedPoints"], summary["deliveredPoints"]
    return {
        **summary,
        "pointsByStatus": by_status,
        "percentComplete": w.amounts.round_half_up(100 * delivered / committed, 2)
        if committed
        else 0.0,
        "openItems": [item_summary(state, i) for i in items if not is_closed(state, i)],
    }


class _LoadFilters(w.Input):
    teamId = w.fields.string("Only members of this team.", default=None, raw=True)
    activeOnly = w.fields.boolean("Leave out members who have departed.", default=False)


@w.define_tool(_LoadFilters)
def member_load_report(state: State, args: _LoadFilters) -> dict[str, Any]:
    """Each member's active-sprint load against their sprint capacity: load, remaining capacity, how
    far over capacity, and utilisation percent.
    """
    check_filters(state, args, "teamId")
    rows = []
    for member in state["members"].values():
        if args.teamId not in (None, member["teamId"]):
            continue
        if args.activeOnly and is_departed(member):
            continue
        summary = member_summary(state, member)
        capacity = int(member["sprintCapacityPoints"])
        load = summary["loadPoints"]
        rows.append(
            {
                "memberId": member["id"],
                "name": member["name"],
                "teamId": member["teamId"],
                "active": summary["active"],
                "sprintCapacityPoints": capacity,
                "loadPoints": load,
                "remainingCapacityPoints": summary["remainingCapacityPoints"],
                "overCapacityBy": summary["overCapacityBy"],
                "utilisationPercent": w.amounts.round_half_up(100 * load / capacity, 2)
                if capacity
                else None,
            }
        )
    return {"total": len(rows), "results": rows}


def _item_rows(rows: list[dict[str, Any]], points_key: str) -> dict[str, Any]:
    """A report on work items: how many, their points together under ``points_key``, the rows."""
    return {"count": len(rows), points_key: sum(int(r["points"]) for r in rows), "results": rows}


#: The project filter of the reports on work items.
_PROJECT = w.fields.string("Only this project.", default=None, raw=True)


class _ByProject(w.Input):
    projectId = _PROJECT


@w.define_tool(_ByProject)
def blocked_items_report(state: State, args: _ByProject) -> dict[str, Any]:
    """Open items waiting on at least one blocker that is not done (computed from the dependencies,
    not from the stored status), with their unresolved blockers.
    """
    check_filters(state, args, "projectId")
    ids = blocked_item_ids(state, args.projectId)
    items = state["workItems"]
    rows = [
        {
            "workItemId": i,
            "title": items[i]["title"],
            "statusId": items[i]["statusId"],
            "points": items[i]["points"],
            "blockedBy": [
                {"workItemId": b, "statusId": items[b]["statusId"]}
                for b in unresolved_blockers(state, i)
            ],
        }
        for i in ids
    ]
    return _item_rows(rows, "blockedPoints")


class _Overdue(w.Input):
    projectId = _PROJECT
    activeAssigneesOnly = w.fields.boolean(
        "Only items assigned to a member who has not departed.", default=False
    )


@w.define_tool(_Overdue)
def overdue_items_report(state: State, args: _Overdue) -> dict[str, Any]:
    """Open items whose due date has passed, with days overdue and whether the assignee is still
    active.
    """
    check_filters(state, args, "projectId")
    members = state["members"]
    rows = []
    for item in state["workItems"].values():
        if not is_overdue(state, item) or args.projectId not in (None, item["projectId"]):
            continue
        assignee = members.get(item.get("assigneeId") or "")
        active = assignee is not None and not is_departed(assignee)
        if args.activeAssigneesOnly and not active:
            continue
        rows.append(
            {
                "workItemId": item["id"],
                "title": item["title"],
                "projectId": item["projectId"],
                "points": item["points"],
                "dueDate": item["dueDate"],
                "daysOverdue": w.clock.days_between(item["dueDate"], w.clock.today(state)),
                "assigneeId": item.get("assigneeId"),
                "assigneeActive": active,
            }
        )
    return _item_rows(rows, "overduePoints")


#: The project filter of the reports on sprints.
_SPRINTS_OF = w.fields.string("Only this project's sprints.", default=None, raw=True)


class _Velocity(w.Input):
    projectId = _SPRINTS_OF
    status = w.fields.enum(
        "Only sprints in this status.", ("planned", "active", "completed"), default=None
    )


@w.define_tool(_Velocity)
def velocity_report(state: State, args: _Velocity) -> dict[str, Any]:
    """Per sprint (sorted by start date): committed, delivered and carried-over points, plus the
    average delivered by completed sprints.
    """
    check_filters(state, args, "projectId")
    sprints = sorted(state["sprints"].values(), key=lambda s: (s["startDate"], s["id"]))
    rows = []
    for sprint in sprints:
        if args.projectId not in (None, sprint["projectId"]):
            continue
        if args.status not in (None, sprint["status"]):
            continue
        unfinished = [i for i in items_in_sprint(state, sprint["id"]) if not is_closed(state, i)]
        rows.append(
            {
                "sprintId": sprint["id"],
                "name": sprint["name"],
                "projectId": sprint["projectId"],
                "status": sprint["status"],
                "committedPoints": sprint_committed_points(state, sprint["id"]),
                "deliveredPoints": sprint_delivered_points(state, sprint["id"]),
                "unfinishedPoints": sum(int(i["points"]) for i in unfinished),
                "unfinishedIds": [i["id"] for i in unfinished],
            }
        )
    done = [r["deliveredPoints"] for r in rows if r["status"] == "completed"]
    return {
        "total": len(rows),
        "results": rows,
        "averageDeliveredPoints": w.amounts.round_half_up(sum(done) / len(done), 2)
        if done
        else None,
    }


class _Project(w.Input):
    projectId = w.fields.string("Project id.", raw=True)


@w.define_tool(_Project)
def project_time_report(state: State, args: _Project) -> dict[str, Any]:
    """Hours logged on one project: the total, per member and per work item."""
    project = require(state, "projects", args.projectId)
    items = state["workItems"]
    by_member: dict[str, float] = {}
    by_item: dict[str, float] = {}
    for log in state["timeLogs"].values():
        if items[log["workItemId"]]["projectId"] != project["id"]:
            continue
        by_member[log["memberId"]] = w.amounts.round_half_up(
            by_member.get(log["memberId"], 0.0) + log["hours"], 2
        )
        by_item[log["workItemId"]] = w.amounts.round_half_up(
            by_item.get(log["workItemId"], 0.0) + log["hours"], 2
        )
    return {
        "projectId": project["id"],
        "totalHours": hours_for_project(state, project["id"]),
        "byMember": dict(sorted(by_member.items())),
        "byWorkItem": dict(sorted(by_item.items())),
    }


class _Budgets(w.Input):
    projectId = _SPRINTS_OF


@w.define_tool(_Budgets)
def sprint_budget_report(state: State, args: _Budgets) -> dict[str, Any]:
    """Committed points against the point budget for every planned and active sprint.

    Budget position of the sprints that can still change.
    """
    check_filters(state, args, "projectId")
    rows = [
        {
            "sprintId": s["id"],
            "name": s["name"],
            "status": s["status"],
            "pointBudget": s["pointBudget"],
            "committedPoints": sprint_committed_points(state, s["id"]),
            "overBudgetBy": sprint_over_budget_by(state, s["id"]),
        }
        for s in state["sprints"].values()
        if s["status"] != "completed" and args.projectId in (None, s["projectId"])
    ]
    return {"total": len(rows), "results": rows}
