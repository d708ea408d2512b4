"""The purchase order workflow: submit, approve, reject, send, cancel, close.

Approving commits the order's net value to its budget (taking over from its requisition), so
the budget must have that much remaining; limits compare with the net value.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import purchasing as pur
from ..domain.budgets import remaining, requisition_commitment
from ..domain.purchasing import pending_approval
from ..state import Record, State, money_text
from .approvals import decide, request_approval
from .common import ACTOR, acting_user, record_change, require_permission
from .purchase_orders import po_view

__all__ = [
    "approve_purchase_order",
    "cancel_purchase_order",
    "close_purchase_order",
    "reject_purchase_order",
    "send_purchase_order",
    "submit_purchase_order",
]


def _buyer_and_po(
    state: State, input: dict[str, Any], wanted: tuple[str, ...], action: str
) -> tuple[Record, Record]:
    actor = acting_user(state, input)
    require_permission(state, actor, "purchasing")
    po: Record = w.require_record(state, "purchaseOrders", w.read_string(input, "purchaseOrderId"))
    w.require_status(po, "purchaseOrders", wanted, action)
    return actor, po


def _done(
    state: State, actor: Record, po: Record, action: str, text: str | None, **fields: Any
) -> dict[str, Any]:
    audit_id = record_change(state, actor["id"], action, "purchaseOrder", po, text, **fields)
    return {"updated": po_view(state, po), "auditId": audit_id}


_PO = {"purchaseOrderId": w.string("The purchase order.")}


@w.define_tool(
    "submit_purchase_order",
    "Submit a draft order to an approver authorised for its net value (not yourself).",
    {**_PO, "approverId": w.string("The approver."), **ACTOR},
    ["purchaseOrderId", "approverId", "actorId"],
)
def submit_purchase_order(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Draft -> pending_approval."""
    actor, po = _buyer_and_po(state, input, ("draft",), "be submitted")
    if not po["lines"]:
        raise silo.tool_error("invalid_state", f"{po['id']} has no lines.")
    approval = request_approval(
        state, "purchase_order", po["id"], pur.po_net(po), w.read_string(input, "approverId"), actor
    )
    return _done(
        state,
        actor,
        po,
        "submit_purchase_order",
        f"Submitted to {approval['assigneeId']} ({approval['id']}).",
        status="pending_approval",
    )


def _check_budget(state: State, po: Record) -> None:
    budget = state["budgets"][po["budgetId"]]
    own = 0.0
    if po["requisitionId"] is not None:
        own = requisition_commitment(state, state["requisitions"][po["requisitionId"]])
    left = w.to_money(remaining(state, budget) + own)
    if pur.po_net(po) > left:
        raise silo.tool_error(
            "limit_exceeded",
            f"Budget {budget['id']} has {money_text(left)} available for {po['id']}, which is "
            f"{money_text(pur.po_net(po))}.",
            {"budgetId": budget["id"], "available": left, "amount": pur.po_net(po)},
        )


@w.define_tool(
    "approve_purchase_order",
    "Approve a pending order as its assigned approver, within the approver's purchase order "
    "limit (net value) and the budget's remaining amount.",
    {**_PO, "comment": w.string("Optional note."), **ACTOR},
    ["purchaseOrderId", "actorId"],
)
def approve_purchase_order(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """pending_approval -> approved."""
    actor = acting_user(state, input)
    po = w.require_record(state, "purchaseOrders", w.read_string(input, "purchaseOrderId"))
    w.require_status(po, "purchaseOrders", ("pending_approval",), "be approved")
    approval = decide(
        state,
        po,
        "purchase_order",
        pur.po_net(po),
        actor,
        "approved",
        w.read_string(input, "comment", None),
        lambda: _check_budget(state, po),
    )
    return _done(
        state,
        actor,
        po,
        "approve_purchase_order",
        f"Approved ({approval['id']}).",
        status="approved",
    )


def _release_requisition(state: State, po: Record) -> None:
    if po["requisitionId"] is not None:
        requisition = state["requisitions"][po["requisitionId"]]
        if requisition["status"] == "ordered" and requisition["purchaseOrderId"] == po["id"]:
            requisition.update(status="approved", purchaseOrderId=None)


@w.define_tool(
    "reject_purchase_order",
    "Reject a pending order as its assigned approver; a linked requisition returns to "
    "approved so it can be ordered again.",
    {**_PO, "reason": w.string("Why."), **ACTOR},
    ["purchaseOrderId", "reason", "actorId"],
)
def reject_purchase_order(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """pending_approval -> rejected."""
    actor = acting_user(state, input)
    po = w.require_record(state, "purchaseOrders", w.read_string(input, "purchaseOrderId"))
    w.require_status(po, "purchaseOrders", ("pending_approval",), "be rejected")
    reason = w.read_string(input, "reason")
    decide(state, po, "purchase_order", pur.po_net(po), actor, "rejected", reason)
    _release_requisition(state, po)
    return _done(state, actor, po, "reject_purchase_order", reason, status="rejected")


@w.define_tool(
    "send_purchase_order",
    "Send an approved order to its vendor (who must still be active); its lines become inbound "
    "stock at the delivery warehouse.",
    {**_PO, **ACTOR},
    ["purchaseOrderId", "actorId"],
)
def send_purchase_order(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Approved -> sent."""
    actor, po = _buyer_and_po(state, input, ("approved",), "be sent")
    vendor = state["vendors"][po["vendorId"]]
    if vendor["status"] != "active":
        raise silo.tool_error(
            "not_allowed", f"Vendor {vendor['id']} is {vendor['status']}; the order cannot be sent."
        )
    return _done(
        state,
        actor,
        po,
        "send_purchase_order",
        f"Sent to {vendor['id']}.",
        status="sent",
        sentAt=w.now(state),
    )


@w.define_tool(
    "cancel_purchase_order",
    "Cancel an order nothing has been received on yet; a pending approval is cancelled and a "
    "linked requisition returns to approved.",
    {**_PO, "reason": w.string("Why."), **ACTOR},
    ["purchaseOrderId", "reason", "actorId"],
)
def cancel_purchase_order(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Draft / pending_approval / approved / sent -> cancelled."""
    actor, po = _buyer_and_po(
        state, input, ("draft", "pending_approval", "approved", "sent"), "be cancelled"
    )
    if pur.receipt_status(state, po) != "none":
        raise silo.tool_error(
            "invalid_state",
            f"Goods have been received on {po['id']}; close it instead of cancelling.",
        )
    pending = pending_approval(state, po["id"])
    if pending is not None:
        pending["status"] = "cancelled"
    _release_requisition(state, po)
    return _done(
        state,
        actor,
        po,
        "cancel_purchase_order",
        w.read_string(input, "reason"),
        status="cancelled",
        cancelReason=w.read_string(input, "reason"),
    )


@w.define_tool(
    "close_purchase_order",
    "Close a sent order that has received goods once everything received has been invoiced; "
    "anything still undelivered is no longer expected.",
    {**_PO, **ACTOR},
    ["purchaseOrderId", "actorId"],
)
def close_purchase_order(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Sent -> closed."""
    actor, po = _buyer_and_po(state, input, ("sent",), "be closed")
    if pur.receipt_status(state, po) == "none":
        raise silo.tool_error("invalid_state", f"Nothing was received on {po['id']}; cancel it.")
    unbilled = [
        ln["lineNo"]
        for ln in po["lines"]
        if pur.invoiced_quantity(state, po["id"], ln["lineNo"])
        < pur.received_quantity(state, po["id"], ln["lineNo"])
    ]
    if unbilled:
        raise silo.tool_error(
            "invalid_state",
            f"{po['id']} has received but uninvoiced units on line(s) "
            f"{', '.join(map(str, unbilled))}; wait for the vendor's invoice.",
            {"lines": unbilled},
        )
    return _done(
        state, actor, po, "close_purchase_order", "Closed.", status="closed", closedAt=w.now(state)
    )
