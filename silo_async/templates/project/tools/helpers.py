"""Lookups, the acting member, the audit trail and the rules every write path shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import (
    Record,
    State,
    active_sprint_ids,
    is_closed,
    is_departed,
    member_load,
    sprint_committed_points,
    unresolved_blockers,
)

__all__ = [
    "ACTOR",
    "DEPENDENCY",
    "FILTER_COLLECTIONS",
    "ITEM",
    "ITEM_ID",
    "MEMBER",
    "PROJECT",
    "SPRINT",
    "TEAM",
    "TEAM_ID",
    "TIME_LOG",
    "NewLead",
    "acting_member",
    "assert_assignable",
    "assert_blockers_done",
    "assert_can_manage",
    "assert_capacity",
    "assert_item_open",
    "assert_item_writable",
    "assert_project_open",
    "assert_sprint_budget",
    "check_filters",
    "commit",
    "describe_changes",
    "new_lead",
    "require",
    "state_name",
]


def require(state: State, collection: str, record_id: str) -> Record:
    """The record with ``record_id`` in ``collection`` (``not_found`` naming both otherwise).

    A missing workflow state also lists the handful of states that exist, which saves the agent
    a lookup.
    """
    try:
        record: Record = w.records.require_record(state, collection, record_id)
    except silo.ToolError as missing:
        if collection == "workflowStates":
            missing.message += f" Known states: {', '.join(state['workflowStates'])}."
        raise
    return record


def state_name(state: State, status_id: str) -> str:
    """Human name of a workflow state, lower-cased for sentences ("in review")."""
    return str(state["workflowStates"][status_id]["name"]).lower()


def acting_member(state: State, member_id: str) -> Record:
    """The member making a change.

    Raises:
        ToolError: ``not_found`` for an unknown id, ``not_allowed`` for a departed member.
    """
    member = require(state, "members", member_id)
    _assert_still_here(member, "can no longer make changes")
    return member


def assert_assignable(member: Record, role: str = "be assigned work") -> None:
    """Work (or a lead role) can only go to a member who is still here.

    Raises:
        ToolError: ``not_allowed`` for a departed member.
    """
    _assert_still_here(member, f"cannot {role}")


def _assert_still_here(member: Record, consequence: str) -> None:
    """A departed member is refused, the message saying when they left and the ``consequence``."""
    if is_departed(member):
        raise silo.tool_error(
            "not_allowed",
            f"{member['id']} ({member['name']}) left on {member['departedOn']} and {consequence}.",
            {"memberId": member["id"], "departedOn": member["departedOn"]},
        )


class NewLead(w.Input):
    """The input of a tool that makes a member the lead of its record."""

    memberId = w.fields.string("Member id of the new lead.", raw=True)


def new_lead(call: w.Write[NewLead], role: str) -> Record:
    """The member ``memberId`` names to lead the call's record: still here and not its lead yet.

    Raises:
        ToolError: ``not_found`` for an unknown member, ``not_allowed`` for a departed one (who
            cannot ``role``), ``conflict`` when they lead the record already.
    """
    member = require(call.state, "members", call.args.memberId)
    assert_assignable(member, role)
    if call.record["leadId"] == member["id"]:
        raise silo.tool_error("conflict", f"{member['id']} already leads {call.record['id']}.")
    return member


def assert_capacity(state: State, member: Record, item: Record, sprint_id: str | None) -> None:
    """Adding ``item`` to ``member``'s active-sprint load must stay within their capacity.

    Only items in an active sprint count towards load, so backlog assignments always fit.

    Raises:
        ToolError: ``limit_exceeded`` with the load, capacity and points involved.
    """
    if sprint_id is None or sprint_id not in active_sprint_ids(state) or is_closed(state, item):
        return
    already = item.get("assigneeId") == member["id"] and item.get("sprintId") == sprint_id
    load = member_load(state, member["id"])
    extra = 0 if already else int(item["points"])
    capacity = int(member["sprintCapacityPoints"])
    if load + extra > capacity:
        raise silo.tool_error(
            "limit_exceeded",
            f"{member['id']} ({member['name']}) already carries {load} points in active "
            f"sprints against a capacity of {capacity}; {item['id']} adds {extra} more.",
            {
                "memberId": member["id"],
                "currentLoad": load,
                "sprintCapacityPoints": capacity,
                "additionalPoints": extra,
            },
        )


def assert_sprint_budget(state: State, sprint: Record, added_points: int) -> None:
    """A sprint may not be committed beyond its point budget.

    Raises:
        ToolError: ``limit_exceeded`` with the committed points, the budget and the addition.
    """
    committed = sprint_committed_points(state, sprint["id"])
    budget = int(sprint["pointBudget"])
    if committed + added_points > budget:
        raise silo.tool_error(
            "limit_exceeded",
            f"{sprint['id']} ({sprint['name']}) has {committed} of its {budget}-point budget "
            f"committed; adding {added_points} points would exceed it.",
            {
                "sprintId": sprint["id"],
                "committedPoints": committed,
                "pointBudget": budget,
                "additionalPoints": added_points,
            },
        )


def assert_project_open(project: Record, action: str) -> None:
    """Archived projects are read-only; on-hold ones take no new work.

    Raises:
        ToolError: ``invalid_state`` naming the project's status.
    """
    if project["status"] == "archived" or (action == "add" and project["status"] == "on_hold"):
        raise silo.tool_error(
            "invalid_state",
            f"Project {project['id']} ({project['name']}) is {project['status'].replace('_', ' ')}"
            f"{' and takes no new work' if action == 'add' else ' and read-only'}.",
            {"projectId": project["id"], "status": project["status"]},
        )


def assert_item_open(state: State, item: Record, rule: str) -> None:
    """A done or cancelled item refuses the change, the message naming its state and the ``rule``.

    Raises:
        ToolError: ``invalid_state``.
    """
    if is_closed(state, item):
        raise silo.tool_error(
            "invalid_state", f"{item['id']} is {state_name(state, item['statusId'])}; {rule}."
        )


def assert_item_writable(state: State, item: Record) -> None:
    """An item of an archived project cannot change.

    Raises:
        ToolError: ``invalid_state``.
    """
    assert_project_open(state["projects"][item["projectId"]], "edit")


#: The acting member, required on every change and listed first. The tracker reads its ids and
#: texts as given (schema-checked, not stripped): ``raw=True``.
ACTOR = w.Actor(
    w.fields.string("Member id of the person making the change, e.g. MEM-001.", raw=True),
    acting_member,
    first=True,
)
#: A work item's id, as the tools that name one declare it.
ITEM_ID = w.fields.string("Work item id, e.g. WI-012.", raw=True)
#: A team's id, as the tools that name one declare it.
TEAM_ID = w.fields.string("Team id, e.g. TEAM-001.", raw=True)
#: The records writes act on. A work item (or what hangs off one) of an archived project is
#: read-only, which the guards check right after the lookup.
ITEM = w.Target("workItems", "workItemId", ITEM_ID, "work_item", assert_item_writable)
SPRINT = w.Target(
    "sprints", "sprintId", w.fields.string("Sprint id, e.g. SPR-003.", raw=True), "sprint"
)
PROJECT = w.Target(
    "projects", "projectId", w.fields.string("Project id, e.g. PRJ-002.", raw=True), "project"
)
MEMBER = w.Target(
    "members", "memberId", w.fields.string("Member id, e.g. MEM-003.", raw=True), "member"
)
TEAM = w.Target("teams", "teamId", TEAM_ID, "team")
TIME_LOG = w.Target(
    "timeLogs",
    "timeLogId",
    w.fields.string("Time log id, e.g. TL-012.", raw=True),
    "time_log",
    lambda state, log: assert_item_writable(state, state["workItems"][log["workItemId"]]),
)
DEPENDENCY = w.Target(
    "dependencies",
    "dependencyId",
    w.fields.string("Dependency id, e.g. DEP-004.", raw=True),
    "dependency",
    lambda state, dep: assert_item_writable(state, state["workItems"][dep["blockedId"]]),
)

View = Callable[[State, Record], dict[str, Any]]


def commit(
    call: w.Write, view: View, detail: str, values: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Apply ``values`` to the call's record, audit ``detail``: ``{updated: view, auditId}``.

    The tracker's audit entries carry the change in ``detail`` (``Lead MEM-001 -> MEM-004``).
    """
    call.record.update(values or {})
    return {"updated": view(call.state, call.record), "auditId": call.audit(detail)}


def describe_changes(record: Record, changes: dict[str, Any]) -> str:
    """The audit detail of an update: ``field: old -> new`` for each change, comma-separated."""
    return ", ".join(f"{k}: {record[k]} -> {v}" for k, v in changes.items())


def assert_blockers_done(state: State, item: Record, target_status: str) -> None:
    """Work cannot start, go to review or finish while a blocker is unfinished.

    Raises:
        ToolError: ``invalid_state`` naming each blocker and its state.
    """
    pending = unresolved_blockers(state, item["id"])
    if not pending:
        return
    parts = [
        f"{bid}, which is {state_name(state, state['workItems'][bid]['statusId'])}"
        for bid in pending
    ]
    raise silo.tool_error(
        "invalid_state",
        f"Work item {item['id']} is blocked by {'; and by '.join(parts)}, not done; it cannot "
        f"move to {state_name(state, target_status)}.",
        {"workItemId": item["id"], "unresolvedBlockers": pending, "targetStatus": target_status},
    )


def assert_can_manage(state: State, actor: Record, project: Record) -> None:
    """Sprint turnovers and project status changes belong to the project's leadership.

    Allowed: the project lead, the lead of the owning team, or a manager.

    Raises:
        ToolError: ``not_allowed`` naming who may do it.
    """
    team = state["teams"].get(project["teamId"]) or {}
    allowed = sorted({a for a in (project["leadId"], team.get("leadId")) if a})
    if actor["id"] in allowed or actor["role"] == "manager":
        return
    raise silo.tool_error(
        "not_allowed",
        f"{actor['id']} ({actor['name']}) cannot do this for {project['id']}: only its project "
        f"lead or team lead ({', '.join(allowed)}) or a manager can.",
        {"allowed": allowed, "orRole": "manager"},
    )


#: Filter parameters of list and report tools, and the collection each must name a record in.
FILTER_COLLECTIONS = {
    "projectId": "projects",
    "sprintId": "sprints",
    "teamId": "teams",
    "assigneeId": "members",
    "memberId": "members",
    "actorId": "members",
    "workItemId": "workItems",
    "statusId": "workflowStates",
}


def check_filters(state: State, args: w.Input, *keys: str) -> None:
    """A filter that names a record which does not exist is a mistake, not an empty result.

    Raises:
        ToolError: ``not_found`` for the first filter naming an unknown record.
    """
    w.records.check_references(state, args, {key: FILTER_COLLECTIONS[key] for key in keys})
