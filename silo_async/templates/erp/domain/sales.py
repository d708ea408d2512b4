"""Sales: what each order line has shipped, what is billed, what customers owe.

Shipped quantities come from shipments; a shipment is invoiced once a customer invoice that is
not void lists it. A customer invoice's paid amount is the sum of the allocations of inbound
payments. Credit exposure, checked when an order is confirmed, is everything the customer owes
or will owe: the outstanding of issued invoices, plus shipped-but-unbilled goods, plus the
unshipped part of confirmed orders, all including VAT.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from silo_async import world as w
from silo_async.world.amounts import sum_money, to_money

from ..state import State, gross, lines_net, vat_of
from .dues import days_past_due, is_past_due

__all__ = [
    "BILLED",
    "customer_figures",
    "customer_invoice_net",
    "customer_invoice_total",
    "customer_outstanding",
    "customer_paid",
    "days_overdue",
    "exposure",
    "invoiced_shipment_ids",
    "is_overdue",
    "order_display_status",
    "order_net",
    "shipment_net",
    "shipped_quantity",
    "unallocated",
    "unshipped_quantity",
]

#: Customer invoice statuses that are owed (void and written-off ones are not).
BILLED: tuple[str, ...] = ("issued",)


def order_net(order: Mapping[str, Any]) -> float:
    """The net value of a sales order."""
    return lines_net(order["lines"])


def shipped_quantity(state: State, order_id: str, line_no: int) -> int:
    """Units of an order line that have shipped."""
    return sum(
        int(line["quantity"])
        for shipment in state["shipments"].values()
        if shipment["salesOrderId"] == order_id
        for line in shipment["lines"]
        if line["lineNo"] == line_no
    )


def unshipped_quantity(state: State, order: Mapping[str, Any], line: Mapping[str, Any]) -> int:
    """Units of an order line still to ship."""
    return max(0, int(line["quantity"]) - shipped_quantity(state, order["id"], line["lineNo"]))


def order_display_status(state: State, order: Mapping[str, Any]) -> str:
    """The stored status, with a confirmed order shown as partially shipped or shipped."""
    if order["status"] != "confirmed":
        return str(order["status"])
    left = [unshipped_quantity(state, order, line) for line in order["lines"]]
    if not any(left):
        return "shipped"
    if any(shipped_quantity(state, order["id"], ln["lineNo"]) for ln in order["lines"]):
        return "partially_shipped"
    return "confirmed"


def shipment_net(state: State, shipment: Mapping[str, Any]) -> float:
    """The net value of a shipment at its order's prices."""
    order = state["salesOrders"][shipment["salesOrderId"]]
    prices = {line["lineNo"]: line["unitPrice"] for line in order["lines"]}
    return sum_money(
        w.amounts.multiply_money(line["quantity"], prices[line["lineNo"]])
        for line in shipment["lines"]
    )


def invoiced_shipment_ids(state: State) -> set[str]:
    """Shipments listed on a customer invoice that is not void."""
    return {
        shipment_id
        for invoice in state["customerInvoices"].values()
        if invoice["status"] != "void"
        for shipment_id in invoice["shipmentIds"]
    }


def customer_invoice_net(invoice: Mapping[str, Any]) -> float:
    """The net value of a customer invoice."""
    return lines_net(invoice["lines"])


def customer_invoice_total(state: State, invoice: Mapping[str, Any]) -> float:
    """Net plus VAT."""
    return gross(state, customer_invoice_net(invoice))


def customer_paid(state: State, invoice_id: str) -> float:
    """What inbound payments allocated to the invoice."""
    return sum_money(
        a["amount"]
        for p in state["payments"].values()
        if p["direction"] == "inbound" and p["status"] == "completed"
        for a in p["allocations"]
        if a["invoiceId"] == invoice_id
    )


def customer_outstanding(state: State, invoice: Mapping[str, Any]) -> float:
    """Still owed on an issued invoice (0 for drafts, void and written-off invoices)."""
    if invoice["status"] not in BILLED:
        return 0
    return to_money(customer_invoice_total(state, invoice) - customer_paid(state, invoice["id"]))


def is_overdue(state: State, invoice: Mapping[str, Any]) -> bool:
    """An issued invoice with something outstanding whose due date has passed."""
    return is_past_due(state, invoice["dueDate"], customer_outstanding(state, invoice))


def days_overdue(state: State, invoice: Mapping[str, Any]) -> int:
    """Days past the due date (0 when not overdue)."""
    return days_past_due(state, invoice["dueDate"], customer_outstanding(state, invoice))


def customer_figures(state: State, invoice: Mapping[str, Any]) -> dict[str, Any]:
    """``{net, vat, total, paid, outstanding, isOverdue, daysOverdue}`` of a customer invoice."""
    net = customer_invoice_net(invoice)
    return {
        "net": net,
        "vat": vat_of(state, net),
        "total": gross(state, net),
        "paid": customer_paid(state, invoice["id"]),
        "outstanding": customer_outstanding(state, invoice),
        "isOverdue": is_overdue(state, invoice),
        "daysOverdue": days_overdue(state, invoice),
    }


def _unbilled_net(state: State, customer_id: str) -> float:
    billed = invoiced_shipment_ids(state)
    return sum_money(
        shipment_net(state, s)
        for s in state["shipments"].values()
        if s["id"] not in billed
        and state["salesOrders"][s["salesOrderId"]]["customerId"] == customer_id
    )


def _open_order_net(state: State, customer_id: str) -> float:
    return sum_money(
        w.amounts.multiply_money(unshipped_quantity(state, order, line), line["unitPrice"])
        for order in state["salesOrders"].values()
        if order["customerId"] == customer_id and order["status"] == "confirmed"
        for line in order["lines"]
    )


def exposure(state: State, customer_id: str) -> dict[str, float]:
    """``{invoiced, unbilled, openOrders, total}``: what the customer owes or will owe (gross)."""
    invoiced = sum_money(
        customer_outstanding(state, i)
        for i in state["customerInvoices"].values()
        if i["customerId"] == customer_id
    )
    unbilled = gross(state, _unbilled_net(state, customer_id))
    orders = gross(state, _open_order_net(state, customer_id))
    return {
        "invoiced": invoiced,
        "unbilled": unbilled,
        "openOrders": orders,
        "total": sum_money([invoiced, unbilled, orders]),
    }


def unallocated(payment: Mapping[str, Any]) -> float:
    """The part of a receipt not yet applied to invoices."""
    return to_money(payment["amount"] - sum_money(a["amount"] for a in payment["allocations"]))
