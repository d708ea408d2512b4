"""Sprints: time boxes with a point budget; one active sprint per project."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State, is_closed, items_in_sprint
from .helpers import (
    ACTOR,
    ITEM,
    ITEM_ID,
    SPRINT,
    assert_can_manage,
    assert_capacity,
    assert_item_open,
    assert_project_open,
    assert_sprint_budget,
    check_filters,
    commit,
    describe_changes,
    require,
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


class _SprintFilters(w.Input):
    projectId = w.fields.string("Only sprints of this project.", default=None, raw=True)
    status = w.fields.enum("Only sprints in this status.", STATUSES, default=None)
    limit = w.fields.LIMIT
    offset = w.fields.OFFSET


@w.define_tool(_SprintFilters)
def list_sprints(state: State, args: _SprintFilters) -> dict[str, Any]:
    """List sprints (sorted by start date) with committed, delivered and remaining points, the point
    budget and how far over budget each is.
    """
    check_filters(state, args, "projectId")
    sprints = sorted(state["sprints"].values(), key=lambda s: (s["startDate"], s["id"]))
    rows = [
        sprint_summary(state, s)
        for s in sprints
        if args.projectId in (None, s["projectId"]) and args.status in (None, s["status"])
    ]
    return w.tools.paginate(rows, args)


SPRINTS = w.Collection("sprints", "sprintId", "SPR-003")
get_sprint = SPRINTS.get_tool(
    "Read one sprint with its point totals and every work item attached to it.",
    view=lambda state, sprint: {
        **sprint_summary(state, sprint),
        "workItems": [item_summary(state, i) for i in items_in_sprint(state, sprint["id"])],
    },
)


def _check_dates(start: str, end: str) -> None:
    if end <= start:
        raise silo.tool_error("invalid_input", f"endDate {end} must be after startDate {start}.")


class _NewSprint(w.Input):
    projectId = w.fields.string("Project id.", raw=True)
    name = w.fields.string("Sprint name, e.g. Routing S11.", raw=True)
    startDate = w.fields.date("First day.")
    endDate = w.fields.date("Last day.")
    pointBudget = w.fields.integer(
        "Story points the sprint may commit to.", minimum=1, maximum=200, raw=True
    )
    goal = w.fields.string("One-line sprint goal.", default="", raw=True)


@ACTOR.write_tool(_NewSprint)
def create_sprint(call: w.Write[_NewSprint]) -> dict[str, Any]:
    """Plan a new sprint for a project (created as planned). The name must be unused in the project;
    the end date must be after the start date.
    """
    state, args = call.state, call.args
    project = require(state, "projects", args.projectId)
    assert_project_open(project, "add")
    name = args.name.strip()
    if any(
        s["projectId"] == project["id"] and s["name"].lower() == name.lower()
        for s in state["sprints"].values()
    ):
        raise silo.tool_error("conflict", f'{project["id"]} already has a sprint named "{name}".')
    start, end = args.startDate, args.endDate
    _check_dates(start, end)
    sprint: Record = {
        "id": w.records.next_id(state, "SPR"),
        "name": name,
        "projectId": project["id"],
        "startDate": start,
        "endDate": end,
        "status": "planned",
        "pointBudget": args.pointBudget,
        "goal": args.goal,
    }
    audit_id = call.add(SPRINT, sprint, name)
    return {"created": sprint_summary(state, sprint), "auditId": audit_id}


class _SprintChanges(w.Input):
    name = w.fields.string("New name.", default=None, raw=True)
    startDate = w.fields.date("New first day.", default=None)
    endDate = w.fields.date("New last day.", default=None)
    pointBudget = w.fields.integer(
        "New point budget.", minimum=1, maximum=200, default=None, raw=True
    )
    goal = w.fields.string("New goal.", default=None, raw=True)


@ACTOR.write_tool(_SprintChanges, target=SPRINT)
def update_sprint(call: w.Write[_SprintChanges]) -> dict[str, Any]:
    """Change a planned or active sprint's name, dates, goal or point budget. Completed sprints are
    read-only.
    """
    args, sprint = call.args, call.record
    if sprint["status"] == "completed":
        raise silo.tool_error("invalid_state", f"{sprint['id']} is completed and read-only.")
    given = w.fields.given(args)
    # The values as given first, then the dates, which are read (and may be refused) last.
    order = ("name", "pointBudget", "goal", "startDate", "endDate")
    changes: dict[str, Any] = {k: getattr(args, k) for k in order if k in given}
    if not changes:
        raise silo.tool_error(
            "invalid_input", "Give at least one of name, startDate, endDate, pointBudget, goal."
        )
    _check_dates(
        str(changes.get("startDate", sprint["startDate"])),
        str(changes.get("endDate", sprint["endDate"])),
    )
    return commit(call, sprint_summary, describe_changes(sprint, changes), changes)


def _running(state: State, sprint: Record) -> Record | None:
    """The project's active sprint, if any."""
    return next(
        (
            s
            for s in state["sprints"].values()
            if s["projectId"] == sprint["projectId"] and s["status"] == "active"
        ),
        None,
    )


def _assert_status(sprint: Record, status: str, rule: str) -> None:
    """A sprint starts only from planned and completes only from active.

    The error names the sprint's actual status, then ``rule`` (which status the turnover needs).

    Raises:
        ToolError: ``invalid_state`` with the sprint's status.
    """
    if sprint["status"] != status:
        raise silo.tool_error(
            "invalid_state",
            f"{sprint['id']} ({sprint['name']}) is {sprint['status']}; {rule}.",
            {"status": sprint["status"]},
        )


@ACTOR.write_tool(target=SPRINT)
def start_sprint(call: w.Write) -> dict[str, Any]:
    """Start a planned sprint. A project can have only one active sprint at a time. Only the project
    lead, the owning team's lead or a manager may do this.
    """
    state, sprint = call.state, call.record
    project = state["projects"][sprint["projectId"]]
    assert_project_open(project, "add")
    assert_can_manage(state, call.actor, project)
    _assert_status(sprint, "planned", "only a planned sprint can start")
    running = _running(state, sprint)
    if running is not None:
        raise silo.tool_error(
            "conflict",
            f"{running['id']} ({running['name']}) is still active in {project['id']}; complete "
            "it before starting another sprint.",
            {"activeSprintId": running["id"]},
        )
    return commit(call, sprint_summary, sprint["name"], {"status": "active"})


class _CarryOver(w.Input):
    carryOverToSprintId = w.fields.string(
        "Sprint that receives the unfinished items.", default=None, raw=True
    )


@ACTOR.write_tool(_CarryOver, target=SPRINT)
def complete_sprint(call: w.Write[_CarryOver]) -> dict[str, Any]:
    """Complete an active sprint. Unfinished items (not done or cancelled) stay in it unless
    carryOverToSprintId names a planned or active sprint of the same project, which must have
    budget for them. Only the project lead, the owning team's lead or a manager may do this.

    Move a sprint from active to completed, optionally carrying unfinished work over.
    """
    state, sprint = call.state, call.record
    project = state["projects"][sprint["projectId"]]
    assert_can_manage(state, call.actor, project)
    _assert_status(sprint, "active", "only an active sprint can be completed")
    unfinished = [i for i in items_in_sprint(state, sprint["id"]) if not is_closed(state, i)]
    target_id = call.args.carryOverToSprintId
    if target_id is not None:
        _check_carry_over(state, sprint, require(state, "sprints", target_id), unfinished)
        for item in unfinished:
            item["sprintId"] = target_id
    sprint["status"] = "completed"
    moved = [i["id"] for i in unfinished] if target_id else []
    audit_id = call.audit(
        f"Completed {sprint['name']}; carried over {len(moved)} items to {target_id}"
    )
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
    _assert_takes_work(target)
    assert_sprint_budget(state, target, sum(int(i["points"]) for i in items))


def _assert_takes_work(sprint: Record) -> None:
    """A completed sprint is history: nothing moves into it."""
    if sprint["status"] == "completed":
        raise silo.tool_error(
            "invalid_state", f"{sprint['id']} ({sprint['name']}) is completed; it takes no work."
        )


class _Item(w.Input):
    workItemId = ITEM_ID


@ACTOR.write_tool(_Item, target=SPRINT)
def add_item_to_sprint(call: w.Write[_Item]) -> dict[str, Any]:
    """Put an open work item into a planned or active sprint of its project. The sprint's point
    budget applies, and for an active sprint so does the assignee's capacity.

    Attach an item to a sprint (moving it out of any previous one).
    """
    state, sprint = call.state, call.record
    item = ITEM.find(state, call.input)
    if item["projectId"] != sprint["projectId"]:
        raise silo.tool_error(
            "invalid_input",
            f"{item['id']} belongs to {item['projectId']} but {sprint['id']} is a sprint of "
            f"{sprint['projectId']}.",
        )
    _assert_takes_work(sprint)
    assert_item_open(state, item, "closed items stay where they are")
    if item.get("sprintId") == sprint["id"]:
        raise silo.tool_error("conflict", f"{item['id']} is already in {sprint['id']}.")
    assert_sprint_budget(state, sprint, int(item["points"]))
    if item.get("assigneeId"):
        assert_capacity(state, state["members"][item["assigneeId"]], item, sprint["id"])
    detail = f"Sprint {item.get('sprintId')} -> {sprint['id']}"
    item["sprintId"] = sprint["id"]
    audit_id = call.audit(detail, entity=ITEM.entity, entity_id=item["id"])
    return {"updated": item_summary(state, item), "auditId": audit_id}


@ACTOR.write_tool(target=ITEM)
def remove_item_from_sprint(call: w.Write) -> dict[str, Any]:
    """Take an open work item out of its sprint, back to the project backlog (its status is kept).
    Done or cancelled items stay in the sprint they were closed in.
    """
    item = call.record
    if item.get("sprintId") is None:
        raise silo.tool_error("conflict", f"{item['id']} is not in any sprint.")
    assert_item_open(call.state, item, "closed items stay in the sprint they were closed in")
    return commit(call, item_summary, f"Sprint {item['sprintId']} -> none", {"sprintId": None})
