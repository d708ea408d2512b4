"""Vendor invoices: recording them, credit notes, and the read tools of accounts payable.

An invoice is ``received`` -> ``matched`` / ``match_failed`` (three-way match) -> ``approved``
-> paid by payments (paid is derived), or ``on_hold`` / ``rejected`` / ``cancelled``. Invoices
without a purchase order (services) carry their own budget and skip the match.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import payables as pay
from ..domain import purchasing as pur
from ..state import Record, State, find_line, terms_days
from .common import actor, named, target

__all__ = [
    "STATUSES",
    "explain_invoice_block",
    "get_vendor_invoice",
    "invoice_view",
    "list_overdue_vendor_invoices",
    "list_vendor_invoices",
    "list_vendor_invoices_due",
    "record_vendor_invoice",
    "search_vendor_invoices",
]

STATUSES = ("received", "matched", "match_failed", "approved", "on_hold", "rejected", "cancelled")


def invoice_view(state: State, invoice: Any) -> dict[str, Any]:
    """An invoice with its figures and, for order invoices, the order price per line."""
    po = state["purchaseOrders"].get(invoice["purchaseOrderId"] or "")
    lines = []
    for line in invoice["lines"]:
        ordered = find_line(po, line["lineNo"]) if po else None
        lines.append(
            {
                **line,
                "credited": pur.credited_quantity(state, invoice["id"], line["lineNo"]),
                "orderUnitPrice": ordered["unitPrice"] if ordered else None,
            }
        )
    return {
        **invoice,
        "lines": lines,
        **pay.invoice_figures(state, invoice),
        "vendorName": state["vendors"][invoice["vendorId"]]["name"],
    }


def _overdue(state: State, invoice: Any, input: Mapping[str, Any]) -> bool:
    return not input.get("overdueOnly") or pay.is_overdue(state, invoice)


VENDOR_INVOICES = w.Collection("vendorInvoices", "vendorInvoiceId", "VI-2004", view=invoice_view)
list_vendor_invoices = VENDOR_INVOICES.list_tool(
    "List vendor invoices sorted by id with net, VAT, total, paid and outstanding; filter by "
    "status, vendor or purchase order, or only overdue ones. Paged.",
    filters={
        "status": w.schema.enum("Only invoices with this status.", STATUSES),
        "vendorId": w.schema.string("Only this vendor's invoices."),
        "purchaseOrderId": w.schema.string("Only invoices for this order."),
    },
    references={"vendorId": "vendors", "purchaseOrderId": "purchaseOrders"},
    extra={"overdueOnly": w.schema.boolean("Only invoices past their due date with money owed.")},
    where=_overdue,
)
search_vendor_invoices = VENDOR_INVOICES.search_tool(
    "Find vendor invoices whose id, vendor reference or vendor name contains the query. Paged.",
    lambda state, i: [i["vendorReference"], state["vendors"][i["vendorId"]]["name"]],
)
get_vendor_invoice = VENDOR_INVOICES.get_tool("One vendor invoice.")


def _po_for(state: State, vendor: Record, po_id: str) -> Record:
    po: Record = w.records.require_record(state, "purchaseOrders", po_id)
    if po["vendorId"] != vendor["id"]:
        raise silo.tool_error(
            "invalid_input", f"{po['id']} is an order with {po['vendorId']}, not {vendor['id']}."
        )
    if po["status"] not in ("sent", "closed"):
        raise silo.tool_error(
            "invalid_state", f"{po['id']} is {po['status']}; only sent orders can be invoiced."
        )
    return po


def _default_lines(state: State, po: Record) -> list[dict[str, Any]]:
    lines = []
    for line in po["lines"]:
        open_qty = pur.received_quantity(state, po["id"], line["lineNo"]) - pur.invoiced_quantity(
            state, po["id"], line["lineNo"]
        )
        if open_qty > 0:
            lines.append(
                {
                    "lineNo": line["lineNo"],
                    "productId": line["productId"],
                    "description": None,
                    "quantity": open_qty,
                    "unitPrice": line["unitPrice"],
                }
            )
    if not lines:
        raise silo.tool_error("invalid_state", f"Nothing received on {po['id']} is unbilled.")
    return lines


class _BilledLine(w.Input):
    lineNo = w.fields.integer(
        "The order line billed (for order invoices).", minimum=1, default=None
    )
    description = w.fields.string("What is billed (for service invoices).", default=None)
    quantity = w.fields.number("Units billed.", minimum=0.001, bounds=(0.001, 1e7))
    unitPrice = w.fields.money("Price per unit billed.")


class _Invoice(w.Input):
    vendorReference = w.fields.string("The vendor's invoice number.")
    purchaseOrderId = w.fields.string("The order billed (none for services).", default=None)
    budgetId = w.fields.string("Budget charged, for invoices without an order.", default=None)
    invoiceDate = w.fields.date("Date on the invoice")
    dueDate = w.fields.date("Due date (default: invoice date + the vendor's terms)", default=None)
    lines = w.fields.objects("What is billed.", _BilledLine, default=None)


def _given_lines(state: State, po: Record | None, args: _Invoice) -> list[dict[str, Any]]:
    lines = []
    items: list[_BilledLine] = w.fields.read(args, "lines", default=w.fields.REQUIRED)
    for index, item in enumerate(items):
        given = item.lineNo
        number = index + 1 if given is None else given
        ordered = find_line(po, number) if po else None
        if po is not None and ordered is None:
            raise silo.tool_error("not_found", f"{po['id']} has no line {number}.")
        lines.append(
            {
                "lineNo": number,
                "productId": ordered["productId"] if ordered else None,
                "description": item.description,
                "quantity": item.quantity,
                "unitPrice": item.unitPrice,
            }
        )
    return lines


def _check_unique(state: State, vendor_id: str, reference: str) -> None:
    for other in w.tools.sorted_by_id(state["vendorInvoices"]):
        if (
            other["vendorId"] == vendor_id
            and other["vendorReference"] == reference
            and other["status"] in pur.LIVE_INVOICE
        ):
            raise silo.tool_error(
                "conflict", f"{vendor_id} invoice {reference} is already {other['id']}."
            )


def _new_invoice(state: State, vendor: Record, args: _Invoice) -> dict[str, Any]:
    """The invoice record ``args`` describes (not stored yet)."""
    po_id = args.purchaseOrderId
    po = _po_for(state, vendor, po_id) if po_id else None
    budget_id = None if po else w.fields.read(args, "budgetId", default=w.fields.REQUIRED)
    budget = None if budget_id is None else named(state, "budgets", budget_id)
    if po is not None and "lines" not in w.fields.given(args):
        lines = _default_lines(state, po)
    else:
        lines = _given_lines(state, po, args)
    invoice_date = args.invoiceDate
    terms = terms_days(state, vendor["paymentTerms"])
    due = args.dueDate
    return {
        "vendorId": vendor["id"],
        "vendorReference": args.vendorReference,
        "purchaseOrderId": po_id,
        "budgetId": budget["id"] if budget else None,
        "invoiceDate": invoice_date,
        "dueDate": w.clock.add_days(invoice_date, terms) if due is None else due,
        "receivedAt": w.clock.now(state),
        "status": "received",
        "lines": lines,
        "matchExceptions": [],
        "matchedAt": None,
        "holdReason": None,
        "rejectionReason": None,
        "approvedBy": None,
        "approvedAt": None,
    }


_INVOICE = target("vendorInvoices", "vendorInvoiceId", "The invoice.", "vendorInvoice")


@actor("payables").write_tool(
    _Invoice, target=target("vendors", "vendorId", "The vendor.", "vendor")
)
def record_vendor_invoice(call: w.Write[_Invoice]) -> dict[str, Any]:
    """Record a vendor's invoice as received (payables roles). For an order invoice, lines default
    to everything received but not yet billed at order prices; a service invoice needs a budget
    and lines. The due date defaults to the invoice date plus the vendor's terms. The same vendor
    reference twice is refused.
    """
    state, args, vendor = call.state, call.args, call.record
    _check_unique(state, vendor["id"], args.vendorReference)
    fields = _new_invoice(state, vendor, args)
    invoice = {"id": w.records.next_id(state, "VI", width=4), **fields}
    audit_id = call.add(_INVOICE, invoice, f"{vendor['id']} invoice {invoice['vendorReference']}.")
    return {"created": invoice_view(state, invoice), "auditId": audit_id}


class _DueBy(w.Input):
    onOrBefore = w.fields.date("Last due date to include")


@w.define_tool(_DueBy)
def list_vendor_invoices_due(state: State, args: _DueBy) -> dict[str, Any]:
    """Live vendor invoices due on or before a date with money still to pay (outstanding less
    payments in progress), with their status; overdue ones included.
    """
    limit = args.onOrBefore
    rows = [
        {**invoice_view(state, i), "openToPay": pay.open_to_pay(state, i)}
        for i in w.tools.sorted_by_id(state["vendorInvoices"])
        if i["status"] in pur.LIVE_INVOICE
        and i["dueDate"] <= limit
        and pay.open_to_pay(state, i) > 0
    ]
    return {"results": rows, "count": len(rows)}


@w.define_tool()
def list_overdue_vendor_invoices(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Vendor invoices past their due date with money owed."""
    rows = [
        invoice_view(state, i)
        for i in w.tools.sorted_by_id(state["vendorInvoices"])
        if pay.is_overdue(state, i)
    ]
    return {"results": rows, "count": len(rows)}


def _blockers(state: State, invoice: Record) -> list[dict[str, str]]:
    status = invoice["status"]
    found = []
    if status in ("rejected", "cancelled"):
        found.append({"code": "closed", "message": f"The invoice is {status}.", "fixWith": "-"})
    elif pay.outstanding(state, invoice) <= 0:
        found.append({"code": "paid", "message": "Nothing is outstanding.", "fixWith": "-"})
    if status == "on_hold":
        found.append(
            {
                "code": "on_hold",
                "message": invoice["holdReason"] or "On hold.",
                "fixWith": "release_vendor_invoice_hold",
            }
        )
    if status == "received" and invoice["purchaseOrderId"]:
        found.append(
            {"code": "not_matched", "message": "Not matched yet.", "fixWith": "run_three_way_match"}
        )
    if status == "match_failed":
        found += [
            {
                "code": f"match_{e['type']}",
                "message": e["message"],
                "fixWith": "record_vendor_credit_note or hold_vendor_invoice",
            }
            for e in invoice["matchExceptions"]
        ]
    if status in ("matched",) or (status == "received" and not invoice["purchaseOrderId"]):
        found.append(
            {
                "code": "not_approved",
                "message": "Awaiting approval.",
                "fixWith": "approve_vendor_invoice",
            }
        )
    return found


class _InvoiceId(w.Input):
    vendorInvoiceId = w.fields.string("The invoice.")


@w.define_tool(_InvoiceId)
def explain_invoice_block(state: State, args: _InvoiceId) -> dict[str, Any]:
    """Why a vendor invoice cannot be paid yet: each blocker with the tool that clears it."""
    invoice = named(state, "vendorInvoices", args.vendorInvoiceId)
    blockers = _blockers(state, invoice)
    return {"vendorInvoiceId": invoice["id"], "payable": not blockers, "blockers": blockers}
