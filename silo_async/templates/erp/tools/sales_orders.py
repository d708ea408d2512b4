"""Sales orders: draft -> confirmed (credit-checked) -> shipped from stock; or cancelled.

Prices default to the list price less the customer's standard discount. Confirming checks the
customer's credit: exposure (see ``get_customer_credit``) plus the order's total incl. VAT must
stay within the credit limit, and the customer must not be on hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import sales as sal
from ..domain.stock import available, find_stock, line_held
from ..state import Record, State, gross, money_text, vat_of
from .common import Reason, actor, change, changed, in_status, named, target
from .lines import LineItem, line_tools, read_lines
from .reservations import check_customer_can_receive, reserve_line

__all__ = [
    "add_sales_order_line",
    "cancel_sales_order",
    "check_order_stock",
    "confirm_sales_order",
    "create_sales_order",
    "get_sales_order",
    "list_backorders",
    "list_sales_orders",
    "order_view",
    "remove_sales_order_line",
    "reserve_order_stock",
    "search_sales_orders",
    "update_sales_order_line",
]

STATUSES = ("draft", "confirmed", "cancelled", "closed")


def order_view(state: State, order: Any) -> dict[str, Any]:
    """An order with per-line shipped / unshipped / reserved and its totals."""
    net = sal.order_net(order)
    lines = [
        {
            **ln,
            "lineTotal": w.amounts.multiply_money(ln["quantity"], ln["unitPrice"]),
            "shipped": sal.shipped_quantity(state, order["id"], ln["lineNo"]),
            "unshipped": sal.unshipped_quantity(state, order, ln),
            "reserved": line_held(state, order["id"], ln["lineNo"]),
        }
        for ln in order["lines"]
    ]
    return {
        **order,
        "lines": lines,
        "net": net,
        "vat": vat_of(state, net),
        "total": gross(state, net),
        "progress": sal.order_display_status(state, order),
        "customerName": state["customers"][order["customerId"]]["name"],
    }


SALES_ORDERS = w.Collection("salesOrders", "salesOrderId", "SO-5007", view=order_view)
list_sales_orders = SALES_ORDERS.list_tool(
    "List sales orders sorted by id with totals and shipping progress; filter by status, "
    "customer or warehouse. Paged.",
    filters={
        "status": w.schema.enum("Only orders with this stored status.", STATUSES),
        "customerId": w.schema.string("Only this customer's orders."),
        "warehouseId": w.schema.string("Only orders shipping from this warehouse."),
    },
    references={"customerId": "customers", "warehouseId": "warehouses"},
)
search_sales_orders = SALES_ORDERS.search_tool(
    "Find sales orders whose id, customer reference or customer name contains the query. Paged.",
    lambda state, o: [o["customerReference"], state["customers"][o["customerId"]]["name"]],
)
get_sales_order = SALES_ORDERS.get_tool("One sales order.")


def _discounted(state: State, context: Mapping[str, Any], product: Record) -> float:
    customer = state["customers"][context["customerId"]]
    return w.amounts.to_money(product["listPrice"] * (100 - customer["discountPercent"]) / 100)


_SALES = actor("sales")
_ORDER = target("salesOrders", "salesOrderId", "The order.", "salesOrder")


class _NewOrder(w.Input):
    customerId = w.fields.string("The customer.")
    warehouseId = w.fields.string("Shipping warehouse.")
    customerReference = w.fields.string("The customer's order number.", default=None)
    lines = w.fields.objects("What is ordered.", LineItem)


@_SALES.write_tool(_NewOrder)
def create_sales_order(call: w.Write[_NewOrder]) -> dict[str, Any]:
    """Create a draft sales order shipping from one warehouse (sales roles). Unit prices default to
    list price less the customer's discount. Blocked customers cannot order.
    """
    state, args = call.state, call.args
    customer = named(state, "customers", args.customerId)
    if customer["status"] == "blocked":
        raise silo.tool_error("not_allowed", f"Customer {customer['id']} is blocked.")
    warehouse = named(state, "warehouses", args.warehouseId)
    lines = read_lines(state, args.lines, "unitPrice", _discounted, {"customerId": customer["id"]})
    order: Record = {
        "id": w.records.next_id(state, "SO", width=4),
        "customerId": customer["id"],
        "warehouseId": warehouse["id"],
        "status": "draft",
        "lines": lines,
        "orderDate": w.clock.today(state),
        "requestedDate": None,
        "customerReference": args.customerReference,
        "createdBy": call.actor["id"],
        "confirmedAt": None,
        "cancelReason": None,
    }
    audit_id = call.add(_ORDER, order, f"Draft order for {customer['id']}.")
    return {"created": order_view(state, order), "auditId": audit_id}


add_sales_order_line, update_sales_order_line, remove_sales_order_line = line_tools(
    "sales_order", "salesOrders", "salesOrderId", "unitPrice", _discounted, "sales"
)


def _credit_check(state: State, order: Record) -> None:
    customer = state["customers"][order["customerId"]]
    owed = sal.exposure(state, customer["id"])["total"]
    total = gross(state, sal.order_net(order))
    if owed + total > customer["creditLimit"]:
        raise silo.tool_error(
            "limit_exceeded",
            f"Confirming {order['id']} ({money_text(total)} incl. VAT) would take "
            f"{customer['name']} ({customer['id']}) to {money_text(owed + total)} against a credit "
            f"limit of {money_text(customer['creditLimit'])} (current exposure "
            f"{money_text(owed)}).",
            {
                "customerId": customer["id"],
                "creditLimit": customer["creditLimit"],
                "exposure": owed,
                "orderTotal": total,
            },
        )


@_SALES.write_tool(target=in_status(_ORDER, ("draft",), "be confirmed"))
def confirm_sales_order(call: w.Write) -> dict[str, Any]:
    """Confirm a draft order after the credit check (exposure + order total within the credit limit;
    customer not on hold). Confirmed orders can be reserved and shipped.

    Draft -> confirmed.
    """
    state, order = call.state, call.record
    if not order["lines"]:
        raise silo.tool_error("invalid_state", f"{order['id']} has no lines.")
    check_customer_can_receive(state, order, "confirming")
    _credit_check(state, order)
    audit_id = change(
        call, "Confirmed after credit check.", status="confirmed", confirmedAt=w.clock.now(state)
    )
    return {"updated": order_view(state, order), "auditId": audit_id}


@_SALES.write_tool(Reason, target=in_status(_ORDER, ("draft", "confirmed"), "be cancelled"))
def cancel_sales_order(call: w.Write[Reason]) -> dict[str, Any]:
    """Cancel an order nothing has shipped on; its reservations are released.

    Draft / confirmed -> cancelled.
    """
    state, order = call.state, call.record
    if any(sal.shipped_quantity(state, order["id"], ln["lineNo"]) for ln in order["lines"]):
        raise silo.tool_error("invalid_state", f"Goods have shipped on {order['id']}.")
    for reservation in state["reservations"].values():
        if reservation["salesOrderId"] == order["id"] and reservation["status"] == "active":
            reservation["status"] = "released"
    reason = call.args.reason
    return changed(call, order_view, reason, status="cancelled", cancelReason=reason)


def _stock_lines(state: State, order: Record) -> list[dict[str, Any]]:
    rows = []
    for line in order["lines"]:
        record = find_stock(state, line["productId"], order["warehouseId"])
        free = available(state, record) if record else 0
        need = sal.unshipped_quantity(state, order, line) - line_held(
            state, order["id"], line["lineNo"]
        )
        elsewhere = {
            s["warehouseId"]: available(state, s)
            for s in w.tools.sorted_by_id(state["stock"])
            if s["productId"] == line["productId"] and s["warehouseId"] != order["warehouseId"]
        }
        rows.append(
            {
                "lineNo": line["lineNo"],
                "productId": line["productId"],
                "unshipped": sal.unshipped_quantity(state, order, line),
                "reserved": line_held(state, order["id"], line["lineNo"]),
                "stillToReserve": max(0, need),
                "availableHere": free,
                "shortfall": max(0, need - max(0, free)),
                "availableElsewhere": elsewhere,
            }
        )
    return rows


class _Order(w.Input):
    salesOrderId = w.fields.string("The order.")


@w.define_tool(_Order)
def check_order_stock(state: State, args: _Order) -> dict[str, Any]:
    """For each line of an order: what is still to ship, already reserved, still to reserve,
    available in the order's warehouse, the shortfall there, and availability elsewhere.
    """
    order = named(state, "salesOrders", args.salesOrderId)
    return {
        "salesOrderId": order["id"],
        "warehouseId": order["warehouseId"],
        "lines": _stock_lines(state, order),
    }


@_SALES.write_tool(target=in_status(_ORDER, ("confirmed",), "reserve stock"))
def reserve_order_stock(call: w.Write) -> dict[str, Any]:
    """Reserve, line by line, as much of a confirmed order as the warehouse has available; reports
    what was reserved and what is still short.
    """
    state, actor, order = call.state, call.actor, call.record
    check_customer_can_receive(state, order, "reserving stock for")
    created = []
    for row, line in zip(_stock_lines(state, order), order["lines"], strict=True):
        amount = min(row["stillToReserve"], max(0, row["availableHere"]))
        if amount > 0:
            created.append(reserve_line(state, order, line, amount, actor["id"]))
    return {"created": created, "lines": _stock_lines(state, order)}


@w.define_tool()
def list_backorders(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Confirmed order lines that still need stock they cannot reserve in their warehouse."""
    rows = [
        {"salesOrderId": o["id"], "customerId": o["customerId"], **row}
        for o in w.tools.sorted_by_id(state["salesOrders"])
        if o["status"] == "confirmed"
        for row in _stock_lines(state, o)
        if row["shortfall"] > 0
    ]
    return {"results": rows, "count": len(rows)}
