"""Payables: what a vendor invoice bills, what has been paid, and the three-way match.

An invoice's net is its lines less its credit notes; its total adds VAT. Paid is the sum of the
allocations of completed outbound payments; scheduled is what draft or approved payments are
about to pay. The three-way match compares each line with the purchase order (price, within
``policies.priceTolerancePercent`` above the order price) and with the goods received (all units
billed on the order line, across live invoices, within ``policies.quantityTolerancePercent`` of
the units accepted). Invoices without a purchase order (services) are not matched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from silo_async import world as w
from silo_async.world.amounts import sum_money, to_money

from ..state import Record, State, find_line, gross, lines_net, vat_of
from .dues import days_past_due, is_past_due
from .purchasing import (
    LIVE_INVOICE,
    credited_quantity,
    invoiced_quantity,
    received_quantity,
)

__all__ = [
    "credited_net",
    "days_overdue",
    "invoice_figures",
    "invoice_net",
    "invoice_total",
    "is_overdue",
    "match_exceptions",
    "open_to_pay",
    "outstanding",
    "paid",
    "scheduled",
]


def credited_net(state: State, invoice_id: str) -> float:
    """The net value of the credit notes against an invoice."""
    return sum_money(
        w.amounts.multiply_money(line["quantity"], line["unitPrice"])
        for note in state["vendorCreditNotes"].values()
        if note["vendorInvoiceId"] == invoice_id
        for line in note["lines"]
    )


def invoice_net(state: State, invoice: Mapping[str, Any]) -> float:
    """The invoice's lines less its credit notes, excluding VAT."""
    return to_money(lines_net(invoice["lines"]) - credited_net(state, invoice["id"]))


def invoice_total(state: State, invoice: Mapping[str, Any]) -> float:
    """The amount payable: net plus VAT."""
    return gross(state, invoice_net(state, invoice))


def _allocated(state: State, invoice_id: str, statuses: tuple[str, ...]) -> float:
    return sum_money(
        a["amount"]
        for p in state["payments"].values()
        if p["direction"] == "outbound" and p["status"] in statuses
        for a in p["allocations"]
        if a["invoiceId"] == invoice_id
    )


def paid(state: State, invoice_id: str) -> float:
    """What completed payments paid against the invoice."""
    return _allocated(state, invoice_id, ("completed",))


def scheduled(state: State, invoice_id: str) -> float:
    """What draft or approved payments are about to pay against the invoice."""
    return _allocated(state, invoice_id, ("draft", "approved"))


def outstanding(state: State, invoice: Mapping[str, Any]) -> float:
    """Still owed on a live invoice (0 for a rejected or cancelled one)."""
    if invoice["status"] not in LIVE_INVOICE:
        return 0
    return to_money(invoice_total(state, invoice) - paid(state, invoice["id"]))


def open_to_pay(state: State, invoice: Mapping[str, Any]) -> float:
    """Outstanding less what payments in progress already cover."""
    return to_money(outstanding(state, invoice) - scheduled(state, invoice["id"]))


def is_overdue(state: State, invoice: Mapping[str, Any]) -> bool:
    """A live invoice with something outstanding whose due date has passed."""
    return is_past_due(state, invoice["dueDate"], outstanding(state, invoice))


def days_overdue(state: State, invoice: Mapping[str, Any]) -> int:
    """Days past the due date (0 when not overdue)."""
    return days_past_due(state, invoice["dueDate"], outstanding(state, invoice))


def invoice_figures(state: State, invoice: Mapping[str, Any]) -> dict[str, Any]:
    """``{net, vat, total, credited, paid, scheduled, outstanding, overdue, daysOverdue}``."""
    net = invoice_net(state, invoice)
    return {
        "net": net,
        "vat": vat_of(state, net),
        "total": invoice_total(state, invoice),
        "credited": credited_net(state, invoice["id"]),
        "paid": paid(state, invoice["id"]),
        "scheduled": scheduled(state, invoice["id"]),
        "outstanding": outstanding(state, invoice),
        "isOverdue": is_overdue(state, invoice),
        "daysOverdue": days_overdue(state, invoice),
    }


def _exception(kind: str, line: Mapping[str, Any], expected: Any, actual: Any, text: str) -> Record:
    return {
        "type": kind,
        "lineNo": line["lineNo"],
        "productId": line.get("productId"),
        "expected": expected,
        "actual": actual,
        "message": text,
    }


def _price_exception(
    state: State, line: Mapping[str, Any], ordered: Mapping[str, Any]
) -> Record | None:
    tolerance = float(state["policies"]["priceTolerancePercent"])
    ceiling = ordered["unitPrice"] * (1 + tolerance / 100)
    if line["unitPrice"] <= ceiling + 1e-9:
        return None
    over = (line["unitPrice"] - ordered["unitPrice"]) / ordered["unitPrice"] * 100
    text = (
        f"Line {line['lineNo']}: billed at {line['unitPrice']:.2f}, the order price is "
        f"{ordered['unitPrice']:.2f} ({over:.2f}% above; tolerance {tolerance:g}%)."
    )
    return _exception("price", line, ordered["unitPrice"], line["unitPrice"], text)


def _quantity_exception(
    state: State, invoice: Mapping[str, Any], line: Mapping[str, Any]
) -> Record | None:
    po_id, line_no = invoice["purchaseOrderId"], line["lineNo"]
    received = received_quantity(state, po_id, line_no)
    tolerance = float(state["policies"]["quantityTolerancePercent"])
    others = invoiced_quantity(state, po_id, line_no, exclude=invoice["id"])
    mine = line["quantity"] - credited_quantity(state, invoice["id"], line_no)
    if others + mine <= received * (1 + tolerance / 100) + 1e-9:
        return None
    allowed = max(0.0, received - others)
    text = (
        f"Line {line_no}: billed {mine:g} units but only {received} were received"
        + (f" and {others:g} are already billed elsewhere" if others else "")
        + f" ({allowed:g} may be billed)."
    )
    return _exception("quantity", line, allowed, mine, text)


def match_exceptions(state: State, invoice: Mapping[str, Any]) -> list[Record]:
    """Every reason the invoice fails the three-way match (empty: it matches)."""
    po = state["purchaseOrders"][invoice["purchaseOrderId"]]
    if po["vendorId"] != invoice["vendorId"]:
        text = f"The order {po['id']} is with {po['vendorId']}, not {invoice['vendorId']}."
        return [
            {
                "type": "vendor",
                "lineNo": None,
                "productId": None,
                "expected": po["vendorId"],
                "actual": invoice["vendorId"],
                "message": text,
            }
        ]
    found: list[Record] = []
    for line in invoice["lines"]:
        ordered = find_line(po, line["lineNo"])
        if ordered is None:
            text = f"Line {line['lineNo']} is not a line of {po['id']}."
            found.append(_exception("unknown_line", line, None, line["lineNo"], text))
            continue
        for problem in (
            _price_exception(state, line, ordered),
            _quantity_exception(state, invoice, line),
        ):
            if problem is not None:
                found.append(problem)
    return found
