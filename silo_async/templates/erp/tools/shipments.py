"""Shipments: sending a confirmed order's goods from its warehouse.

Shipping consumes the line's reservations first, then needs free (unreserved) stock for the
rest, so it never takes units held for another order.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import sales as sal
from ..domain.stock import available, held, line_held
from ..state import Record, State, find_line
from .common import actor, changed, in_status, target
from .reservations import check_customer_can_receive
from .stock_ops import move_stock, require_stock

__all__ = [
    "get_shipment",
    "list_shipments",
    "list_uninvoiced_shipments",
    "mark_shipment_delivered",
    "ship_sales_order",
    "shipment_view",
]


def shipment_view(state: State, shipment: Any) -> dict[str, Any]:
    """A shipment with its net value at order prices and whether it is invoiced."""
    order = state["salesOrders"][shipment["salesOrderId"]]
    return {
        **shipment,
        "customerId": order["customerId"],
        "net": sal.shipment_net(state, shipment),
        "invoiced": shipment["id"] in sal.invoiced_shipment_ids(state),
    }


SHIPMENTS = w.Collection("shipments", "shipmentId", "SHP-6005", view=shipment_view)
list_shipments = SHIPMENTS.list_tool(
    "List shipments sorted by id with value and whether invoiced; filter by sales order or "
    "warehouse. Paged.",
    filters={
        "salesOrderId": w.schema.string("Only shipments of this order."),
        "warehouseId": w.schema.string("Only shipments from this warehouse."),
    },
    references={"salesOrderId": "salesOrders", "warehouseId": "warehouses"},
)
get_shipment = SHIPMENTS.get_tool("One shipment.")


@w.define_tool()
def list_uninvoiced_shipments(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Shipments not on any customer invoice (void invoices do not count), with their value."""
    billed = sal.invoiced_shipment_ids(state)
    rows = [
        shipment_view(state, s)
        for s in w.tools.sorted_by_id(state["shipments"])
        if s["id"] not in billed
    ]
    return {"results": rows, "count": len(rows)}


class _ShippedLine(w.Input):
    lineNo = w.fields.integer("The order line.", minimum=1)
    quantity = w.fields.integer("Units.", minimum=1)


class _Shipping(w.Input):
    lines = w.fields.objects("What to ship.", _ShippedLine, default=None)
    carrier = w.fields.string("Carrier.", default=None)


def _plan(state: State, order: Record, args: _Shipping) -> list[tuple[Record, int]]:
    given = args.lines
    if given is None:
        plan = [(ln, sal.unshipped_quantity(state, order, ln)) for ln in order["lines"]]
        return [(ln, q) for ln, q in plan if q > 0]
    plan = []
    for index, item in enumerate(given):
        path = f"lines[{index}]"
        line = find_line(order, item.lineNo)
        if line is None:
            number = w.fields.input_of(item)["lineNo"]  # as the agent wrote it
            raise silo.tool_error("not_found", f"{order['id']} has no line {number}.")
        left = sal.unshipped_quantity(state, order, line)
        quantity = item.quantity
        if quantity > left:
            raise w.fields.invalid(
                f"{path}.quantity", f"must be at most {left} (still to ship)", quantity
            )
        plan.append((line, quantity))
    return plan


def _check_stock(state: State, order: Record, plan: list[tuple[Record, int]]) -> None:
    for line, quantity in plan:
        record = require_stock(state, line["productId"], order["warehouseId"])
        mine = line_held(state, order["id"], line["lineNo"])
        free = available(state, record)
        if quantity - min(quantity, mine) > free:
            raise silo.tool_error(
                "invalid_state",
                f"Line {line['lineNo']} needs {quantity} of {line['productId']} at "
                f"{order['warehouseId']}: {mine} reserved for it and {free} free "
                f"({record['onHand']} on hand). Transfer stock in or ship less.",
                {"lineNo": line["lineNo"], "reservedForLine": mine, "available": free},
            )


def _consume(state: State, order: Record, line: Record, quantity: int) -> None:
    for reservation in w.tools.sorted_by_id(state["reservations"]):
        if quantity <= 0:
            return
        if reservation["salesOrderId"] == order["id"] and reservation["lineNo"] == line["lineNo"]:
            take = min(quantity, held(reservation))
            if take:
                reservation["consumed"] += take
                quantity -= take
                if held(reservation) == 0:
                    reservation["status"] = "consumed"


_SHIPMENT = target("shipments", "shipmentId", "The shipment.", "shipment")
_ORDER = target("salesOrders", "salesOrderId", "The order.", "salesOrder")


@actor("warehouse").write_tool(_Shipping, target=in_status(_ORDER, ("confirmed",), "be shipped"))
def ship_sales_order(call: w.Write[_Shipping]) -> dict[str, Any]:
    """Ship a confirmed order from its warehouse (warehouse roles): without lines, everything still
    to ship. Uses the line's reservations first, then free stock; refused for a customer on hold
    or when stock is short.
    """
    state, args, actor, order = call.state, call.args, call.actor, call.record
    check_customer_can_receive(state, order, "shipping")
    plan = _plan(state, order, args)
    if not plan:
        raise silo.tool_error("invalid_state", f"Everything on {order['id']} has shipped.")
    _check_stock(state, order, plan)
    shipment_id = w.records.next_id(state, "SHP", width=4)
    for line, quantity in plan:
        _consume(state, order, line, quantity)
        record = require_stock(state, line["productId"], order["warehouseId"])
        move_stock(state, record, -quantity, "shipment", ("shipment", shipment_id), actor["id"])
    shipment: Record = {
        "id": shipment_id,
        "salesOrderId": order["id"],
        "warehouseId": order["warehouseId"],
        "shippedAt": w.clock.now(state),
        "shippedBy": actor["id"],
        "carrier": args.carrier,
        "lines": [
            {"lineNo": ln["lineNo"], "productId": ln["productId"], "quantity": q} for ln, q in plan
        ],
        "deliveredAt": None,
    }
    audit_id = call.add(_SHIPMENT, shipment, f"Shipped on {order['id']}.")
    return {
        "created": shipment_view(state, shipment),
        "progress": sal.order_display_status(state, order),
        "auditId": audit_id,
    }


@actor("warehouse", "sales").write_tool(target=_SHIPMENT)
def mark_shipment_delivered(call: w.Write) -> dict[str, Any]:
    """Record that a shipment reached the customer."""
    state, shipment = call.state, call.record
    if shipment["deliveredAt"] is not None:
        raise silo.tool_error(
            "conflict", f"{shipment['id']} was delivered {shipment['deliveredAt']}."
        )
    return changed(call, shipment_view, "Delivered.", deliveredAt=w.clock.now(state))
