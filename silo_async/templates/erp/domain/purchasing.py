"""Purchasing: requisition values, and what each purchase order line has received and billed.

Received and rejected quantities come from posted goods receipts; invoiced quantities from
vendor invoices that are not rejected or cancelled, less what credit notes took back. A sent
order shows as ``partially_received`` or ``received`` from its receipts; its stored status stays
``sent`` until someone closes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from silo_async.world.clock import today

from ..state import Record, State, lines_net

__all__ = [
    "LIVE_INVOICE",
    "approval_fields",
    "credited_quantity",
    "display_status",
    "invoiced_quantity",
    "is_late",
    "is_valid",
    "line_remaining",
    "pending_approval",
    "po_net",
    "receipt_status",
    "received_quantity",
    "rejected_quantity",
    "requisition_net",
]

#: Vendor invoice statuses that still bill something (rejected and cancelled ones do not).
LIVE_INVOICE: tuple[str, ...] = ("received", "matched", "match_failed", "approved", "on_hold")


def requisition_net(requisition: Mapping[str, Any]) -> float:
    """The estimated net value of a requisition."""
    return lines_net(requisition["lines"], "estimatedUnitCost")


def po_net(po: Mapping[str, Any]) -> float:
    """The net value of a purchase order."""
    return lines_net(po["lines"])


def _receipt_lines(state: State, po_id: str, line_no: int) -> list[Record]:
    return [
        line
        for grn in state["goodsReceipts"].values()
        if grn["purchaseOrderId"] == po_id and grn["status"] == "posted"
        for line in grn["lines"]
        if line["lineNo"] == line_no
    ]


def received_quantity(state: State, po_id: str, line_no: int) -> int:
    """Units accepted into stock for one order line."""
    return sum(int(line["accepted"]) for line in _receipt_lines(state, po_id, line_no))


def rejected_quantity(state: State, po_id: str, line_no: int) -> int:
    """Units refused at receipt for one order line."""
    return sum(int(line["rejected"]) for line in _receipt_lines(state, po_id, line_no))


def line_remaining(state: State, po: Mapping[str, Any], line: Mapping[str, Any]) -> int:
    """Units of an order line still to be delivered (rejected units are still owed)."""
    return max(0, int(line["quantity"]) - received_quantity(state, po["id"], line["lineNo"]))


def credited_quantity(state: State, invoice_id: str, line_no: int) -> float:
    """Units that credit notes took back from one vendor invoice line."""
    total = 0.0
    for note in state["vendorCreditNotes"].values():
        if note["vendorInvoiceId"] == invoice_id:
            total += sum(line["quantity"] for line in note["lines"] if line["lineNo"] == line_no)
    return total


def invoiced_quantity(state: State, po_id: str, line_no: int, exclude: str | None = None) -> float:
    """Units of an order line billed by live invoices (less credits), ``exclude`` left out."""
    total = 0.0
    for invoice in state["vendorInvoices"].values():
        if (
            invoice["purchaseOrderId"] != po_id
            or invoice["status"] not in LIVE_INVOICE
            or invoice["id"] == exclude
        ):
            continue
        for line in invoice["lines"]:
            if line["lineNo"] == line_no:
                total += line["quantity"] - credited_quantity(state, invoice["id"], line_no)
    return total


def receipt_status(state: State, po: Mapping[str, Any]) -> str:
    """``none``, ``partial`` or ``complete``: how much of the order has arrived."""
    received = [received_quantity(state, po["id"], ln["lineNo"]) for ln in po["lines"]]
    if not any(received):
        return "none"
    if all(r >= ln["quantity"] for r, ln in zip(received, po["lines"], strict=True)):
        return "complete"
    return "partial"


def display_status(state: State, po: Mapping[str, Any]) -> str:
    """The stored status, with ``sent`` shown as ``partially_received`` / ``received``."""
    if po["status"] != "sent":
        return str(po["status"])
    return {"none": "sent", "partial": "partially_received", "complete": "received"}[
        receipt_status(state, po)
    ]


def is_late(state: State, po: Mapping[str, Any]) -> bool:
    """A sent order not yet fully received whose expected date has passed."""
    return (
        po["status"] == "sent"
        and receipt_status(state, po) != "complete"
        and po["expectedDate"] < today(state)
    )


def pending_approval(state: State, document_id: str) -> Record | None:
    """The pending approval of a document, or None."""
    for approval in sorted(state["approvals"].values(), key=lambda a: a["id"]):
        if approval["documentId"] == document_id and approval["status"] == "pending":
            found: Record = approval
            return found
    return None


def approval_fields(state: State, document_id: str) -> dict[str, Any]:
    """``{pendingApprovalId, assigneeId}`` of a document's pending approval (None without one)."""
    pending = pending_approval(state, document_id)
    return {
        "pendingApprovalId": pending["id"] if pending else None,
        "assigneeId": pending["assigneeId"] if pending else None,
    }


def is_valid(state: State, quotation: Mapping[str, Any]) -> bool:
    """A quotation still ``received`` and not past its ``validUntil``."""
    return bool(quotation["status"] == "received" and quotation["validUntil"] >= today(state))
