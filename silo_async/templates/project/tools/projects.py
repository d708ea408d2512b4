"""Projects: what the teams are delivering, and their lifecycle (active, on hold, archived)."""

from __future__ import annotations

import re
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State, hours_for_project, is_closed, is_overdue
from .helpers import (
    ACTOR,
    PROJECT,
    NewLead,
    assert_assignable,
    assert_can_manage,
    assert_project_open,
    commit,
    describe_changes,
    new_lead,
    require,
)
from .views import sprint_summary

__all__ = [
    "archive_project",
    "create_project",
    "get_project",
    "list_projects",
    "search_projects",
    "set_project_lead",
    "set_project_status",
    "update_project",
]

STATUSES = ("active", "on_hold", "archived")
_KEY = re.compile(r"^[A-Z]{2,6}$")


def _project_summary(state: State, project: Record) -> dict[str, Any]:
    items = [i for i in state["workItems"].values() if i["projectId"] == project["id"]]
    open_items = [i for i in items if not is_closed(state, i)]
    return {
        **project,
        "workItemCount": len(items),
        "openWorkItemCount": len(open_items),
        "openPoints": sum(int(i["points"]) for i in open_items),
        "overdueCount": sum(1 for i in items if is_overdue(state, i)),
        "hoursLogged": hours_for_project(state, project["id"]),
    }


PROJECTS = w.Collection("projects", "projectId", "PRJ-001", view=_project_summary)
list_projects = PROJECTS.list_tool(
    "List projects (sorted by id) with open work, overdue count and hours logged.",
    filters={
        "status": w.schema.enum("Only projects in this status.", STATUSES),
        "teamId": w.schema.string("Only projects owned by this team."),
    },
    references={"teamId": "teams"},
)

search_projects = PROJECTS.search_tool(
    "Find projects whose id, key or name contains the query (case-insensitive).", ["key", "name"]
)

get_project = PROJECTS.get_tool(
    "Read one project with its sprints (committed, delivered and remaining points).",
    view=lambda state, project: {
        **_project_summary(state, project),
        "sprints": [
            sprint_summary(state, s)
            for s in state["sprints"].values()
            if s["projectId"] == project["id"]
        ],
    },
)


class _NewProject(w.Input):
    key = w.fields.string("Short key, 2-6 capital letters, e.g. FLEET.", raw=True)
    name = w.fields.string("Project name.", raw=True)
    teamId = w.fields.string("Owning team id.", raw=True)
    leadId = w.fields.string("Member id of the project lead.", raw=True)
    startDate = w.fields.date("Start date.")
    targetDate = w.fields.date("Target date.")


@ACTOR.write_tool(_NewProject)
def create_project(call: w.Write[_NewProject]) -> dict[str, Any]:
    """Create an active project. The key (2-6 capital letters) must be unused; the lead must be an
    active member; the target date must be after the start date.
    """
    state, args = call.state, call.args
    key = args.key.strip()
    if not _KEY.match(key):
        raise silo.tool_error(
            "invalid_input", f'"key" must be 2-6 capital letters (A-Z); received "{key}".'
        )
    clash = next((p for p in state["projects"].values() if p["key"] == key), None)
    if clash is not None:
        raise silo.tool_error("conflict", f"Key {key} is already used by {clash['id']}.")
    require(state, "teams", args.teamId)
    assert_assignable(require(state, "members", args.leadId), "lead a project")
    start, target = args.startDate, args.targetDate
    if target <= start:
        raise silo.tool_error(
            "invalid_input", f"targetDate {target} must be after startDate {start}."
        )
    project: Record = {
        "id": w.records.next_id(state, "PRJ"),
        "key": key,
        "name": args.name.strip(),
        "teamId": args.teamId,
        "leadId": args.leadId,
        "status": "active",
        "startDate": start,
        "targetDate": target,
    }
    audit_id = call.add(PROJECT, project, key)
    return {"created": _project_summary(state, project), "auditId": audit_id}


def _editable(state: State, project: Record) -> None:
    assert_project_open(project, "edit")


#: A project that is not archived (archived projects are read-only).
OPEN_PROJECT = PROJECT.guarded(_editable)


class _ProjectChanges(w.Input):
    name = w.fields.string("New name.", default=None, raw=True)
    targetDate = w.fields.date("New target date.", default=None)


@ACTOR.write_tool(_ProjectChanges, target=OPEN_PROJECT)
def update_project(call: w.Write[_ProjectChanges]) -> dict[str, Any]:
    """Rename a project or move its target date. Archived projects are read-only."""
    args, project = call.args, call.record
    changes: dict[str, Any] = {}
    if args.name is not None:
        changes["name"] = args.name.strip()
    target = args.targetDate
    if target is not None:
        if target <= project["startDate"]:
            raise silo.tool_error(
                "invalid_input",
                f"targetDate {target} must be after the start date {project['startDate']}.",
            )
        changes["targetDate"] = target
    if not changes:
        raise silo.tool_error("invalid_input", "Give name or targetDate to change.")
    return commit(call, _project_summary, describe_changes(project, changes), changes)


class _Status(w.Input):
    status = w.fields.enum("New status.", ("active", "on_hold"))


@ACTOR.write_tool(_Status, target=OPEN_PROJECT)
def set_project_status(call: w.Write[_Status]) -> dict[str, Any]:
    """Put a project on hold or make it active again (use archive_project to archive). Only the
    project lead, the owning team's lead or a manager may do this.
    """
    project, status = call.record, call.args.status
    assert_can_manage(call.state, call.actor, project)
    if project["status"] == status:
        raise silo.tool_error("conflict", f"{project['id']} is already {status.replace('_', ' ')}.")
    detail = f"Status {project['status']} -> {status}"
    return commit(call, _project_summary, detail, {"status": status})


@ACTOR.write_tool(target=PROJECT)
def archive_project(call: w.Write) -> dict[str, Any]:
    """Archive a project, making it read-only. Refused while any of its work items is still open
    (not done or cancelled) or one of its sprints is active. Only the project lead, the owning
    team's lead or a manager may do this.
    """
    state, project = call.state, call.record
    if project["status"] == "archived":
        raise silo.tool_error("conflict", f"{project['id']} is already archived.")
    assert_can_manage(state, call.actor, project)
    open_ids = [
        i["id"]
        for i in state["workItems"].values()
        if i["projectId"] == project["id"] and not is_closed(state, i)
    ]
    if open_ids:
        raise silo.tool_error(
            "invalid_state",
            f"{project['id']} ({project['name']}) still has {len(open_ids)} open work items "
            f"({', '.join(open_ids)}); finish or cancel them first.",
            {"openWorkItemIds": open_ids},
        )
    active = [
        s["id"]
        for s in state["sprints"].values()
        if s["projectId"] == project["id"] and s["status"] == "active"
    ]
    if active:
        raise silo.tool_error(
            "invalid_state",
            f"{project['id']} has an active sprint ({', '.join(active)}); complete it first.",
        )
    detail = f"Status {project['status']} -> archived"
    return commit(call, _project_summary, detail, {"status": "archived"})


@ACTOR.write_tool(NewLead, target=OPEN_PROJECT)
def set_project_lead(call: w.Write[NewLead]) -> dict[str, Any]:
    """Make an active member the project's lead."""
    project, member = call.record, new_lead(call, "lead a project")
    detail = f"Lead {project['leadId']} -> {member['id']}"
    return commit(call, _project_summary, detail, {"leadId": member["id"]})
