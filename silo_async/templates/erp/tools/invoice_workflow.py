"""The vendor invoice workflow: three-way match, approval, hold, rejection and cancellation.

The match tolerances are company policy (``get_company_profile``), not arguments: an invoice
billing above the order price or more than was received fails, whoever runs the match.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import payables as pay
from ..state import Record, State
from .common import (
    ACTOR,
    acting_user,
    record_change,
    record_decision,
    require_authority,
    require_permission,
)
from .vendor_invoices import invoice_view

__all__ = [
    "approve_vendor_invoice",
    "cancel_vendor_invoice",
    "hold_vendor_invoice",
    "reject_vendor_invoice",
    "release_vendor_invoice_hold",
    "run_three_way_match",
]

_INVOICE = {"vendorInvoiceId": w.string("The vendor invoice.")}


def _ap(state: State, input: dict[str, Any]) -> tuple[Record, Record]:
    actor = acting_user(state, input)
    require_permission(state, actor, "payables")
    invoice: Record = w.require_record(
        state, "vendorInvoices", w.read_string(input, "vendorInvoiceId")
    )
    return actor, invoice


def _done(
    state: State, actor: Record, invoice: Record, action: str, text: str | None, **fields: Any
) -> dict[str, Any]:
    audit_id = record_change(state, actor["id"], action, "vendorInvoice", invoice, text, **fields)
    return {"updated": invoice_view(state, invoice), "auditId": audit_id}


@w.define_tool(
    "run_three_way_match",
    "Match an order invoice against its purchase order (price within the policy tolerance) and "
    "the goods received (units billed on each order line, across live invoices, within the "
    "policy tolerance of units accepted). The invoice becomes matched or match_failed with the "
    "exceptions listed. Invoices without an order need no match.",
    {**_INVOICE, **ACTOR},
    ["vendorInvoiceId", "actorId"],
)
def run_three_way_match(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Received / match_failed / matched -> matched or match_failed."""
    actor, invoice = _ap(state, input)
    w.require_status(
        invoice, "vendorInvoices", ("received", "match_failed", "matched"), "be matched"
    )
    if invoice["purchaseOrderId"] is None:
        raise silo.tool_error(
            "invalid_state",
            f"{invoice['id']} has no purchase order to match; approve it directly.",
        )
    exceptions = pay.match_exceptions(state, invoice)
    result = _done(
        state,
        actor,
        invoice,
        "run_three_way_match",
        f"{len(exceptions)} exception(s).",
        status="match_failed" if exceptions else "matched",
        matchExceptions=exceptions,
        matchedAt=w.now(state),
    )
    return {"matched": not exceptions, "exceptions": exceptions, **result}


@w.define_tool(
    "approve_vendor_invoice",
    "Approve a matched order invoice (or a received invoice without an order) for payment; the "
    "amount payable must be within the actor's vendor invoice limit.",
    {**_INVOICE, "comment": w.string("Optional note."), **ACTOR},
    ["vendorInvoiceId", "actorId"],
)
def approve_vendor_invoice(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Matched (or received without an order) -> approved."""
    actor = acting_user(state, input)
    invoice = w.require_record(state, "vendorInvoices", w.read_string(input, "vendorInvoiceId"))
    if invoice["status"] == "match_failed":
        problems = "; ".join(e["message"] for e in invoice["matchExceptions"])
        raise silo.tool_error(
            "invalid_state",
            f"{invoice['id']} failed the three-way match ({problems}); it cannot be approved "
            "until a credit note fixes it and it matches.",
            {"exceptions": invoice["matchExceptions"]},
        )
    wanted = ("received",) if invoice["purchaseOrderId"] is None else ("matched",)
    w.require_status(invoice, "vendorInvoices", wanted, "be approved")
    total = pay.invoice_total(state, invoice)
    require_authority(state, actor, "vendor_invoice", total, invoice["id"])
    approval_id = record_decision(
        state,
        "vendor_invoice",
        invoice["id"],
        total,
        actor,
        "approved",
        w.read_string(input, "comment", None),
    )
    return _done(
        state,
        actor,
        invoice,
        "approve_vendor_invoice",
        f"Approved ({approval_id}).",
        status="approved",
        approvedBy=actor["id"],
        approvedAt=w.now(state),
    )


@w.define_tool(
    "hold_vendor_invoice",
    "Put an unpaid invoice on hold with a reason (a dispute, a failed match awaiting a credit "
    "note); it cannot be approved or paid until released.",
    {**_INVOICE, "reason": w.string("Why, e.g. which match exception."), **ACTOR},
    ["vendorInvoiceId", "reason", "actorId"],
)
def hold_vendor_invoice(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Received / matched / match_failed / approved -> on_hold."""
    actor, invoice = _ap(state, input)
    w.require_status(
        invoice,
        "vendorInvoices",
        ("received", "matched", "match_failed", "approved"),
        "be put on hold",
    )
    if pay.scheduled(state, invoice["id"]) > 0:
        raise silo.tool_error(
            "invalid_state", f"A payment in progress covers {invoice['id']}; cancel it first."
        )
    return _done(
        state,
        actor,
        invoice,
        "hold_vendor_invoice",
        w.read_string(input, "reason"),
        status="on_hold",
        holdReason=w.read_string(input, "reason"),
    )


@w.define_tool(
    "release_vendor_invoice_hold",
    "Release a held invoice: it returns to received (match it again, or approve it if it has "
    "no order).",
    {**_INVOICE, "reason": w.string("Why."), **ACTOR},
    ["vendorInvoiceId", "reason", "actorId"],
)
def release_vendor_invoice_hold(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """on_hold -> received."""
    actor, invoice = _ap(state, input)
    w.require_status(invoice, "vendorInvoices", ("on_hold",), "be released")
    return _done(
        state,
        actor,
        invoice,
        "release_vendor_invoice_hold",
        w.read_string(input, "reason"),
        status="received",
        holdReason=None,
    )


def _close(state: State, input: dict[str, Any], to: str, action: str) -> dict[str, Any]:
    actor, invoice = _ap(state, input)
    w.require_status(
        invoice,
        "vendorInvoices",
        ("received", "matched", "match_failed", "on_hold", "approved"),
        f"be {to}",
    )
    if pay.paid(state, invoice["id"]) > 0 or pay.scheduled(state, invoice["id"]) > 0:
        raise silo.tool_error(
            "invalid_state",
            f"{invoice['id']} is paid or being paid ({pay.paid(state, invoice['id'])} paid, "
            f"{pay.scheduled(state, invoice['id'])} in payments); it cannot be {to}.",
        )
    return _done(
        state,
        actor,
        invoice,
        action,
        w.read_string(input, "reason"),
        status=to,
        rejectionReason=w.read_string(input, "reason"),
    )


@w.define_tool(
    "reject_vendor_invoice",
    "Refuse a vendor's invoice (not paid, no payment in progress), with a reason.",
    {**_INVOICE, "reason": w.string("Why."), **ACTOR},
    ["vendorInvoiceId", "reason", "actorId"],
)
def reject_vendor_invoice(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """-> rejected."""
    return _close(state, input, "rejected", "reject_vendor_invoice")


@w.define_tool(
    "cancel_vendor_invoice",
    "Cancel an invoice recorded in error (not paid, no payment in progress).",
    {**_INVOICE, "reason": w.string("Why."), **ACTOR},
    ["vendorInvoiceId", "reason", "actorId"],
)
def cancel_vendor_invoice(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """-> cancelled."""
    return _close(state, input, "cancelled", "cancel_vendor_invoice")
