"""Time logs: hours members spend on work items."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State, is_closed
from .helpers import ACTOR, ITEM, TIME_LOG, check_filters, require, state_name

__all__ = ["delete_time_log", "get_time_log", "list_time_logs", "log_time", "update_time_log"]

MIN_HOURS = 0.25
MAX_HOURS_PER_DAY = 12.0


def _hours(value: float) -> float:
    if value < MIN_HOURS or value > MAX_HOURS_PER_DAY or (value * 4) != int(value * 4):
        raise silo.tool_error(
            "invalid_input",
            f'"hours" must be between {MIN_HOURS:g} and {MAX_HOURS_PER_DAY:g} in quarter hours; '
            f"received {value:g}.",
        )
    return float(value)


def _log_date(state: State, input: dict[str, Any], member: Record) -> str:
    day = w.fields.read_date(input, "date", None) or w.clock.today(state)
    if day > w.clock.today(state):
        raise silo.tool_error(
            "invalid_input", f"date {day} is in the future; today is {w.clock.today(state)}."
        )
    if day < member["joinedOn"]:
        raise silo.tool_error(
            "invalid_input", f"{member['id']} joined on {member['joinedOn']}, after {day}."
        )
    if member.get("departedOn") and day > member["departedOn"]:
        raise silo.tool_error(
            "not_allowed",
            f"{member['id']} ({member['name']}) left on {member['departedOn']}; no time can be "
            f"logged for them on {day}.",
        )
    return day


def _check_open(state: State, item: Record, verb: str = "logged") -> None:
    if is_closed(state, item):
        raise silo.tool_error(
            "not_allowed",
            f"Work item {item['id']} is {state_name(state, item['statusId'])} (since "
            f"{item['statusChangedOn']}); time cannot be {verb} on a closed item.",
            {"workItemId": item["id"], "statusId": item["statusId"]},
        )


def _check_daily_total(
    state: State, member_id: str, day: str, hours: float, skip: str | None = None
) -> None:
    booked = sum(
        float(t["hours"])
        for t in state["timeLogs"].values()
        if t["memberId"] == member_id and t["date"] == day and t["id"] != skip
    )
    if booked + hours > MAX_HOURS_PER_DAY:
        booked = w.amounts.round_half_up(booked, 2)
        raise silo.tool_error(
            "limit_exceeded",
            f"{member_id} already has {booked:g} hours on {day}; {hours:g} more would "
            f"pass the {MAX_HOURS_PER_DAY:g}-hour daily limit.",
            {"memberId": member_id, "date": day, "bookedHours": booked},
        )


@ACTOR.write_tool(
    {
        "workItemId": w.schema.string("Work item id."),
        "memberId": w.schema.string("Member who did the work (default: the actor)."),
        "hours": w.schema.number("Hours worked, 0.25 to 12 in quarter hours."),
        "date": w.schema.date("Day worked (default today)."),
        "note": w.schema.string("What was done."),
    },
    ["workItemId", "hours"],
)
def log_time(call: w.Write) -> dict[str, Any]:
    """Log hours on an open work item for a member (default: the actor) on a date (default: today).
    Hours come in quarter hours, at most 12 per member per day; closed items take no time.
    """
    state, input = call.state, call.input
    item = ITEM.find(state, input)
    member = require(state, "members", str(input.get("memberId", call.actor["id"])))
    _check_open(state, item)
    hours = _hours(input["hours"])
    day = _log_date(state, input, member)
    _check_daily_total(state, member["id"], day, hours)
    log: Record = {
        "id": w.records.next_id(state, "TL"),
        "workItemId": item["id"],
        "memberId": member["id"],
        "date": day,
        "hours": hours,
        "note": input.get("note", ""),
    }
    audit_id = call.add(TIME_LOG, log, f"{hours} h on {item['id']} for {member['id']} ({day})")
    return {"created": log, "auditId": audit_id}


@w.define_tool(
    {
        "workItemId": w.schema.string("Only logs on this item."),
        "memberId": w.schema.string("Only logs by this member."),
        "projectId": w.schema.string("Only logs on this project's items."),
        "from": w.schema.date("Only logs on or after this date."),
        "to": w.schema.date("Only logs on or before this date."),
        **w.schema.PAGING,
    }
)
def list_time_logs(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """List time logs (sorted by id) with the total hours of every matching log."""
    check_filters(state, input, "workItemId", "memberId", "projectId")
    start = w.fields.read_date(input, "from", None)
    end = w.fields.read_date(input, "to", None)
    if start is not None and end is not None and end < start:
        raise silo.tool_error("invalid_input", f'"to" {end} is before "from" {start}.')
    items = state["workItems"]
    rows = [
        t
        for t in state["timeLogs"].values()
        if input.get("workItemId") in (None, t["workItemId"])
        and input.get("memberId") in (None, t["memberId"])
        and input.get("projectId") in (None, items[t["workItemId"]]["projectId"])
        and (start is None or t["date"] >= start)
        and (end is None or t["date"] <= end)
    ]
    page = w.tools.paginate(rows, input)
    page["totalHours"] = w.amounts.round_half_up(sum(float(t["hours"]) for t in rows), 2)
    return page


TIME_LOGS = w.Collection("timeLogs", "timeLogId", "TL-007")
get_time_log = TIME_LOGS.get_tool("Read one time log.")


@ACTOR.write_tool(
    {
        "hours": w.schema.number("Corrected hours."),
        "date": w.schema.date("Corrected date."),
        "note": w.schema.string("Corrected note."),
    },
    target=TIME_LOG,
)
def update_time_log(call: w.Write) -> dict[str, Any]:
    """Correct a time log's hours, date or note. Logs on closed items cannot be edited."""
    state, input, log = call.state, call.input, call.record
    _check_open(state, state["workItems"][log["workItemId"]], "changed")
    if not any(k in input for k in ("hours", "date", "note")):
        raise silo.tool_error("invalid_input", "Give at least one of hours, date or note.")
    member = state["members"][log["memberId"]]
    hours = _hours(input["hours"]) if "hours" in input else float(log["hours"])
    day = (
        _log_date(state, {"date": w.fields.read_date(input, "date")}, member)
        if "date" in input
        else log["date"]
    )
    _check_daily_total(state, member["id"], day, hours, skip=log["id"])
    before = f"{log['hours']} h on {log['date']}"
    log.update({"hours": hours, "date": day, "note": input.get("note", log["note"])})
    audit_id = call.audit(f"{before} -> {hours} h on {day}")
    return {"updated": log, "auditId": audit_id}


@ACTOR.write_tool(
    {"reason": w.schema.string("Why the log is removed.")}, ["reason"], target=TIME_LOG
)
def delete_time_log(call: w.Write) -> dict[str, Any]:
    """Delete a time log that should not exist, giving the reason (kept in the audit log)."""
    log = call.record
    del call.state["timeLogs"][log["id"]]
    reason = call.input["reason"]
    detail = f"Deleted {log['hours']} h on {log['workItemId']} ({log['date']}): {reason}"
    return {"removed": log, "auditId": call.audit(detail)}
