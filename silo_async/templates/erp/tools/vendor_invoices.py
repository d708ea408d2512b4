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


def _given_lines(state: State, po: Record | None, input: dict[str, Any]) -> list[dict[str, Any]]:
    lines = []
    for index, item in enumerate(w.fields.read_objects(input, "lines")):
        path = f"lines[{index}]"
        number = w.fields.read_int(item, "lineNo", index + 1, minimum=1, path=path)
        ordered = find_line(po, number) if po else None
        if po is not None and ordered is None:
            raise silo.tool_error("not_found", f"{po['id']} has no line {number}.")
        lines.append(
            {
                "lineNo": number,
                "productId": ordered["productId"] if ordered else None,
                "description": w.fields.read_string(item, "description", None, path=path),
                "quantity": w.fields.read_number(
                    item, "quantity", minimum=0.001, maximum=1e7, path=path
                ),
                "unitPrice": w.fields.read_money(item, "unitPrice", path=path),
            }
        )
    return lines


_INVOICE_LINE = w.schema.closed_object(
    {
        "lineNo": w.schema.integer("The order line billed (for order invoices).", minimum=1),
        "description": w.schema.string("What is billed (for service invoices)."),
        "quantity": w.schema.number("Units billed.", minimum=0.001),
        "unitPrice": w.schema.money("Price per unit billed."),
    },
    ["quantity", "unitPrice"],
)


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


def _new_invoice(state: State, vendor: Record, input: dict[str, Any]) -> dict[str, Any]:
    """The invoice record ``input`` describes (not stored yet)."""
    po_id = w.fields.read_string(input, "purchaseOrderId", None)
    po = _po_for(state, vendor, po_id) if po_id else None
    budget = None if po else named(state, "budgets", input, "budgetId")
    if po is not None and not input.get("lines"):
        lines = _default_lines(state, po)
    else:
        lines = _given_lines(state, po, input)
    invoice_date = w.fields.read_date(input, "invoiceDate")
    terms = terms_days(state, vendor["paymentTerms"])
    return {
        "vendorId": vendor["id"],
        "vendorReference": w.fields.read_string(input, "vendorReference"),
        "purchaseOrderId": po_id,
        "budgetId": budget["id"] if budget else None,
        "invoiceDate": invoice_date,
        "dueDate": w.fields.read_date(input, "dueDate", w.clock.add_days(invoice_date, terms)),
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
    {
        "vendorReference": w.schema.string("The vendor's invoice number."),
        "purchaseOrderId": w.schema.string("The order billed (none for services)."),
        "budgetId": w.schema.string("Budget charged, for invoices without an order."),
        "invoiceDate": w.schema.date("Date on the invoice"),
        "dueDate": w.schema.date("Due date (default: invoice date + the vendor's terms)"),
        "lines": w.schema.array("What is billed.", _INVOICE_LINE),
    },
    ["vendorReference", "invoiceDate"],
    target=target("vendors", "vendorId", "The vendor.", "vendor"),
)
def record_vendor_invoice(call: w.Write) -> dict[str, Any]:
    """Record a vendor's invoice as received (payables roles). For an order invoice, lines default
    to everything received but not yet billed at order prices; a service invoice needs a budget
    and lines. The due date defaults to the invoice date plus the vendor's terms. The same vendor
    reference twice is refused.
    """
    state, input, vendor = call.state, call.input, call.record
    _check_unique(state, vendor["id"], w.fields.read_string(input, "vendorReference"))
    fields = _new_invoice(state, vendor, input)
    invoice = {"id": w.records.next_id(state, "VI", width=4), **fields}
    audit_id = call.add(_INVOICE, invoice, f"{vendor['id']} invoice {invoice['vendorReference']}.")
    return {"created": invoice_view(state, invoice), "auditId": audit_id}


@w.define_tool({"onOrBefore": w.schema.date("Last due date to include")}, ["onOrBefore"])
def list_vendor_invoices_due(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Live vendor invoices due on or before a date with money still to pay (outstanding less
    payments in progress), with their status; overdue ones included.
    """
    limit = w.fields.read_date(input, "onOrBefore")
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


@w.define_tool({"vendorInvoiceId": w.schema.string("The invoice.")}, ["vendorInvoiceId"])
def explain_invoice_block(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Why a vendor invoice cannot be paid yet: each blocker with the tool that clears it."""
    invoice = named(state, "vendorInvoices", input, "vendorInvoiceId")
    blockers = _blockers(state, invoice)
    return {"vendorInvoiceId": invoice["id"], "payable": not blockers, "blockers": blockers}
