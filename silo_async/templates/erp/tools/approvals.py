"""Approvals: requests, decisions within limits, reassignment and revocation.

Requisitions and purchase orders are submitted to a named approver (a pending approval); only
that assignee decides, within their role's limit. Vendor invoices, payments and expenses are
decided directly, and the decision is recorded the same way. An approval that should not have
been given can be revoked by someone authorised for its amount, which sends the document back
a step (an approved purchase order not yet sent returns to draft).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.purchasing import pending_approval
from ..environment import DOCUMENT_COLLECTIONS
from ..state import APPROVAL_KINDS, Record, State, has_permission
from .common import (
    KIND_LABELS,
    Reason,
    actor,
    change,
    changed,
    in_status,
    require_authority,
    target,
    who,
)

__all__ = [
    "decide",
    "get_approval",
    "list_approvals",
    "list_approvals_for_document",
    "list_pending_approvals",
    "reassign_approval",
    "request_approval",
    "revoke_approval",
]

STATUSES = ("pending", "approved", "rejected", "revoked", "cancelled")
#: The tool that decides a pending approval of each kind.
DECIDE_WITH = {"requisition": "approve_requisition", "purchase_order": "approve_purchase_order"}
#: kind -> (document status an approval can be revoked in, the status it returns to).
_REVOCABLE = {
    "requisition": ("approved", "draft"),
    "purchase_order": ("approved", "draft"),
    "vendor_invoice": ("approved", "matched"),
    "payment": ("approved", "draft"),
    "expense": ("approved", "submitted"),
}


def request_approval(
    state: State, kind: str, document_id: str, amount: float, approver_id: str, actor: Record
) -> Record:
    """Create a pending approval assigned to ``approver_id`` (who must be authorised)."""
    approver = w.records.require_record(state, "users", approver_id, "User")
    if approver["id"] == actor["id"]:
        raise silo.tool_error(
            "not_allowed", f"{who(state, actor)} cannot submit {document_id} to themselves."
        )
    if not approver["active"]:
        raise silo.tool_error("not_allowed", f"{who(state, approver)} is no longer active.")
    require_authority(state, approver, kind, amount, document_id)
    approval_id = w.records.next_id(state, "APR", width=4)
    approval: Record = {
        "id": approval_id,
        "documentType": kind,
        "documentId": document_id,
        "amount": amount,
        "requestedBy": actor["id"],
        "requestedAt": w.clock.now(state),
        "assigneeId": approver["id"],
        "status": "pending",
        "decidedBy": None,
        "decidedAt": None,
        "comment": None,
        "revokedBy": None,
        "revokedAt": None,
    }
    state["approvals"][approval_id] = approval
    return approval


def decide(
    state: State,
    document: Mapping[str, Any],
    kind: str,
    amount: float,
    actor: Record,
    decision: str,
    comment: str | None,
    guard: Callable[[], None] | None = None,
) -> Record:
    """The assignee approves (within their limit) or rejects a document's pending approval.

    ``guard`` runs after the approver's checks and before anything changes (a budget check).
    """
    approval = pending_approval(state, document["id"])
    if approval is None:
        raise silo.tool_error("invalid_state", f"{document['id']} has no pending approval.")
    if approval["assigneeId"] != actor["id"]:
        assignee = state["users"][approval["assigneeId"]]
        raise silo.tool_error(
            "not_allowed",
            f"{approval['id']} for {document['id']} is assigned to {who(state, assignee)}, not "
            f"{actor['id']}; reassign it first (reassign_approval).",
            {"approvalId": approval["id"], "assigneeId": assignee["id"]},
        )
    if decision == "approved":
        require_authority(state, actor, kind, amount, document["id"])
    if guard is not None:
        guard()
    approval.update(
        status=decision,
        decidedBy=actor["id"],
        decidedAt=w.clock.now(state),
        comment=comment,
        amount=amount,
    )
    return approval


def _view(state: State, approval: Any) -> dict[str, Any]:
    return {**approval, "decideWith": DECIDE_WITH.get(approval["documentType"])}


APPROVALS = w.Collection("approvals", "approvalId", "APR-0012", view=_view)
list_approvals = APPROVALS.list_tool(
    "List approvals (requests and decisions) sorted by id; filter by status, kind of document, "
    "document, assignee or who decided. Paged.",
    filters={
        "status": w.schema.enum("Only approvals with this status.", STATUSES),
        "documentType": w.schema.enum("Only this kind of document.", APPROVAL_KINDS),
        "documentId": w.schema.string("Only approvals of this document, e.g. PO-1008."),
        "assigneeId": w.schema.string("Only approvals assigned to this user."),
        "decidedBy": w.schema.string("Only approvals decided by this user."),
    },
    references={"assigneeId": "users", "decidedBy": "users"},
)
get_approval = APPROVALS.get_tool("One approval.")
list_pending_approvals = APPROVALS.list_tool(
    "Pending approval requests sorted by id, each with the tool that decides it; optionally "
    "for one assignee. Paged.",
    filters={"assigneeId": w.schema.string("Only requests assigned to this user.")},
    references={"assigneeId": "users"},
    where=lambda state, a, input: a["status"] == "pending",
    name="list_pending_approvals",
)


class _Document(w.Input):
    documentId = w.fields.string("The document, e.g. REQ-4007.")


@w.define_tool(_Document)
def list_approvals_for_document(state: State, args: _Document) -> dict[str, Any]:
    """Every approval of one document, oldest first."""
    document_id = args.documentId
    rows = [
        _view(state, a)
        for a in w.tools.sorted_by_id(state["approvals"])
        if a["documentId"] == document_id
    ]
    return {"documentId": document_id, "approvals": rows}


def _may_reassign(state: State, actor: Record, approval: Record) -> bool:
    assignee = state["users"][approval["assigneeId"]]
    return actor["id"] in (
        approval["assigneeId"],
        approval["requestedBy"],
        assignee["managerId"],
    ) or has_permission(state, actor, "budgets")


def _approval_in(status: str, action: str, description: str) -> w.Target:
    return in_status(target("approvals", "approvalId", description, "approval"), (status,), action)


class _Reassignment(w.Input):
    newAssigneeId = w.fields.string("The new approver.")
    reason = w.fields.string("Why.")


@actor().write_tool(
    _Reassignment, target=_approval_in("pending", "be reassigned", "The pending approval.")
)
def reassign_approval(call: w.Write[_Reassignment]) -> dict[str, Any]:
    """Give a pending approval to another approver, who must be authorised for its amount. Allowed
    for the current assignee, the requester, the assignee's manager and finance (budget) roles.
    """
    state, args, actor, approval = call.state, call.args, call.actor, call.record
    if not _may_reassign(state, actor, approval):
        raise silo.tool_error(
            "not_allowed",
            f"{who(state, actor)} cannot reassign {approval['id']}: only its assignee, requester, "
            "the assignee's manager or finance can.",
        )
    new = w.records.require_record(state, "users", args.newAssigneeId, "User")
    if new["id"] == approval["assigneeId"]:
        raise silo.tool_error("conflict", f"{approval['id']} is already assigned to {new['id']}.")
    if new["id"] == approval["requestedBy"] or not new["active"]:
        raise silo.tool_error(
            "not_allowed", f"{who(state, new)} cannot decide {approval['documentId']}."
        )
    require_authority(
        state, new, approval["documentType"], approval["amount"], approval["documentId"]
    )
    return changed(call, _view, args.reason, assigneeId=new["id"])


def _roll_back(call: w.Write) -> None:
    state, approval = call.state, call.record
    kind = approval["documentType"]
    if kind not in _REVOCABLE:
        raise silo.tool_error("invalid_state", f"A {kind} approval cannot be revoked.")
    document = state[DOCUMENT_COLLECTIONS[kind]][approval["documentId"]]
    wanted, back = _REVOCABLE[kind]
    w.records.require_status(
        document, DOCUMENT_COLLECTIONS[kind], (wanted,), "have its approval revoked"
    )
    if kind == "vendor_invoice" and document["purchaseOrderId"] is None:
        back = "received"
    fields: dict[str, Any] = {"status": back}
    for field in ("approvedBy", "approvedAt", "decidedBy", "decidedAt"):
        if field in document:
            fields[field] = None
    entity = DOCUMENT_COLLECTIONS[kind][:-1]
    change(call, f"Approval {approval['id']} revoked.", document, entity, **fields)


@actor().write_tool(Reason, target=_approval_in("approved", "be revoked", "The approval."))
def revoke_approval(call: w.Write[Reason]) -> dict[str, Any]:
    """Revoke an approval that should not have been given (for example, above the approver's limit).
    The actor must be authorised for its amount. The document goes back a step: a requisition or
    purchase order to draft (not once ordered or sent), a vendor invoice to matched, a payment to
    draft, an expense to submitted.

    Approved -> revoked.
    """
    state, actor, approval = call.state, call.actor, call.record
    require_authority(
        state,
        actor,
        approval["documentType"],
        approval["amount"],
        f"{approval['documentId']} ({KIND_LABELS[approval['documentType']]})",
    )
    _roll_back(call)
    reason = call.args.reason
    audit_id = change(
        call,
        reason,
        status="revoked",
        revokedBy=actor["id"],
        revokedAt=w.clock.now(state),
        comment=reason,
    )
    return {"updated": _view(state, approval), "auditId": audit_id}
