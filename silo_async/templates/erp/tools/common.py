"""Who may act, work in an area and approve, shared by every tool area.

Messages name the rule and the current state, so an agent can recover from a rejection without
guessing: ``Otto Reinholt (USR-008, buyer) may approve purchase orders up to 5,000.00 EUR;
PO-1008 is 6,920.00 EUR.``
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import (
    Record,
    State,
    approval_limit,
    authorised_approvers,
    full_name,
    has_permission,
    money_text,
)

__all__ = [
    "KIND_LABELS",
    "Guard",
    "Note",
    "Reason",
    "actor",
    "change",
    "changed",
    "in_status",
    "named",
    "record_decision",
    "require_authority",
    "require_permission",
    "target",
    "update_fields",
    "who",
]

#: ``guard(state, record)``: raises ``ToolError`` when the record may not change.
Guard = Callable[[Any, Any], None]


class Reason(w.Input):
    """The input of a write that needs to know only why it happens."""

    reason = w.fields.string("Why.")


class Note(w.Input):
    """The input of a decision that may carry a note."""

    comment = w.fields.string("Optional note.", default=None)


#: The ``actorId`` every write takes: who is doing it (must be an active user).
_ACTOR_ID = w.fields.string(
    "Id of the user making this change, e.g. USR-003. Must be an active user."
)

#: How messages name each kind of approval.
KIND_LABELS: dict[str, str] = {
    "requisition": "requisitions",
    "purchase_order": "purchase orders",
    "vendor_invoice": "vendor invoices",
    "payment": "payments",
    "expense": "expense claims",
    "budget_transfer": "budget transfers",
    "credit_limit": "credit limits",
    "write_off": "write-offs",
}

_AREAS: dict[str, str] = {
    "purchasing": "purchasing work (requisitions to RFQs and orders)",
    "warehouse": "warehouse work (receiving, stock, transfers, shipping)",
    "payables": "accounts payable work (vendor invoices and payments)",
    "receivables": "accounts receivable work (customer invoices, receipts, reminders)",
    "sales": "sales order work",
    "treasury": "treasury work (bank details, executing payments)",
    "vendorMaster": "vendor master data changes",
    "customerMaster": "customer master data changes",
    "budgets": "budget changes",
}


def who(state: State, user: Mapping[str, Any]) -> str:
    """``Sanne Verbeek (USR-003, finance_manager)``."""
    return f"{full_name(user)} ({user['id']}, {user['roleId']})"


def named(state: State, collection: str, record_id: str) -> Record:
    """The record of ``collection`` whose id is ``record_id`` (a field's value, already read).

    Raises:
        ToolError: ``not_found`` for an unknown id.
    """
    record: Record = w.records.require_record(state, collection, record_id)
    return record


def _active_user(state: State, user_id: str) -> Record:
    """The active user ``user_id`` (already read: stripped, not empty).

    Raises:
        ToolError: ``not_found`` for an unknown id, ``not_allowed`` for a user who has left.
    """
    user: Record = w.records.require_record(state, "users", user_id, "User")
    if not user["active"]:
        raise silo.tool_error(
            "not_allowed",
            f"{who(state, user)} is no longer active (left {user['endDate']}) and cannot act.",
            {"userId": user["id"], "active": False},
        )
    return user


def require_permission(state: State, user: Mapping[str, Any], *areas: str) -> None:
    """``not_allowed`` unless ``user``'s role works in one of ``areas``.

    The roles of each area are ``policies.permissions``.
    """
    if not any(has_permission(state, user, area) for area in areas):
        roles = sorted({r for area in areas for r in state["policies"]["permissions"][area]})
        work = " or ".join(_AREAS[area] for area in areas)
        raise silo.tool_error(
            "not_allowed",
            f"{who(state, user)} cannot do {work}; it needs one of the roles {', '.join(roles)}.",
            {"userId": user["id"], "role": user["roleId"], "allowedRoles": roles},
        )


def require_authority(
    state: State, user: Mapping[str, Any], kind: str, amount: float, label: str
) -> None:
    """``user`` may approve ``amount`` of ``kind`` (``label`` names the document).

    Raises:
        ToolError: ``not_allowed`` when the role cannot approve ``kind`` at all,
            ``limit_exceeded`` when ``amount`` is above the role's limit; both name who could.
    """
    limit = approval_limit(state, user, kind)
    if limit is not None and amount <= limit:
        return
    could = [u["id"] for u in authorised_approvers(state, kind, amount, [user["id"]])][:4]
    hint = f" Authorised: {', '.join(could)}." if could else ""
    details = {"userId": user["id"], "role": user["roleId"], "limit": limit, "amount": amount}
    if limit is None:
        raise silo.tool_error(
            "not_allowed",
            f"{who(state, user)} cannot approve {KIND_LABELS[kind]}; {label} is "
            f"{money_text(amount)}.{hint}",
            details,
        )
    raise silo.tool_error(
        "limit_exceeded",
        f"{who(state, user)} may approve {KIND_LABELS[kind]} up to {money_text(limit)}; "
        f"{label} is {money_text(amount)}.{hint}",
        details,
    )


def record_decision(
    state: State,
    kind: str,
    document_id: str,
    amount: float,
    actor: Mapping[str, Any],
    decision: str,
    comment: str | None = None,
) -> str:
    """Store a decision taken directly (no request first) as an approval record; its id."""
    approval_id = w.records.next_id(state, "APR", width=4)
    state["approvals"][approval_id] = {
        "id": approval_id,
        "documentType": kind,
        "documentId": document_id,
        "amount": amount,
        "requestedBy": None,
        "requestedAt": w.clock.now(state),
        "assigneeId": actor["id"],
        "status": decision,
        "decidedBy": actor["id"],
        "decidedAt": w.clock.now(state),
        "comment": comment,
    }
    return approval_id


@functools.cache
def actor(*areas: str) -> w.Actor:
    """The ``actorId`` of a write tool: an active user, working in one of ``areas`` if any.

    Resolved before anything else: its id is read (stripped, not empty), the user must exist
    (``not_found``) and not have left (``not_allowed``), then :func:`require_permission`.
    ``actor().resolve(state, user_id)`` checks any other user an input names the same way.
    """

    def resolve(state: State, actor_id: str) -> Record:
        user = _active_user(state, actor_id)
        if areas:
            require_permission(state, user, *areas)
        return user

    return w.Actor(_ACTOR_ID, resolve)


def target(
    collection: str,
    key: str,
    description: str,
    entity: str,
    guard: Guard | None = None,
    label: str | None = None,
) -> w.Target:
    """The record a write acts on, its id read as a string field (stripped, never empty)."""
    return w.Target(collection, key, w.fields.string(description), entity, guard, label)


def in_status(
    kind: w.Target, allowed: Sequence[str], action: str, label: str | None = None
) -> w.Target:
    """``kind`` guarded: its record must be in one of ``allowed`` to ``action``.

    A record in another status is refused by ``require_status`` (``invalid_state``).
    """
    collection = kind.collection

    def guard(state: State, record: Record) -> None:
        w.records.require_status(record, collection, allowed, action, label=label)

    return kind.guarded(guard)


def change(
    call: w.Write,
    detail: str | None,
    record: Record | None = None,
    entity: str | None = None,
    **fields: Any,
) -> str:
    """Set ``fields`` on the call's target (or ``record``, of type ``entity``); the audit id.

    One entry records what really changed (an equal value is not a change).
    """
    record = call.record if record is None else record
    changes: list[w.records.Change] = []
    for field, value in fields.items():
        w.records.set_field(record, field, value, changes)
    return call.audit(detail or "", changes, entity=entity, entity_id=record["id"])


def changed(
    call: w.Write, view: w.tools.View | None, detail: str | None, **fields: Any
) -> dict[str, Any]:
    """:func:`change`, answered ``{updated, auditId}``: the target through ``view`` (or as is)."""
    audit_id = change(call, detail, **fields)
    shown = call.record if view is None else view(call.state, call.record)
    return {"updated": shown, "auditId": audit_id}


def update_fields(call: w.Write, values: Mapping[str, Any], noun: str) -> str:
    """Set each of ``values`` that is given (not None) on the target and audit what changed.

    Raises:
        ToolError: ``conflict`` when the target already has every value given.
    """
    for field, value in values.items():
        if value is not None:
            call.set(field, value)
    if not call.changes:
        raise silo.tool_error("conflict", f"{noun} {call.record['id']} already has these values.")
    return call.audit(f"Updated {', '.join(c['field'] for c in call.changes)}.")
