"""Work items: stories, bugs, tasks and spikes moving through the workflow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import PRIORITY_RANK, Record, State, is_blocked, is_closed, is_overdue
from .helpers import (
    ACTOR,
    FILTER_COLLECTIONS,
    ITEM,
    ITEM_ID,
    assert_assignable,
    assert_blockers_done,
    assert_capacity,
    assert_item_open,
    assert_project_open,
    assert_sprint_budget,
    check_filters,
    commit,
    describe_changes,
    require,
    state_name,
)
from .views import item_summary

__all__ = [
    "assign_work_item",
    "create_work_item",
    "get_work_item",
    "list_work_items",
    "search_work_items",
    "set_due_date",
    "transition_work_item",
    "unassign_work_item",
    "update_work_item",
]

TYPES = ("story", "bug", "task", "spike")
PRIORITIES = tuple(PRIORITY_RANK)
POINTS = (0, 1, 2, 3, 5, 8, 13)
#: Entering these states means working on the item, so its blockers must be done first.
_NEEDS_CLEAR_BLOCKERS = frozenset({"in_progress", "in_review", "done"})


def _points(value: int) -> int:
    if value not in POINTS:
        raise silo.tool_error(
            "invalid_input",
            f'"points" must be one of {", ".join(map(str, POINTS))} (the estimation scale); '
            f"received {value}.",
        )
    return value


def _item_flags(state: State, item: Record, input: Mapping[str, Any]) -> bool:
    return (
        not (input.get("unassigned") and item.get("assigneeId"))
        and not (input.get("openOnly") and is_closed(state, item))
        and not (input.get("blockedOnly") and not is_blocked(state, item))
        and not (input.get("overdueOnly") and not is_overdue(state, item))
    )


WORK_ITEMS = w.Collection("workItems", view=item_summary)
list_work_items = WORK_ITEMS.list_tool(
    "List work items (sorted by id) with computed flags: blocked (waiting on an unfinished "
    "blocker, whatever the stored status says), overdue, days in status and hours logged.",
    filters={
        "projectId": w.schema.string("Only items of this project."),
        "sprintId": w.schema.string("Only items in this sprint."),
        "assigneeId": w.schema.string("Only items assigned to this member."),
        "statusId": w.schema.string("Only items in this workflow state, e.g. backlog."),
        "type": w.schema.enum("Only items of this type.", TYPES),
        "priority": w.schema.enum("Only items with this priority.", PRIORITIES),
    },
    references={
        k: FILTER_COLLECTIONS[k] for k in ("projectId", "sprintId", "assigneeId", "statusId")
    },
    extra={
        "unassigned": w.schema.boolean("Only items with no assignee."),
        "openOnly": w.schema.boolean("Leave out done and cancelled items."),
        "blockedOnly": w.schema.boolean("Only items waiting on an unfinished blocker."),
        "overdueOnly": w.schema.boolean("Only open items past their due date."),
    },
    where=_item_flags,
)


class _Search(w.Input):
    query = w.fields.string("Text to look for.", raw=True)
    projectId = w.fields.string("Only this project.", default=None, raw=True)
    limit = w.fields.LIMIT
    offset = w.fields.OFFSET


@w.define_tool(_Search)
def search_work_items(state: State, args: _Search) -> dict[str, Any]:
    """Find work items whose id or title contains the query (case-insensitive)."""
    check_filters(state, args, "projectId")
    needle = args.query.strip().lower()
    rows = [
        item_summary(state, i)
        for i in state["workItems"].values()
        if needle in f"{i['id']} {i['title']}".lower() and args.projectId in (None, i["projectId"])
    ]
    return w.tools.paginate(rows, args)


class _Item(w.Input):
    workItemId = ITEM_ID


@w.define_tool(_Item)
def get_work_item(state: State, args: _Item) -> dict[str, Any]:
    """Read one work item with its computed flags, blockers, the items it blocks and its comment
    count.
    """
    item = require(state, "workItems", args.workItemId)
    deps = state["dependencies"].values()
    return {
        **item_summary(state, item),
        "blockerIds": sorted(d["blockerId"] for d in deps if d["blockedId"] == item["id"]),
        "blocksIds": sorted(d["blockedId"] for d in deps if d["blockerId"] == item["id"]),
        "commentCount": sum(1 for c in state["comments"].values() if c["workItemId"] == item["id"]),
    }


def _check_sprint(state: State, item: Record, project: Record, sprint_id: str) -> None:
    sprint = require(state, "sprints", sprint_id)
    if sprint["projectId"] != project["id"] or sprint["status"] == "completed":
        raise silo.tool_error(
            "invalid_input" if sprint["projectId"] != project["id"] else "invalid_state",
            f"{sprint['id']} ({sprint['name']}, {sprint['status']}) cannot take new work "
            f"for {project['id']}: it must be a planned or active sprint of that project.",
        )
    assert_sprint_budget(state, sprint, item["points"])


class _NewItem(w.Input):
    projectId = w.fields.string("Project id.", raw=True)
    title = w.fields.string("Short title.", raw=True)
    type = w.fields.enum("Item type.", TYPES)
    points = w.fields.integer("Estimate on the scale 0, 1, 2, 3, 5, 8, 13.", minimum=0, raw=True)
    priority = w.fields.enum("Priority (default medium).", PRIORITIES, default="medium")
    assigneeId = w.fields.string("Member id of the assignee.", default=None, raw=True)
    sprintId = w.fields.string(
        "A planned or active sprint of the same project.", default=None, raw=True
    )
    dueDate = w.fields.date("Due date.", default=None)


@ACTOR.write_tool(_NewItem)
def create_work_item(call: w.Write[_NewItem]) -> dict[str, Any]:
    """Create a work item in an active project. It starts in Backlog, or Ready when put in a sprint.
    The assignee must not have departed; sprint budget and (for an active sprint) the assignee's
    capacity apply.

    Create an item after checking every placement rule.
    """
    state, args = call.state, call.args
    project = require(state, "projects", args.projectId)
    assert_project_open(project, "add")
    item: Record = {
        "id": "",
        "projectId": project["id"],
        "title": args.title.strip(),
        "type": args.type,
        "priority": args.priority,
        "points": _points(args.points),
        "statusId": "backlog",
        "assigneeId": None,
        "sprintId": None,
        "dueDate": args.dueDate,
        "reporterId": call.actor["id"],
        "createdOn": w.clock.today(state),
        "statusChangedOn": w.clock.today(state),
    }
    sprint_id = args.sprintId
    if sprint_id is not None:
        _check_sprint(state, item, project, sprint_id)
        item["statusId"] = "ready"
    if args.assigneeId is not None:
        member = require(state, "members", args.assigneeId)
        assert_assignable(member)
        assert_capacity(state, member, item, sprint_id)
        item["assigneeId"] = member["id"]
    item["sprintId"] = sprint_id
    item["id"] = w.records.next_id(state, "WI")
    audit_id = call.add(ITEM, item, item["title"])
    return {"created": item_summary(state, item), "auditId": audit_id}


class _ItemChanges(w.Input):
    title = w.fields.string("New title.", default=None, raw=True)
    type = w.fields.enum("New type.", TYPES, default=None)
    priority = w.fields.enum("New priority.", PRIORITIES, default=None)
    points = w.fields.integer(
        "New estimate on the scale 0, 1, 2, 3, 5, 8, 13.", minimum=0, default=None, raw=True
    )


@ACTOR.write_tool(_ItemChanges, target=ITEM)
def update_work_item(call: w.Write[_ItemChanges]) -> dict[str, Any]:
    """Change a work item's title, type, priority or estimate. Closed items keep their estimate; a
    larger estimate must fit the sprint budget and the assignee's capacity.
    """
    args, item = call.args, call.record
    changes: dict[str, Any] = {k: getattr(args, k) for k in w.fields.given(args)}
    if not changes:
        raise silo.tool_error(
            "invalid_input", "Give at least one of title, type, priority or points to change."
        )
    if "points" in changes:
        _check_new_estimate(call.state, item, _points(changes["points"]))
    return commit(call, item_summary, describe_changes(item, changes), changes)


def _check_new_estimate(state: State, item: Record, points: int) -> None:
    assert_item_open(state, item, "its estimate is history and cannot change")
    growth = points - int(item["points"])
    if growth <= 0 or item.get("sprintId") is None:
        return
    sprint = state["sprints"][item["sprintId"]]
    if sprint["status"] != "completed":
        assert_sprint_budget(state, sprint, growth)
    if item.get("assigneeId"):
        bigger = {**item, "points": growth, "assigneeId": None}
        assert_capacity(state, state["members"][item["assigneeId"]], bigger, item["sprintId"])


class _Assignee(w.Input):
    memberId = w.fields.string("Member id of the new assignee.", raw=True)


@ACTOR.write_tool(_Assignee, target=ITEM)
def assign_work_item(call: w.Write[_Assignee]) -> dict[str, Any]:
    """Assign an open work item to a member who has not departed. In an active sprint the item must
    fit the member's remaining capacity.
    """
    state, item = call.state, call.record
    member = require(state, "members", call.args.memberId)
    assert_item_open(state, item, "closed items keep the assignee who closed them")
    assert_assignable(member)
    if item.get("assigneeId") == member["id"]:
        raise silo.tool_error("conflict", f"{item['id']} is already assigned to {member['id']}.")
    assert_capacity(state, member, item, item.get("sprintId"))
    detail = f"Assignee {item.get('assigneeId')} -> {member['id']}"
    return commit(call, item_summary, detail, {"assigneeId": member["id"]})


@ACTOR.write_tool(target=ITEM)
def unassign_work_item(call: w.Write) -> dict[str, Any]:
    """Remove the assignee from an open work item."""
    item = call.record
    if item.get("assigneeId") is None:
        raise silo.tool_error("conflict", f"{item['id']} has no assignee.")
    if is_closed(call.state, item):
        raise silo.tool_error(
            "invalid_state", f"{item['id']} is closed; it keeps the assignee who closed it."
        )
    return commit(
        call, item_summary, f"Assignee {item['assigneeId']} -> none", {"assigneeId": None}
    )


class _Transition(w.Input):
    toStatusId = w.fields.string("Target workflow state id, e.g. in_review.", raw=True)


@ACTOR.write_tool(_Transition, target=ITEM)
def transition_work_item(call: w.Write[_Transition]) -> dict[str, Any]:
    """Move a work item to another workflow state. Only the transitions listed by
    list_workflow_states are allowed, and an item cannot go to in_progress, in_review or done
    while any of its blockers is not done.
    """
    state, item = call.state, call.record
    target = require(state, "workflowStates", call.args.toStatusId)
    current = state["workflowStates"][item["statusId"]]
    if current["id"] == target["id"]:
        raise silo.tool_error(
            "conflict", f"{item['id']} is already {state_name(state, target['id'])}."
        )
    if target["id"] not in current["transitions"]:
        raise silo.tool_error(
            "invalid_state",
            f"{item['id']} is {current['name'].lower()}; from there it can move only to "
            f"{', '.join(current['transitions'])}, not {target['id']}.",
            {"current": current["id"], "allowed": current["transitions"]},
        )
    if target["id"] in _NEEDS_CLEAR_BLOCKERS:
        assert_blockers_done(state, item, target["id"])
    detail = f"Status {current['id']} -> {target['id']}"
    changes = {"statusId": target["id"], "statusChangedOn": w.clock.today(state)}
    return commit(call, item_summary, detail, changes)


class _Due(w.Input):
    dueDate = w.fields.date("New due date; omit to clear it.", default=None)


@ACTOR.write_tool(_Due, target=ITEM)
def set_due_date(call: w.Write[_Due]) -> dict[str, Any]:
    """Set or clear (omit dueDate) an open work item's due date."""
    item = call.record
    if is_closed(call.state, item):
        raise silo.tool_error("invalid_state", f"{item['id']} is closed; its due date is history.")
    due = call.args.dueDate
    if item.get("dueDate") == due:
        raise silo.tool_error(
            "conflict",
            f"{item['id']} already has due date {due}."
            if due
            else f"{item['id']} has no due date.",
        )
    return commit(call, item_summary, f"Due {item.get('dueDate')} -> {due}", {"dueDate": due})
