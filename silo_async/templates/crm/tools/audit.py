"""The audit log: every write, who made it, when (simulated time) and what changed."""

from __future__ import annotations

from typing import Any

from ..state import State
from .contract import PAGING, crm_tool, filters_match, paginate, string
from .helpers import not_found

__all__ = ["get_audit_event", "list_audit_events"]


@crm_tool(
    "list_audit_events",
    "Audit events, newest first, optionally for one record, actor or action (tool name). Paged.",
    {
        "entityId": string("Only events about this record id."),
        "actorUserId": string("Only events by this user id."),
        "action": string("Only events of this action, e.g. reassign_opportunity."),
        **PAGING,
    },
)
def list_audit_events(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Audit events matching the filters."""
    events = [
        e
        for e in reversed(state["auditLog"])
        if filters_match(input, e, ("entityId", "actorUserId", "action"))
    ]
    return paginate(events, input)


@crm_tool(
    "get_audit_event",
    "One audit event by id.",
    {"auditId": string("Audit event id, e.g. AUD-0002.")},
    ["auditId"],
)
def get_audit_event(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """An audit event."""
    for event in state["auditLog"]:
        if event["id"] == input["auditId"]:
            return dict(event)
    raise not_found("Audit event", input["auditId"], "auditLog")
