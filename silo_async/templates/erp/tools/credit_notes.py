"""Vendor credit notes: a vendor taking back units it billed, recorded against the invoice."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import payables as pay
from ..domain import purchasing as pur
from ..state import State, find_line, gross
from .common import actor, change, target
from .vendor_invoices import invoice_view

__all__ = ["list_vendor_credit_notes", "record_vendor_credit_note"]


VENDOR_CREDIT_NOTES = w.Collection("vendorCreditNotes")
list_vendor_credit_notes = VENDOR_CREDIT_NOTES.list_tool(
    "List vendor credit notes sorted by id; filter by invoice. Paged.",
    filters={"vendorInvoiceId": w.schema.string("Only credit notes against this invoice.")},
    references={"vendorInvoiceId": "vendorInvoices"},
)


class _CreditLine(w.Input):
    lineNo = w.fields.integer("The invoice line.", minimum=1)
    quantity = w.fields.number("Units credited.", minimum=0.001)
    unitPrice = w.fields.money("Price per unit (default: the invoice line's).", default=None)


class _CreditNote(w.Input):
    vendorReference = w.fields.string("The vendor's credit note number.")
    lines = w.fields.objects("Units credited per invoice line.", _CreditLine)
    reason = w.fields.string("Why.")


def _credited_lines(state: State, invoice: dict[str, Any], args: _CreditNote) -> list[Any]:
    """The credit note's lines: units of invoice lines, no more than each still bills."""
    lines = []
    for item in args.lines:
        number = item.lineNo
        billed = find_line(invoice, number)
        if billed is None:
            raise silo.tool_error("not_found", f"{invoice['id']} has no line {number}.")
        left = billed["quantity"] - pur.credited_quantity(state, invoice["id"], number)
        quantity = w.fields.read(item, "quantity", maximum=left)
        price = billed["unitPrice"] if item.unitPrice is None else item.unitPrice
        lines.append({"lineNo": number, "quantity": quantity, "unitPrice": price})
    credit = w.amounts.sum_money(
        w.amounts.multiply_money(ln["quantity"], ln["unitPrice"]) for ln in lines
    )
    if gross(state, w.amounts.to_money(pay.invoice_net(state, invoice) - credit)) < pay.paid(
        state, invoice["id"]
    ):
        raise silo.tool_error(
            "invalid_state", f"The credit exceeds what is left unpaid on {invoice['id']}."
        )
    return lines


@actor("payables").write_tool(
    _CreditNote,
    target=target("vendorInvoices", "vendorInvoiceId", "The invoice credited.", "vendorInvoice"),
)
def record_vendor_credit_note(call: w.Write[_CreditNote]) -> dict[str, Any]:
    """Record a vendor's credit note against a live invoice, taking back units of its lines (price
    defaults to the invoice line's). The invoice's net, VAT and total fall; a matched or failed
    invoice goes back to received for a new match.

    Store a credit note; a matched or failed invoice goes back to received.
    """
    state, args, invoice = call.state, call.args, call.record
    if invoice["status"] not in pur.LIVE_INVOICE:
        raise silo.tool_error("invalid_state", f"{invoice['id']} is {invoice['status']}.")
    lines = _credited_lines(state, invoice, args)
    note_id = w.records.next_id(state, "VCN")
    state["vendorCreditNotes"][note_id] = note = {
        "id": note_id,
        "vendorInvoiceId": invoice["id"],
        "vendorReference": args.vendorReference,
        "lines": lines,
        "reason": args.reason,
        "createdAt": w.clock.now(state),
        "createdBy": call.actor["id"],
    }
    status = "received" if invoice["status"] in ("matched", "match_failed") else invoice["status"]
    audit_id = change(call, f"Credit note {note_id}.", status=status)
    return {"created": note, "invoice": invoice_view(state, invoice), "auditId": audit_id}
