"""Activities: calls, emails, meetings, tasks and notes — the history and the follow-ups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import (
    RELATED_COLLECTIONS,
    Activity,
    State,
    is_activity_open,
    is_activity_overdue,
    is_open,
)
from .helpers import (
    ACTIVITY,
    ACTOR,
    FILTERS,
    is_lead_open,
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


def _require_open(state: State, activity: Activity) -> None:
    if not is_activity_open(activity):
        raise silo.tool_error(
            "invalid_state",
            f"Activity {activity['id']} was completed on {activity['completedDate']}; completed "
            "activities are history and do not change.",
            {"id": activity["id"], "completedDate": activity["completedDate"]},
        )


#: An open activity: completed ones are history.
OPEN_ACTIVITY = ACTIVITY.guarded(_require_open)


def _new_activity(state: State, input: dict[str, Any], owner_id: str) -> Activity:
    return {
        "id": w.records.next_id(state, "ACT"),
        "type": input["type"],
        "subject": input["subject"].strip(),
        "ownerId": owner_id,
        "relatedTo": {"type": input["relatedType"], "id": input["relatedId"]},
        "createdDate": w.clock.today(state),
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


@w.define_tool(
    {
        "ownerId": w.schema.string("Only activities owned by this user id."),
        "relatedType": w.schema.enum("Only activities about this kind of record.", RELATED_TYPES),
        "relatedId": w.schema.string("Only activities about this record id."),
        "type": w.schema.enum("Only activities of this type.", TYPES),
        "openOnly": w.schema.boolean("Only activities not yet completed."),
        "overdueOnly": w.schema.boolean("Only open activities whose due date has passed."),
        **w.schema.PAGING,
    }
)
def list_activities(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """List activities sorted by id, filtered by owner, related record, type, or only open or
    overdue ones. Paged.

    Activities matching the filters (a related record named in full must exist).
    """
    w.records.check_references(state, input, FILTERS)
    if "relatedId" in input and "relatedType" in input:
        w.records.require_record(
            state, RELATED_COLLECTIONS[input["relatedType"]], input["relatedId"]
        )
    rows = [a for a in w.tools.sorted_by_id(state["activities"]) if _about(state, a, input)]
    return w.tools.paginate(rows, input, lambda a: activity_view(state, a))


ACTIVITIES = w.Collection("activities", "activityId", "ACT-012", view=activity_view)
get_activity = ACTIVITIES.get_tool("One activity.")

#: What a new activity is: the properties log_activity and schedule_activity share.
_WHAT = ("type", "subject", "relatedType", "relatedId")


@ACTOR.write_tool(
    {
        "type": w.schema.enum("Kind of activity.", TYPES),
        "subject": w.schema.string("Short subject line."),
        "relatedType": w.schema.enum("Kind of record it is about.", RELATED_TYPES),
        "relatedId": w.schema.string("Id of that record."),
        "notes": w.schema.string("Details."),
        "ownerId": w.schema.string("Who did it (default: the actor)."),
    },
    _WHAT,
)
def log_activity(call: w.Write) -> dict[str, Any]:
    """Record something that already happened today (a call, email, meeting, task or note). It is
    created completed and owned by the actor unless ownerId is given.
    """
    state, input = call.state, call.input
    owner_id = input.get("ownerId", call.actor["id"])
    work_owner(state, owner_id, "activities")
    w.records.require_record(state, RELATED_COLLECTIONS[input["relatedType"]], input["relatedId"])
    activity = _new_activity(state, input, owner_id)
    activity["dueDate"] = w.clock.today(state)
    activity["completedDate"] = w.clock.today(state)
    call.add(ACTIVITY, activity, f"Logged {input['type']}.")
    return {"created": activity_view(state, activity)}


def _check_related_open(state: State, related_type: str, related_id: str) -> None:
    if related_type == "opportunity":
        opp = state["opportunities"][related_id]
        if not is_open(opp):
            raise silo.tool_error(
                "invalid_state",
                f"Opportunity {opp['id']} is {opp['status']}, not open; follow-ups go on open "
                "deals.",
            )
    if related_type == "lead":
        lead = state["leads"][related_id]
        if not is_lead_open(lead):
            raise silo.tool_error(
                "invalid_state",
                f"Lead {lead['id']} is {lead['status']}; follow-ups go on open leads.",
            )


@ACTOR.write_tool(
    {
        "type": w.schema.enum("Kind of follow-up.", SCHEDULABLE),
        "subject": w.schema.string("Short subject line."),
        "relatedType": w.schema.enum("Kind of record it is about.", RELATED_TYPES),
        "relatedId": w.schema.string("Id of that record."),
        "ownerId": w.schema.string("Who must do it (an active user)."),
        "dueDate": w.schema.date("Due date, today or later"),
        "notes": w.schema.string("Details."),
    },
    [*_WHAT, "ownerId", "dueDate"],
)
def schedule_activity(call: w.Write) -> dict[str, Any]:
    """Schedule an open follow-up (call, email, meeting or task) due today or later, for an active
    owner. Follow-ups cannot be scheduled on closed deals or closed leads.
    """
    state, input = call.state, call.input
    work_owner(state, input["ownerId"], "activities")
    w.records.require_record(state, RELATED_COLLECTIONS[input["relatedType"]], input["relatedId"])
    due = read_future_date(state, input, "dueDate")
    _check_related_open(state, input["relatedType"], input["relatedId"])
    activity = _new_activity(state, input, input["ownerId"])
    activity["dueDate"] = due
    call.add(ACTIVITY, activity, f"Scheduled {input['type']} for {input['ownerId']} due {due}.")
    return {"created": activity_view(state, activity)}


@ACTOR.write_tool({"notes": w.schema.string("Notes to append.")}, target=OPEN_ACTIVITY)
def complete_activity(call: w.Write) -> dict[str, Any]:
    """Mark an open activity as done today, optionally adding notes."""
    activity = call.record
    call.set("completedDate", w.clock.today(call.state))
    if "notes" in call.input:
        call.set("notes", f"{activity['notes']}\n{call.input['notes']}".strip())
    call.audit("Completed.")
    return {"updated": activity_view(call.state, activity)}


@ACTOR.write_tool(
    {"dueDate": w.schema.date("New due date, today or later")}, ["dueDate"], target=OPEN_ACTIVITY
)
def reschedule_activity(call: w.Write) -> dict[str, Any]:
    """Move an open activity's due date (today or later)."""
    activity = call.record
    due = read_future_date(call.state, call.input, "dueDate")
    if activity["dueDate"] == due:
        raise silo.tool_error("conflict", f"Activity {activity['id']} is already due {due}.")
    call.set("dueDate", due)
    call.audit(f"Due {due}.")
    return {"updated": activity_view(call.state, activity)}


reassign_activity = reassign_tool(
    "reassign_activity",
    "Give an open activity to another active user. Only its owner, a director or sales ops may. "
    "Completed activities keep their owner as history.",
    OPEN_ACTIVITY,
    activity_view,
)
