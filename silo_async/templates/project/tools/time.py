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


def _log_date(state: State, date: str | None, member: Record) -> str:
    day = date or w.clock.today(state)
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


class _Log(w.Input):
    workItemId = w.fields.string("Work item id.", raw=True)
    memberId = w.fields.string(
        "Member who did the work (default: the actor).", default=None, raw=True
    )
    hours = w.fields.number("Hours worked, 0.25 to 12 in quarter hours.", raw=True)
    date = w.fields.date("Day worked (default today).", default=None)
    note = w.fields.string("What was done.", default="", raw=True)


@ACTOR.write_tool(_Log)
def log_time(call: w.Write[_Log]) -> dict[str, Any]:
    """Log hours on an open work item for a member (default: the actor) on a date (default: today).
    Hours come in quarter hours, at most 12 per member per day; closed items take no time.
    """
    state, args = call.state, call.args
    item = ITEM.find(state, call.input)  # the item's id is this tool's own field, read as given
    member_id = call.actor["id"] if args.memberId is None else args.memberId
    member = require(state, "members", str(member_id))
    _check_open(state, item)
    hours = _hours(args.hours)
    day = _log_date(state, args.date, member)
    _check_daily_total(state, member["id"], day, hours)
    log: Record = {
        "id": w.records.next_id(state, "TL"),
        "workItemId": item["id"],
        "memberId": member["id"],
        "date": day,
        "hours": hours,
        "note": args.note,
    }
    audit_id = call.add(TIME_LOG, log, f"{hours} h on {item['id']} for {member['id']} ({day})")
    return {"created": log, "auditId": audit_id}


class _LogFilters(w.Input):
    workItemId = w.fields.string("Only logs on this item.", default=None, raw=True)
    memberId = w.fields.string("Only logs by this member.", default=None, raw=True)
    projectId = w.fields.string("Only logs on this project's items.", default=None, raw=True)
    from_ = w.fields.date("Only logs on or after this date.", default=None)
    to = w.fields.date("Only logs on or before this date.", default=None)
    limit = w.fields.LIMIT
    offset = w.fields.OFFSET


@w.define_tool(_LogFilters)
def list_time_logs(state: State, args: _LogFilters) -> dict[str, Any]:
    """List time logs (sorted by id) with the total hours of every matching log."""
    check_filters(state, args, "workItemId", "memberId", "projectId")
    start, end = args.from_, args.to
    if start is not None and end is not None and end < start:
        raise silo.tool_error("invalid_input", f'"to" {end} is before "from" {start}.')
    items = state["workItems"]
    rows = [
        t
        for t in state["timeLogs"].values()
        if args.workItemId in (None, t["workItemId"])
        and args.memberId in (None, t["memberId"])
        and args.projectId in (None, items[t["workItemId"]]["projectId"])
        and (start is None or t["date"] >= start)
        and (end is None or t["date"] <= end)
    ]
    page = w.tools.paginate(rows, args)
    page["totalHours"] = w.amounts.round_half_up(sum(float(t["hours"]) for t in rows), 2)
    return page


TIME_LOGS = w.Collection("timeLogs", "timeLogId", "TL-007")
get_time_log = TIME_LOGS.get_tool("Read one time log.")


class _LogChanges(w.Input):
    hours = w.fields.number("Corrected hours.", default=None, raw=True)
    date = w.fields.date("Corrected date.", default=None)
    note = w.fields.string("Corrected note.", default=None, raw=True)


@ACTOR.write_tool(_LogChanges, target=TIME_LOG)
def update_time_log(call: w.Write[_LogChanges]) -> dict[str, Any]:
    """Correct a time log's hours, date or note. Logs on closed items cannot be edited."""
    state, args, log = call.state, call.args, call.record
    _check_open(state, state["workItems"][log["workItemId"]], "changed")
    if not w.fields.given(args):
        raise silo.tool_error("invalid_input", "Give at least one of hours, date or note.")
    member = state["members"][log["memberId"]]
    hours = float(log["hours"]) if args.hours is None else _hours(args.hours)
    date = args.date
    day = log["date"] if date is None else _log_date(state, date, member)
    _check_daily_total(state, member["id"], day, hours, skip=log["id"])
    before = f"{log['hours']} h on {log['date']}"
    note = log["note"] if args.note is None else args.note
    log.update({"hours": hours, "date": day, "note": note})
    audit_id = call.audit(f"{before} -> {hours} h on {day}")
    return {"updated": log, "auditId": audit_id}


class _Removal(w.Input):
    reason = w.fields.string("Why the log is removed.", raw=True)


@ACTOR.write_tool(_Removal, target=TIME_LOG)
def delete_time_log(call: w.Write[_Removal]) -> dict[str, Any]:
    """Delete a time log that should not exist, giving the reason (kept in the audit log)."""
    log = call.record
    del call.state["timeLogs"][log["id"]]
    reason = call.args.reason
    detail = f"Deleted {log['hours']} h on {log['workItemId']} ({log['date']}): {reason}"
    return {"removed": log, "auditId": call.audit(detail)}
