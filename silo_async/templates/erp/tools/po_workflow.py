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
from .common import Note, Reason, actor, changed, in_status, target
from .purchase_orders import po_view

__all__ = [
    "approve_purchase_order",
    "cancel_purchase_order",
    "close_purchase_order",
    "reject_purchase_order",
    "send_purchase_order",
    "submit_purchase_order",
]


_BUYER = actor("purchasing")


_PO = target("purchaseOrders", "purchaseOrderId", "The purchase order.", "purchaseOrder")


class _Approver(w.Input):
    approverId = w.fields.string("The approver.")


@_BUYER.write_tool(_Approver, target=in_status(_PO, ("draft",), "be submitted"))
def submit_purchase_order(call: w.Write[_Approver]) -> dict[str, Any]:
    """Submit a draft order to an approver authorised for its net value (not yourself).

    Draft -> pending_approval.
    """
    state, po = call.state, call.record
    if not po["lines"]:
        raise silo.tool_error("invalid_state", f"{po['id']} has no lines.")
    approval = request_approval(
        state,
        "purchase_order",
        po["id"],
        pur.po_net(po),
        call.args.approverId,
        call.actor,
    )
    return changed(
        call,
        po_view,
        f"Submitted to {approval['assigneeId']} ({approval['id']}).",
        status="pending_approval",
    )


def _check_budget(state: State, po: Record) -> None:
    budget = state["budgets"][po["budgetId"]]
    own = 0.0
    if po["requisitionId"] is not None:
        own = requisition_commitment(state, state["requisitions"][po["requisitionId"]])
    left = w.amounts.to_money(remaining(state, budget) + own)
    if pur.po_net(po) > left:
        raise silo.tool_error(
            "limit_exceeded",
            f"Budget {budget['id']} has {money_text(left)} available for {po['id']}, which is "
            f"{money_text(pur.po_net(po))}.",
            {"budgetId": budget["id"], "available": left, "amount": pur.po_net(po)},
        )


@actor().write_tool(Note, target=in_status(_PO, ("pending_approval",), "be approved"))
def approve_purchase_order(call: w.Write[Note]) -> dict[str, Any]:
    """Approve a pending order as its assigned approver, within the approver's purchase order limit
    (net value) and the budget's remaining amount.

    pending_approval -> approved.
    """
    state, po = call.state, call.record
    approval = decide(
        state,
        po,
        "purchase_order",
        pur.po_net(po),
        call.actor,
        "approved",
        call.args.comment,
        lambda: _check_budget(state, po),
    )
    return changed(call, po_view, f"Approved ({approval['id']}).", status="approved")


def _release_requisition(state: State, po: Record) -> None:
    if po["requisitionId"] is not None:
        requisition = state["requisitions"][po["requisitionId"]]
        if requisition["status"] == "ordered" and requisition["purchaseOrderId"] == po["id"]:
            requisition.update(status="approved", purchaseOrderId=None)


@actor().write_tool(Reason, target=in_status(_PO, ("pending_approval",), "be rejected"))
def reject_purchase_order(call: w.Write[Reason]) -> dict[str, Any]:
    """Reject a pending order as its assigned approver; a linked requisition returns to approved so
    it can be ordered again.

    pending_approval -> rejected.
    """
    state, po = call.state, call.record
    reason = call.args.reason
    decide(state, po, "purchase_order", pur.po_net(po), call.actor, "rejected", reason)
    _release_requisition(state, po)
    return changed(call, po_view, reason, status="rejected")


@_BUYER.write_tool(target=in_status(_PO, ("approved",), "be sent"))
def send_purchase_order(call: w.Write) -> dict[str, Any]:
    """Send an approved order to its vendor (who must still be active); its lines become inbound
    stock at the delivery warehouse.

    Approved -> sent.
    """
    state, po = call.state, call.record
    vendor = state["vendors"][po["vendorId"]]
    if vendor["status"] != "active":
        raise silo.tool_error(
            "not_allowed", f"Vendor {vendor['id']} is {vendor['status']}; the order cannot be sent."
        )
    return changed(
        call, po_view, f"Sent to {vendor['id']}.", status="sent", sentAt=w.clock.now(state)
    )


@_BUYER.write_tool(
    Reason,
    target=in_status(_PO, ("draft", "pending_approval", "approved", "sent"), "be cancelled"),
)
def cancel_purchase_order(call: w.Write[Reason]) -> dict[str, Any]:
    """Cancel an order nothing has been received on yet; a pending approval is cancelled and a
    linked requisition returns to approved.

    Draft / pending_approval / approved / sent -> cancelled.
    """
    state, po = call.state, call.record
    if pur.receipt_status(state, po) != "none":
        raise silo.tool_error(
            "invalid_state",
            f"Goods have been received on {po['id']}; close it instead of cancelling.",
        )
    pending = pending_approval(state, po["id"])
    if pending is not None:
        pending["status"] = "cancelled"
    _release_requisition(state, po)
    reason = call.args.reason
    return changed(call, po_view, reason, status="cancelled", cancelReason=reason)


@_BUYER.write_tool(target=in_status(_PO, ("sent",), "be closed"))
def close_purchase_order(call: w.Write) -> dict[str, Any]:
    """Close a sent order that has received goods once everything received has been invoiced;
    anything still undelivered is no longer expected.

    Sent -> closed.
    """
    state, po = call.state, call.record
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
    return changed(call, po_view, "Closed.", status="closed", closedAt=w.clock.now(state))
