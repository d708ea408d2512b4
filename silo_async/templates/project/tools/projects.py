"""Projects: what the teams are delivering, and their lifecycle (active, on hold, archived)."""

from __future__ import annotations

import re
from typing import Any

import silo_async as silo
from silo_async.world import (
    audit,
    date,
    define_tool,
    enum,
    get_tool,
    list_tool,
    next_id,
    read_date,
    search_tool,
    string,
)

from ..state import Record, State, hours_for_project, is_closed, is_overdue
from .helpers import (
    ACTOR,
    acting_member,
    assert_assignable,
    assert_can_manage,
    assert_project_open,
    describe_changes,
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
_PROJECT_ID = {"projectId": string("Project id, e.g. PRJ-002.")}
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


list_projects = list_tool(
    "list_projects",
    "List projects (sorted by id) with open work, overdue count and hours logged.",
    "projects",
    filters={
        "status": enum("Only projects in this status.", STATUSES),
        "teamId": string("Only projects owned by this team."),
    },
    references={"teamId": "teams"},
    view=_project_summary,
)

search_projects = search_tool(
    "search_projects",
    "Find projects whose id, key or name contains the query (case-insensitive).",
    "projects",
    ["key", "name"],
    view=_project_summary,
)

get_project = get_tool(
    "get_project",
    "Read one project with its sprints (committed, delivered and remaining points).",
    "projects",
    "projectId",
    "PRJ-001",
    view=lambda state, project: {
        **_project_summary(state, project),
        "sprints": [
            sprint_summary(state, s)
            for s in state["sprints"].values()
            if s["projectId"] == project["id"]
        ],
    },
)


@define_tool(
    "create_project",
    "Create an active project. The key (2-6 capital letters) must be unused; the lead must be "
    "an active member; the target date must be after the start date.",
    {
        **ACTOR,
        "key": string("Short key, 2-6 capital letters, e.g. FLEET."),
        "name": string("Project name."),
        "teamId": string("Owning team id."),
        "leadId": string("Member id of the project lead."),
        "startDate": date("Start date."),
        "targetDate": date("Target date."),
    },
    ["actorId", "key", "name", "teamId", "leadId", "startDate", "targetDate"],
)
def create_project(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a project."""
    actor = acting_member(state, input)
    key = input["key"].strip()
    if not _KEY.match(key):
        raise silo.tool_error(
            "invalid_input", f'"key" must be 2-6 capital letters (A-Z); received "{key}".'
        )
    clash = next((p for p in state["projects"].values() if p["key"] == key), None)
    if clash is not None:
        raise silo.tool_error("conflict", f"Key {key} is already used by {clash['id']}.")
    require(state, "teams", input["teamId"])
    assert_assignable(require(state, "members", input["leadId"]), "lead a project")
    start, target = read_date(input, "startDate"), read_date(input, "targetDate")
    if target <= start:
        raise silo.tool_error(
            "invalid_input", f"targetDate {target} must be after startDate {start}."
        )
    project: Record = {
        "id": next_id(state, "PRJ"),
        "key": key,
        "name": input["name"].strip(),
        "teamId": input["teamId"],
        "leadId": input["leadId"],
        "status": "active",
        "startDate": start,
        "targetDate": target,
    }
    state["projects"][project["id"]] = project
    audit_id = audit(state, actor["id"], "create_project", "project", project["id"], key)
    return {"created": _project_summary(state, project), "auditId": audit_id}


@define_tool(
    "update_project",
    "Rename a project or move its target date. Archived projects are read-only.",
    {
        **ACTOR,
        **_PROJECT_ID,
        "name": string("New name."),
        "targetDate": date("New target date."),
    },
    ["actorId", "projectId"],
)
def update_project(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Apply the given changes."""
    actor = acting_member(state, input)
    project = require(state, "projects", input["projectId"])
    assert_project_open(project, "edit")
    changes: dict[str, Any] = {}
    if "name" in input:
        changes["name"] = input["name"].strip()
    if "targetDate" in input:
        target = read_date(input, "targetDate")
        if target <= project["startDate"]:
            raise silo.tool_error(
                "invalid_input",
                f"targetDate {target} must be after the start date {project['startDate']}.",
            )
        changes["targetDate"] = target
    if not changes:
        raise silo.tool_error("invalid_input", "Give name or targetDate to change.")
    detail = describe_changes(project, changes)
    project.update(changes)
    audit_id = audit(state, actor["id"], "update_project", "project", project["id"], detail)
    return {"updated": _project_summary(state, project), "auditId": audit_id}


@define_tool(
    "set_project_status",
    "Put a project on hold or make it active again (use archive_project to archive). Only the "
    "project lead, the owning team's lead or a manager may do this.",
    {**ACTOR, **_PROJECT_ID, "status": enum("New status.", ("active", "on_hold"))},
    ["actorId", "projectId", "status"],
)
def set_project_status(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Switch between active and on hold."""
    actor = acting_member(state, input)
    project = require(state, "projects", input["projectId"])
    assert_project_open(project, "edit")
    assert_can_manage(state, actor, project)
    if project["status"] == input["status"]:
        raise silo.tool_error(
            "conflict", f"{project['id']} is already {input['status'].replace('_', ' ')}."
        )
    detail = f"Status {project['status']} -> {input['status']}"
    project["status"] = input["status"]
    audit_id = audit(state, actor["id"], "set_project_status", "project", project["id"], detail)
    return {"updated": _project_summary(state, project), "auditId": audit_id}


@define_tool(
    "archive_project",
    "Archive a project, making it read-only. Refused while any of its work items is still open "
    "(not done or cancelled) or one of its sprints is active. Only the project lead, the owning "
    "team's lead or a manager may do this.",
    {**ACTOR, **_PROJECT_ID},
    ["actorId", "projectId"],
)
def archive_project(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Archive a finished project."""
    actor = acting_member(state, input)
    project = require(state, "projects", input["projectId"])
    if project["status"] == "archived":
        raise silo.tool_error("conflict", f"{project['id']} is already archived.")
    assert_can_manage(state, actor, project)
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
    project["status"] = "archived"
    audit_id = audit(state, actor["id"], "archive_project", "project", project["id"], detail)
    return {"updated": _project_summary(state, project), "auditId": audit_id}


@define_tool(
    "set_project_lead",
    "Make an active member the project's lead.",
    {**ACTOR, **_PROJECT_ID, "memberId": string("Member id of the new lead.")},
    ["actorId", "projectId", "memberId"],
)
def set_project_lead(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Change the project lead."""
    actor = acting_member(state, input)
    project = require(state, "projects", input["projectId"])
    assert_project_open(project, "edit")
    member = require(state, "members", input["memberId"])
    assert_assignable(member, "lead a project")
    if project["leadId"] == member["id"]:
        raise silo.tool_error("conflict", f"{member['id']} already leads {project['id']}.")
    detail = f"Lead {project['leadId']} -> {member['id']}"
    project["leadId"] = member["id"]
    audit_id = audit(state, actor["id"], "set_project_lead", "project", project["id"], detail)
    return {"updated": _project_summary(state, project), "auditId": audit_id}
