"""Activities: calls, emails, meetings, tasks and notes — the history and the follow-ups."""

from __future__ import annotations

from typing import Any, get_args

import silo_async as silo
from silo_async import world as w

from ..state import (
    RELATED_COLLECTIONS,
    Activity,
    ActivityType,
    State,
    is_activity_open,
    is_activity_overdue,
    is_open,
)
from .helpers import (
    ACTIVITY,
    ACTOR,
    FILTERS,
    future_date,
    is_lead_open,
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

TYPES: tuple[ActivityType, ...] = get_args(ActivityType)
SCHEDULABLE: tuple[ActivityType, ...] = ("call", "email", "meeting", "task")
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


#: What a new activity is about: log_activity and schedule_activity share these.
_SUBJECT = w.fields.string("Short subject line.", raw=True)
_RELATED_TYPE = w.fields.enum("Kind of record it is about.", RELATED_TYPES)
_RELATED_ID = w.fields.string("Id of that record.", raw=True)
_NOTES = w.fields.string("Details.", default="", raw=True)


class _Logged(w.Input):
    type = w.fields.enum("Kind of activity.", TYPES)
    subject = _SUBJECT
    relatedType = _RELATED_TYPE
    relatedId = _RELATED_ID
    notes = _NOTES
    ownerId = w.fields.string("Who did it (default: the actor).", default=None, raw=True)


class _Scheduled(w.Input):
    type = w.fields.enum("Kind of follow-up.", SCHEDULABLE)
    subject = _SUBJECT
    relatedType = _RELATED_TYPE
    relatedId = _RELATED_ID
    ownerId = w.fields.string("Who must do it (an active user).", raw=True)
    dueDate = w.fields.date("Due date, today or later")
    notes = _NOTES


def _new_activity(state: State, args: _Logged | _Scheduled, owner_id: str) -> Activity:
    return {
        "id": w.records.next_id(state, "ACT"),
        "type": args.type,
        "subject": args.subject.strip(),
        "ownerId": owner_id,
        "relatedTo": {"type": args.relatedType, "id": args.relatedId},
        "createdDate": w.clock.today(state),
        "dueDate": None,
        "completedDate": None,
        "notes": args.notes,
    }


class _ActivityFilters(w.Input):
    ownerId = w.fields.string("Only activities owned by this user id.", default=None, raw=True)
    relatedType = w.fields.enum(
        "Only activities about this kind of record.", RELATED_TYPES, default=None
    )
    relatedId = w.fields.string("Only activities about this record id.", default=None, raw=True)
    type = w.fields.enum("Only activities of this type.", TYPES, default=None)
    openOnly = w.fields.boolean("Only activities not yet completed.", default=False)
    overdueOnly = w.fields.boolean("Only open activities whose due date has passed.", default=False)
    limit = w.fields.LIMIT
    offset = w.fields.OFFSET


def _about(state: State, activity: Activity, args: _ActivityFilters) -> bool:
    related = activity["relatedTo"]
    return (
        args.ownerId in (None, activity["ownerId"])
        and args.type in (None, activity["type"])
        and args.relatedType in (None, related["type"])
        and args.relatedId in (None, related["id"])
        and (not args.openOnly or is_activity_open(activity))
        and (not args.overdueOnly or is_activity_overdue(state, activity))
    )


@w.define_tool(_ActivityFilters)
def list_activities(state: State, args: _ActivityFilters) -> dict[str, Any]:
    """List activities sorted by id, filtered by owner, related record, type, or only open or
    overdue ones. Paged.

    Activities matching the filters (a related record named in full must exist).
    """
    w.records.check_references(state, args, FILTERS)
    if args.relatedId is not None and args.relatedType is not None:
        w.records.require_record(state, RELATED_COLLECTIONS[args.relatedType], args.relatedId)
    rows = [a for a in w.tools.sorted_by_id(state["activities"]) if _about(state, a, args)]
    return w.tools.paginate(rows, args, lambda a: activity_view(state, a))


ACTIVITIES = w.Collection("activities", "activityId", "ACT-012", view=activity_view)
get_activity = ACTIVITIES.get_tool("One activity.")


@ACTOR.write_tool(_Logged)
def log_activity(call: w.Write[_Logged]) -> dict[str, Any]:
    """Record something that already happened today (a call, email, meeting, task or note). It is
    created completed and owned by the actor unless ownerId is given.
    """
    state, args = call.state, call.args
    owner_id = call.actor["id"] if args.ownerId is None else args.ownerId
    work_owner(state, owner_id, "activities")
    w.records.require_record(state, RELATED_COLLECTIONS[args.relatedType], args.relatedId)
    activity = _new_activity(state, args, owner_id)
    activity["dueDate"] = w.clock.today(state)
    activity["completedDate"] = w.clock.today(state)
    call.add(ACTIVITY, activity, f"Logged {args.type}.")
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


@ACTOR.write_tool(_Scheduled)
def schedule_activity(call: w.Write[_Scheduled]) -> dict[str, Any]:
    """Schedule an open follow-up (call, email, meeting or task) due today or later, for an active
    owner. Follow-ups cannot be scheduled on closed deals or closed leads.
    """
    state, args = call.state, call.args
    work_owner(state, args.ownerId, "activities")
    w.records.require_record(state, RELATED_COLLECTIONS[args.relatedType], args.relatedId)
    due = future_date(state, "dueDate", args.dueDate)
    _check_related_open(state, args.relatedType, args.relatedId)
    activity = _new_activity(state, args, args.ownerId)
    activity["dueDate"] = due
    call.add(ACTIVITY, activity, f"Scheduled {args.type} for {args.ownerId} due {due}.")
    return {"created": activity_view(state, activity)}


class _Completion(w.Input):
    notes = w.fields.string("Notes to append.", default=None, raw=True)


@ACTOR.write_tool(_Completion, target=OPEN_ACTIVITY)
def complete_activity(call: w.Write[_Completion]) -> dict[str, Any]:
    """Mark an open activity as done today, optionally adding notes."""
    activity, notes = call.record, call.args.notes
    call.set("completedDate", w.clock.today(call.state))
    if notes is not None:
        call.set("notes", f"{activity['notes']}\n{notes}".strip())
    call.audit("Completed.")
    return {"updated": activity_view(call.state, activity)}


class _NewDue(w.Input):
    dueDate = w.fields.date("New due date, today or later")


@ACTOR.write_tool(_NewDue, target=OPEN_ACTIVITY)
def reschedule_activity(call: w.Write[_NewDue]) -> dict[str, Any]:
    """Move an open activity's due date (today or later)."""
    activity = call.record
    due = future_date(call.state, "dueDate", call.args.dueDate)
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
