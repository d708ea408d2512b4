"""The vendor invoice workflow: three-way match, approval, hold, rejection and cancellation.

The match tolerances are company policy (``get_company_profile``), not arguments: an invoice
billing above the order price or more than was received fails, whoever runs the match.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import payables as pay
from .common import (
    Note,
    Reason,
    actor,
    changed,
    in_status,
    record_decision,
    require_authority,
    target,
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

_PAYABLES = actor("payables")


_INVOICE = target("vendorInvoices", "vendorInvoiceId", "The vendor invoice.", "vendorInvoice")


@_PAYABLES.write_tool(
    target=in_status(_INVOICE, ("received", "match_failed", "matched"), "be matched")
)
def run_three_way_match(call: w.Write) -> dict[str, Any]:
    """Match an order invoice against its purchase order (price within the policy tolerance) and the
    goods received (units billed on each order line, across live invoices, within the policy
    tolerance of units accepted). The invoice becomes matched or match_failed with the exceptions
    listed. Invoices without an order need no match.

    Received / match_failed / matched -> matched or match_failed.
    """
    state, invoice = call.state, call.record
    if invoice["purchaseOrderId"] is None:
        raise silo.tool_error(
            "invalid_state",
            f"{invoice['id']} has no purchase order to match; approve it directly.",
        )
    exceptions = pay.match_exceptions(state, invoice)
    result = changed(
        call,
        invoice_view,
        f"{len(exceptions)} exception(s).",
        status="match_failed" if exceptions else "matched",
        matchExceptions=exceptions,
        matchedAt=w.clock.now(state),
    )
    return {"matched": not exceptions, "exceptions": exceptions, **result}


@actor().write_tool(Note, target=_INVOICE)
def approve_vendor_invoice(call: w.Write[Note]) -> dict[str, Any]:
    """Approve a matched order invoice (or a received invoice without an order) for payment; the
    amount payable must be within the actor's vendor invoice limit.

    Matched (or received without an order) -> approved.
    """
    state, actor, invoice = call.state, call.actor, call.record
    if invoice["status"] == "match_failed":
        problems = "; ".join(e["message"] for e in invoice["matchExceptions"])
        raise silo.tool_error(
            "invalid_state",
            f"{invoice['id']} failed the three-way match ({problems}); it cannot be approved "
            "until a credit note fixes it and it matches.",
            {"exceptions": invoice["matchExceptions"]},
        )
    wanted = ("received",) if invoice["purchaseOrderId"] is None else ("matched",)
    w.records.require_status(invoice, "vendorInvoices", wanted, "be approved")
    total = pay.invoice_total(state, invoice)
    require_authority(state, actor, "vendor_invoice", total, invoice["id"])
    approval_id = record_decision(
        state,
        "vendor_invoice",
        invoice["id"],
        total,
        actor,
        "approved",
        call.args.comment,
    )
    return changed(
        call,
        invoice_view,
        f"Approved ({approval_id}).",
        status="approved",
        approvedBy=actor["id"],
        approvedAt=w.clock.now(state),
    )


class _Hold(w.Input):
    reason = w.fields.string("Why, e.g. which match exception.")


@_PAYABLES.write_tool(
    _Hold,
    target=in_status(
        _INVOICE, ("received", "matched", "match_failed", "approved"), "be put on hold"
    ),
)
def hold_vendor_invoice(call: w.Write[_Hold]) -> dict[str, Any]:
    """Put an unpaid invoice on hold with a reason (a dispute, a failed match awaiting a credit
    note); it cannot be approved or paid until released.

    Received / matched / match_failed / approved -> on_hold.
    """
    state, invoice = call.state, call.record
    if pay.scheduled(state, invoice["id"]) > 0:
        raise silo.tool_error(
            "invalid_state", f"A payment in progress covers {invoice['id']}; cancel it first."
        )
    reason = call.args.reason
    return changed(call, invoice_view, reason, status="on_hold", holdReason=reason)


@_PAYABLES.write_tool(Reason, target=in_status(_INVOICE, ("on_hold",), "be released"))
def release_vendor_invoice_hold(call: w.Write[Reason]) -> dict[str, Any]:
    """Release a held invoice: it returns to received (match it again, or approve it if it has no
    order).

    on_hold -> received.
    """
    return changed(call, invoice_view, call.args.reason, status="received", holdReason=None)


_CLOSABLE = ("received", "matched", "match_failed", "on_hold", "approved")


def _close(call: w.Write[Reason], to: str) -> dict[str, Any]:
    state, invoice = call.state, call.record
    if pay.paid(state, invoice["id"]) > 0 or pay.scheduled(state, invoice["id"]) > 0:
        raise silo.tool_error(
            "invalid_state",
            f"{invoice['id']} is paid or being paid ({pay.paid(state, invoice['id'])} paid, "
            f"{pay.scheduled(state, invoice['id'])} in payments); it cannot be {to}.",
        )
    reason = call.args.reason
    return changed(call, invoice_view, reason, status=to, rejectionReason=reason)


@_PAYABLES.write_tool(Reason, target=in_status(_INVOICE, _CLOSABLE, "be rejected"))
def reject_vendor_invoice(call: w.Write[Reason]) -> dict[str, Any]:
    """Refuse a vendor's invoice (not paid, no payment in progress), with a reason.

    -> rejected.
    """
    return _close(call, "rejected")


@_PAYABLES.write_tool(Reason, target=in_status(_INVOICE, _CLOSABLE, "be cancelled"))
def cancel_vendor_invoice(call: w.Write[Reason]) -> dict[str, Any]:
    """Cancel an invoice recorded in error (not paid, no payment in progress).

    -> cancelled.
    """
    return _close(call, "cancelled")
