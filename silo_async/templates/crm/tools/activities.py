"""Activities: calls, emails, meetings, tasks and notes — the history and the follow-ups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world import (
    PAGING,
    audit,
    boolean,
    check_references,
    date,
    define_tool,
    enum,
    get_tool,
    next_id,
    paginate,
    require_record,
    set_field,
    sorted_by_id,
    string,
    today,
)

from ..state import RELATED_COLLECTIONS, Activity, State, is_activity_open, is_activity_overdue
from .helpers import (
    ACTOR,
    FILTERS,
    acting_user,
    read_future_date,
    reassign_tool,
    work_owner,
)
from .views import activity_view

__all__ = [
    "complete_activity",
    "get_activity",
    "list_activities",
    "log_activity",
    "reassign_activity",
    "reschedule_activity",
    "schedule_activity",
]

TYPES = ("call", "email", "meeting", "task", "note")
SCHEDULABLE = ("call", "email", "meeting", "task")
RELATED_TYPES = tuple(RELATED_COLLECTIONS)


def _require_open(activity: Activity) -> None:
    if not is_activity_open(activity):
        raise silo.tool_error(
            "invalid_state",
            f"Activity {activity['id']} was completed on {activity['completedDate']}; completed "
            "activities are history and do not change.",
            {"id": activity["id"], "completedDate": activity["completedDate"]},
        )


def _new_activity(state: State, input: dict[str, Any], owner_id: str) -> Activity:
    return {
        "id": next_id(state, "ACT"),
        "type": input["type"],
        "subject": input["subject"].strip(),
        "ownerId": owner_id,
        "relatedTo": {"type": input["relatedType"], "id": input["relatedId"]},
        "createdDate": today(state),
        "dueDate": None,
        "completedDate": None,
        "notes": input.get("notes", ""),
    }


def _about(state: State, activity: Activity, input: Mapping[str, Any]) -> bool:
    related = activity["relatedTo"]
    return (
        input.get("ownerId", activity["ownerId"]) == activity["ownerId"]
        and input.get("type", activity["type"]) == activity["type"]
        and input.get("relatedType", related["type"]) == related["type"]
        and input.get("relatedId", related["id"]) == related["id"]
        and (not input.get("openOnly") or is_activity_open(activity))
        and (not input.get("overdueOnly") or is_activity_overdue(state, activity))
    )


@define_tool(
    "list_activities",
    "List activities sorted by id, filtered by owner, related record, type, or only open or "
    "overdue ones. Paged.",
    {
        "ownerId": string("Only activities owned by this user id."),
        "relatedType": enum("Only activities about this kind of record.", RELATED_TYPES),
        "relatedId": string("Only activities about this record id."),
        "type": enum("Only activities of this type.", TYPES),
        "openOnly": boolean("Only activities not yet completed."),
        "overdueOnly": boolean("Only open activities whose due date has passed."),
        **PAGING,
    },
)
def list_activities(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Activities matching the filters (a related record named in full must exist)."""
    check_references(state, input, FILTERS)
    if "relatedId" in input and "relatedType" in input:
        require_record(state, RELATED_COLLECTIONS[input["relatedType"]], input["relatedId"])
    rows = [a for a in sorted_by_id(state["activities"]) if _about(state, a, input)]
    return paginate(rows, input, lambda a: activity_view(state, a))


get_activity = get_tool(
    "get_activity", "One activity.", "activities", "activityId", "ACT-012", view=activity_view
)


@define_tool(
    "log_activity",
    "Record something that already happened today (a call, email, meeting, task or note). It is "
    "created completed and owned by the actor unless ownerId is given.",
    {
        "type": enum("Kind of activity.", TYPES),
        "subject": string("Short subject line."),
        "relatedType": enum("Kind of record it is about.", RELATED_TYPES),
        "relatedId": string("Id of that record."),
        "notes": string("Details."),
        "ownerId": string("Who did it (default: the actor)."),
        **ACTOR,
    },
    ["type", "subject", "relatedType", "relatedId", "actorId"],
)
def log_activity(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Log a completed activity."""
    actor = acting_user(state, input["actorId"])
    owner_id = input.get("ownerId", actor["id"])
    work_owner(state, owner_id, "activities")
    require_record(state, RELATED_COLLECTIONS[input["relatedType"]], input["relatedId"])
    activity = _new_activity(state, input, owner_id)
    activity["dueDate"] = today(state)
    activity["completedDate"] = today(state)
    state["activities"][activity["id"]] = activity
    audit(
        state, actor["id"], "log_activity", "activity", activity["id"], f"Logged {input['type']}."
    )
    return {"created": activity_view(state, activity)}


@define_tool(
    "schedule_activity",
    "Schedule an open follow-up (call, email, meeting or task) due today or later, for an active "
    "owner. Follow-ups cannot be scheduled on closed deals or closed leads.",
    {
        "type": enum("Kind of follow-up.", SCHEDULABLE),
        "subject": string("Short subject line."),
        "relatedType": enum("Kind of record it is about.", RELATED_TYPES),
        "relatedId": string("Id of that record."),
        "ownerId": string("Who must do it (an active user)."),
        "dueDate": date("Due date, today or later"),
        "notes": string("Details."),
        **ACTOR,
    },
    ["type", "subject", "relatedType", "relatedId", "ownerId", "dueDate", "actorId"],
)
def schedule_activity(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Schedule a follow-up."""
    actor = acting_user(state, input["actorId"])
    work_owner(state, input["ownerId"], "activities")
    require_record(state, RELATED_COLLECTIONS[input["relatedType"]], input["relatedId"])
    due = read_future_date(state, input, "dueDate")
    if input["relatedType"] == "opportunity":
        opp = state["opportunities"][input["relatedId"]]
        if opp["status"] != "open":
            raise silo.tool_error(
                "invalid_state",
                f"Opportunity {opp['id']} is {opp['status']}, not open; follow-ups go on open "
                "deals.",
            )
    if input["relatedType"] == "lead":
        lead = state["leads"][input["relatedId"]]
        if lead["status"] in ("converted", "disqualified"):
            raise silo.tool_error(
                "invalid_state",
                f"Lead {lead['id']} is {lead['status']}; follow-ups go on open leads.",
            )
    activity = _new_activity(state, input, input["ownerId"])
    activity["dueDate"] = due
    state["activities"][activity["id"]] = activity
    audit(
        state,
        actor["id"],
        "schedule_activity",
        "activity",
        activity["id"],
        f"Scheduled {input['type']} for {input['ownerId']} due {due}.",
    )
    return {"created": activity_view(state, activity)}


@define_tool(
    "complete_activity",
    "Mark an open activity as done today, optionally adding notes.",
    {
        "activityId": string("Activity id."),
        "notes": string("Notes to append."),
        **ACTOR,
    },
    ["activityId", "actorId"],
)
def complete_activity(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Complete an activity."""
    actor = acting_user(state, input["actorId"])
    activity = require_record(state, "activities", input["activityId"])
    _require_open(activity)
    changes: list[dict[str, Any]] = []
    set_field(activity, "completedDate", today(state), changes)
    if "notes" in input:
        joined = f"{activity['notes']}\n{input['notes']}".strip()
        set_field(activity, "notes", joined, changes)
    audit(
        state, actor["id"], "complete_activity", "activity", activity["id"], "Completed.", changes
    )
    return {"updated": activity_view(state, activity)}


@define_tool(
    "reschedule_activity",
    "Move an open activity's due date (today or later).",
    {
        "activityId": string("Activity id."),
        "dueDate": date("New due date, today or later"),
        **ACTOR,
    },
    ["activityId", "dueDate", "actorId"],
)
def reschedule_activity(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Reschedule an open activity."""
    actor = acting_user(state, input["actorId"])
    activity = require_record(state, "activities", input["activityId"])
    _require_open(activity)
    due = read_future_date(state, input, "dueDate")
    if activity["dueDate"] == due:
        raise silo.tool_error("conflict", f"Activity {activity['id']} is already due {due}.")
    changes: list[dict[str, Any]] = []
    set_field(activity, "dueDate", due, changes)
    audit(
        state,
        actor["id"],
        "reschedule_activity",
        "activity",
        activity["id"],
        f"Due {due}.",
        changes,
    )
    return {"updated": activity_view(state, activity)}


reassign_activity = reassign_tool(
    "reassign_activity",
    "Give an open activity to another active user. Only its owner, a director or sales ops may. "
    "Completed activities keep their owner as history.",
    "activity",
    "activityId",
    activity_view,
    _require_open,
)
