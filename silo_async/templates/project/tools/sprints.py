"""Sprints: time boxes with a point budget; one active sprint per project."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async.world import (
    PAGING,
    audit,
    date,
    define_tool,
    enum,
    get_tool,
    integer,
    next_id,
    paginate,
    read_date,
    string,
)

from ..state import Record, State, is_closed, items_in_sprint
from .helpers import (
    ACTOR,
    acting_member,
    assert_can_manage,
    assert_capacity,
    assert_project_open,
    assert_sprint_budget,
    check_filters,
    describe_changes,
    require,
    update_item,
    writable_item,
)
from .views import item_summary, sprint_summary

__all__ = [
    "add_item_to_sprint",
    "complete_sprint",
    "create_sprint",
    "get_sprint",
    "list_sprints",
    "remove_item_from_sprint",
    "start_sprint",
    "update_sprint",
]

STATUSES = ("planned", "active", "completed")
_SPRINT_ID = {"sprintId": string("Sprint id, e.g. SPR-003.")}
_ITEM_ID = {"workItemId": string("Work item id, e.g. WI-012.")}


@define_tool(
    "list_sprints",
    "List sprints (sorted by start date) with committed, delivered and remaining points, the "
    "point budget and how far over budget each is.",
    {
        "projectId": string("Only sprints of this project."),
        "status": enum("Only sprints in this status.", STATUSES),
        **PAGING,
    },
)
def list_sprints(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Filtered, paged sprint summaries."""
    check_filters(state, input, "projectId")
    sprints = sorted(state["sprints"].values(), key=lambda s: (s["startDate"], s["id"]))
    rows = [
        sprint_summary(state, s)
        for s in sprints
        if input.get("projectId") in (None, s["projectId"])
        and input.get("status") in (None, s["status"])
    ]
    return paginate(rows, input)


get_sprint = get_tool(
    "get_sprint",
    "Read one sprint with its point totals and every work item attached to it.",
    "sprints",
    "sprintId",
    "SPR-003",
    view=lambda state, sprint: {
        **sprint_summary(state, sprint),
        "workItems": [item_summary(state, i) for i in items_in_sprint(state, sprint["id"])],
    },
)


def _check_dates(start: str, end: str) -> None:
    if end <= start:
        raise silo.tool_error("invalid_input", f"endDate {end} must be after startDate {start}.")


@define_tool(
    "create_sprint",
    "Plan a new sprint for a project (created as planned). The name must be unused in the "
    "project; the end date must be after the start date.",
    {
        **ACTOR,
        "projectId": string("Project id."),
        "name": string("Sprint name, e.g. Routing S11."),
        "startDate": date("First day."),
        "endDate": date("Last day."),
        "pointBudget": integer("Story points the sprint may commit to.", minimum=1, maximum=200),
        "goal": string("One-line sprint goal."),
    },
    ["actorId", "projectId", "name", "startDate", "endDate", "pointBudget"],
)
def create_sprint(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a planned sprint."""
    actor = acting_member(state, input)
    project = require(state, "projects", input["projectId"])
    assert_project_open(project, "add")
    name = input["name"].strip()
    if any(
        s["projectId"] == project["id"] and s["name"].lower() == name.lower()
        for s in state["sprints"].values()
    ):
        raise silo.tool_error("conflict", f'{project["id"]} already has a sprint named "{name}".')
    start, end = read_date(input, "startDate"), read_date(input, "endDate")
    _check_dates(start, end)
    sprint: Record = {
        "id": next_id(state, "SPR"),
        "name": name,
        "projectId": project["id"],
        "startDate": start,
        "endDate": end,
        "status": "planned",
        "pointBudget": input["pointBudget"],
        "goal": input.get("goal", ""),
    }
    state["sprints"][sprint["id"]] = sprint
    audit_id = audit(state, actor["id"], "create_sprint", "sprint", sprint["id"], name)
    return {"created": sprint_summary(state, sprint), "auditId": audit_id}


@define_tool(
    "update_sprint",
    "Change a planned or active sprint's name, dates, goal or point budget. Completed sprints "
    "are read-only.",
    {
        **ACTOR,
        **_SPRINT_ID,
        "name": string("New name."),
        "startDate": date("New first day."),
        "endDate": date("New last day."),
        "pointBudget": integer("New point budget.", minimum=1, maximum=200),
        "goal": string("New goal."),
    },
    ["actorId", "sprintId"],
)
def update_sprint(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Apply the given changes."""
    actor = acting_member(state, input)
    sprint = require(state, "sprints", input["sprintId"])
    if sprint["status"] == "completed":
        raise silo.tool_error("invalid_state", f"{sprint['id']} is completed and read-only.")
    changes: dict[str, Any] = {k: input[k] for k in ("name", "pointBudget", "goal") if k in input}
    for key in ("startDate", "endDate"):
        if key in input:
            changes[key] = read_date(input, key)
    if not changes:
        raise silo.tool_error(
            "invalid_input", "Give at least one of name, startDate, endDate, pointBudget, goal."
        )
    _check_dates(
        str(changes.get("startDate", sprint["startDate"])),
        str(changes.get("endDate", sprint["endDate"])),
    )
    detail = describe_changes(sprint, changes)
    sprint.update(changes)
    audit_id = audit(state, actor["id"], "update_sprint", "sprint", sprint["id"], detail)
    return {"updated": sprint_summary(state, sprint), "auditId": audit_id}


@define_tool(
    "start_sprint",
    "Start a planned sprint. A project can have only one active sprint at a time. Only the "
    "project lead, the owning team's lead or a manager may do this.",
    {**ACTOR, **_SPRINT_ID},
    ["actorId", "sprintId"],
)
def start_sprint(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Move a sprint from planned to active."""
    actor = acting_member(state, input)
    sprint = require(state, "sprints", input["sprintId"])
    project = state["projects"][sprint["projectId"]]
    assert_project_open(project, "add")
    assert_can_manage(state, actor, project)
    if sprint["status"] != "planned":
        raise silo.tool_error(
            "invalid_state",
            f"{sprint['id']} ({sprint['name']}) is {sprint['status']}; only a planned sprint "
            "can start.",
            {"status": sprint["status"]},
        )
    running = next(
        (
            s
            for s in state["sprints"].values()
            if s["projectId"] == sprint["projectId"] and s["status"] == "active"
        ),
        None,
    )
    if running is not None:
        raise silo.tool_error(
            "conflict",
            f"{running['id']} ({running['name']}) is still active in {project['id']}; complete "
            "it before starting another sprint.",
            {"activeSprintId": running["id"]},
        )
    sprint["status"] = "active"
    audit_id = audit(state, actor["id"], "start_sprint", "sprint", sprint["id"], sprint["name"])
    return {"updated": sprint_summary(state, sprint), "auditId": audit_id}


@define_tool(
    "complete_sprint",
    "Complete an active sprint. Unfinished items (not done or cancelled) stay in it unless "
    "carryOverToSprintId names a planned or active sprint of the same project, which must have "
    "budget for them. Only the project lead, the owning team's lead or a manager may do this.",
    {
        **ACTOR,
        **_SPRINT_ID,
        "carryOverToSprintId": string("Sprint that receives the unfinished items."),
    },
    ["actorId", "sprintId"],
)
def complete_sprint(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Move a sprint from active to completed, optionally carrying unfinished work over."""
    actor = acting_member(state, input)
    sprint = require(state, "sprints", input["sprintId"])
    project = state["projects"][sprint["projectId"]]
    assert_can_manage(state, actor, project)
    if sprint["status"] != "active":
        raise silo.tool_error(
            "invalid_state",
            f"{sprint['id']} ({sprint['name']}) is {sprint['status']}; only an active sprint "
            "can be completed.",
            {"status": sprint["status"]},
        )
    unfinished = [i for i in items_in_sprint(state, sprint["id"]) if not is_closed(state, i)]
    target_id = input.get("carryOverToSprintId")
    if target_id is not None:
        _check_carry_over(state, sprint, require(state, "sprints", target_id), unfinished)
        for item in unfinished:
            item["sprintId"] = target_id
    sprint["status"] = "completed"
    moved = [i["id"] for i in unfinished] if target_id else []
    detail = f"Completed {sprint['name']}; carried over {len(moved)} items to {target_id}"
    audit_id = audit(state, actor["id"], "complete_sprint", "sprint", sprint["id"], detail)
    return {
        "updated": sprint_summary(state, sprint),
        "carriedOverIds": moved,
        "leftInSprintIds": [] if target_id else [i["id"] for i in unfinished],
        "auditId": audit_id,
    }


def _check_carry_over(state: State, sprint: Record, target: Record, items: list[Record]) -> None:
    if target["id"] == sprint["id"] or target["projectId"] != sprint["projectId"]:
        raise silo.tool_error(
            "invalid_input",
            f"carryOverToSprintId must be another sprint of {sprint['projectId']}; "
            f"{target['id']} is in {target['projectId']}.",
        )
    if target["status"] == "completed":
        raise silo.tool_error(
            "invalid_state", f"{target['id']} ({target['name']}) is completed; it takes no work."
        )
    assert_sprint_budget(state, target, sum(int(i["points"]) for i in items))


@define_tool(
    "add_item_to_sprint",
    "Put an open work item into a planned or active sprint of its project. The sprint's point "
    "budget applies, and for an active sprint so does the assignee's capacity.",
    {**ACTOR, **_SPRINT_ID, **_ITEM_ID},
    ["actorId", "sprintId", "workItemId"],
)
def add_item_to_sprint(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Attach an item to a sprint (moving it out of any previous one)."""
    actor = acting_member(state, input)
    sprint = require(state, "sprints", input["sprintId"])
    item = writable_item(state, input["workItemId"])
    if item["projectId"] != sprint["projectId"]:
        raise silo.tool_error(
            "invalid_input",
            f"{item['id']} belongs to {item['projectId']} but {sprint['id']} is a sprint of "
            f"{sprint['projectId']}.",
        )
    if sprint["status"] == "completed":
        raise silo.tool_error(
            "invalid_state", f"{sprint['id']} ({sprint['name']}) is completed; it takes no work."
        )
    if is_closed(state, item):
        raise silo.tool_error(
            "invalid_state",
            f"{item['id']} is {item['statusId']}; closed items stay where they are.",
        )
    if item.get("sprintId") == sprint["id"]:
        raise silo.tool_error("conflict", f"{item['id']} is already in {sprint['id']}.")
    assert_sprint_budget(state, sprint, int(item["points"]))
    if item.get("assigneeId"):
        assert_capacity(state, state["members"][item["assigneeId"]], item, sprint["id"])
    detail = f"Sprint {item.get('sprintId')} -> {sprint['id']}"
    return update_item(state, actor, item, "add_item_to_sprint", detail, {"sprintId": sprint["id"]})


@define_tool(
    "remove_item_from_sprint",
    "Take an open work item out of its sprint, back to the project backlog (its status is "
    "kept). Done or cancelled items stay in the sprint they were closed in.",
    {**ACTOR, **_ITEM_ID},
    ["actorId", "workItemId"],
)
def remove_item_from_sprint(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Detach an item from its sprint."""
    actor = acting_member(state, input)
    item = writable_item(state, input["workItemId"])
    if item.get("sprintId") is None:
        raise silo.tool_error("conflict", f"{item['id']} is not in any sprint.")
    if is_closed(state, item):
        raise silo.tool_error(
            "invalid_state",
            f"{item['id']} is {item['statusId']}; closed items stay in the sprint they were "
            "closed in.",
        )
    detail = f"Sprint {item['sprintId']} -> none"
    return update_item(state, actor, item, "remove_item_from_sprint", detail, {"sprintId": None})
