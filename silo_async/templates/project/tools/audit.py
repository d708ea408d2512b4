"""Audit: the append-only record of every change."""

from __future__ import annotations

from typing import Any

import silo_async as silo

from ..state import State
from .contract import PAGING, define, paginate, string
from .helpers import check_filters

__all__ = ["get_audit_entry", "list_audit_entries"]


@define(
    "list_audit_entries",
    "List audit entries, oldest first, optionally for one entity, actor or action.",
    {
        "entityId": string("Only entries about this record, e.g. WI-012."),
        "actorId": string("Only entries by this member."),
        "action": string("Only entries of this action (the tool name), e.g. assign_work_item."),
        **PAGING,
    },
)
def list_audit_entries(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Filtered, paged audit entries."""
    check_filters(state, input, "actorId")
    rows = [
        e
        for e in state["auditLog"]
        if all(input.get(k) in (None, e[k]) for k in ("entityId", "actorId", "action"))
    ]
    return paginate(rows, input)


@define(
    "get_audit_entry",
    "Read one audit entry.",
    {"auditId": string("Audit entry id, e.g. AUD-0003.")},
    ["auditId"],
)
def get_audit_entry(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """One audit entry."""
    for entry in state["auditLog"]:
        if entry["id"] == input["auditId"]:
            return dict(entry)
    raise silo.tool_error("not_found", f'Audit entry "{input["auditId"]}" was not found.')
