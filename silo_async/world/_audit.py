"""The audit log: every write, who made it, when (simulated time) and what changed.

``state["auditLog"]`` is a list of entries, appended in order, with ids ``AUD-0001``,
``AUD-0002``, ... (four digits, counter ``state["sequences"]["AUD"]``)::

    {"id", "at", "actorId", "action", "entityType", "entityId", "detail", "changes"}

``action`` is the name of the tool that wrote, ``changes`` a list of ``{field, from, to}``.
:data:`list_audit_entries` lists entries **oldest first** (ascending id), like every other list
in a world; page from ``offset = total - limit`` for the latest ones.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .._errors import ToolError
from .._verify import Check, check
from ._dates import now
from ._define import define_tool
from ._fields import Input
from ._kinds import LIMIT, OFFSET, string
from ._lists import paginate
from ._records import Change, next_id

__all__ = [
    "audit",
    "get_audit_entry",
    "list_audit_entries",
    "new_audit_entries",
    "written_by",
]


def audit(
    state: Mapping[str, Any],
    actor_id: str,
    action: str,
    entity_type: str,
    entity_id: str,
    detail: str,
    changes: Sequence[Change] = (),
) -> str:
    """Append one entry stamped with the simulated clock and return its id (``AUD-NNNN``)."""
    entry_id = next_id(state, "AUD", width=4)
    state["auditLog"].append(
        {
            "id": entry_id,
            "at": now(state),
            "actorId": actor_id,
            "action": action,
            "entityType": entity_type,
            "entityId": entity_id,
            "detail": detail,
            "changes": [dict(change) for change in changes],
        }
    )
    return entry_id


class _AuditFilters(Input):
    entityType = string("Only entries about this kind of record, e.g. vendor.", default=None)
    entityId = string("Only entries about this record id.", default=None)
    actorId = string("Only entries written by this actor id.", default=None)
    action = string("Only entries of this action (a tool name), e.g. block_vendor.", default=None)
    limit = LIMIT
    offset = OFFSET


@define_tool(
    "list_audit_entries",
    "List audit entries oldest first (ascending id), optionally only those about one record or "
    "kind of record, by one actor, or of one action (the name of the tool that wrote). Paged: "
    "for the latest entries use offset = total - limit.",
    _AuditFilters,
)
def list_audit_entries(state: Any, args: _AuditFilters) -> dict[str, Any]:
    """Audit entries matching the filters, oldest first."""
    filters = ("entityType", "entityId", "actorId", "action")
    wanted = {key: getattr(args, key) for key in filters}
    rows = [
        entry
        for entry in state["auditLog"]
        if all(value is None or entry.get(key) == value for key, value in wanted.items())
    ]
    return paginate(rows, args)


class _Entry(Input):
    auditId = string("Audit entry id, e.g. AUD-0003.")


@define_tool("get_audit_entry", "Read one audit entry by id.", _Entry)
def get_audit_entry(state: Any, args: _Entry) -> dict[str, Any]:
    """One audit entry."""
    audit_id = args.auditId
    for entry in state["auditLog"]:
        if entry["id"] == audit_id:
            return dict(entry)
    raise ToolError(
        "not_found",
        f'Audit entry "{audit_id}" was not found.',
        {"collection": "auditLog", "id": audit_id},
    )


def new_audit_entries(final: Mapping[str, Any], initial: Mapping[str, Any]) -> list[Any]:
    """The entries appended during a rollout (verifier side)."""
    known = {entry["id"] for entry in initial["auditLog"]}
    return [entry for entry in final["auditLog"] if entry["id"] not in known]


def written_by(
    final: Mapping[str, Any],
    initial: Mapping[str, Any],
    actor_id: str | Collection[str],
    actions: Collection[str] | None = None,
    *,
    label: str | None = None,
) -> Check:
    """A required check: every audit entry the rollout wrote names ``actor_id`` as its actor.

    A task that says who acts ("Acting as Noor (USR-003)") is done only when the changes are
    that person's: the same write made as someone else leaves another world (the audit log
    says who did it), which ``silo-async audit`` proves a verifier notices. ``actions`` limits
    the check to entries of those tools, for a task where two people act. With no entry to
    look at the check passes: the task's other checks say whether the work was done.

    Args:
        final: the world after the rollout.
        initial: the world before it.
        actor_id: who must have made the changes (or the ids of those who may have: "You may
            act as USR-006 or USR-007").
        actions: only entries of these actions (tool names) must name ``actor_id``.
        label: the check's label (default ``every change was made as <actor_id>``).
    """
    entries = [
        e
        for e in new_audit_entries(final, initial)
        if actions is None or e.get("action") in actions
    ]
    allowed = {actor_id} if isinstance(actor_id, str) else set(actor_id)
    who = " or ".join(sorted(allowed))
    others = [e for e in entries if e.get("actorId") not in allowed]
    detail = ", ".join(f"{e['id']} {e.get('action')} by {e.get('actorId')}" for e in others[:5])
    what = label or f"every change was made as {who}"
    return check(what, not others, detail or f"{len(entries)} entries by {who}")
