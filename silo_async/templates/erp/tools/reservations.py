"""Reservations: stock held for a confirmed sales order line in the order's warehouse."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.sales import unshipped_quantity
from ..domain.stock import held, line_held
from ..state import Record, State, find_line
from .common import Reason, actor, change, in_status, target
from .stock_ops import require_available, require_stock

__all__ = [
    "check_customer_can_receive",
    "get_reservation",
    "list_reservations",
    "release_reservation",
    "reserve_line",
    "reserve_stock",
]

STATUSES = ("active", "released", "consumed")


def _view(state: State, reservation: Any) -> dict[str, Any]:
    return {**reservation, "held": held(reservation)}


RESERVATIONS = w.Collection("reservations", "reservationId", "RES-0003", view=_view)
list_reservations = RESERVATIONS.list_tool(
    "List stock reservations sorted by id with what each still holds; filter by sales order, "
    "product, warehouse or status. Paged.",
    filters={
        "salesOrderId": w.schema.string("Only reservations for this order."),
        "productId": w.schema.string("Only this product."),
        "warehouseId": w.schema.string("Only this warehouse."),
        "status": w.schema.enum("Only reservations with this status.", STATUSES),
    },
    references={
        "salesOrderId": "salesOrders",
        "productId": "products",
        "warehouseId": "warehouses",
    },
)
get_reservation = RESERVATIONS.get_tool("One reservation.")


def check_customer_can_receive(state: State, order: Record, doing: str) -> None:
    """``not_allowed`` when the order's customer is on hold or blocked."""
    customer = state["customers"][order["customerId"]]
    if customer["status"] != "active":
        raise silo.tool_error(
            "not_allowed",
            f"Customer {customer['id']} ({customer['name']}) is {customer['status']}"
            f" ({customer['holdReason']}); {doing} {order['id']} is not allowed until released.",
            {"customerId": customer["id"], "status": customer["status"]},
        )


def _reservable(state: State, order: Record, line: Record, quantity: int | None) -> int:
    """How much to reserve: ``quantity`` or all the line still needs, checked against stock.

    Raises:
        ToolError: ``conflict`` when the line is already fully reserved, ``invalid_input`` when
            asking for more than the line still needs, ``invalid_state`` without enough stock.
    """
    held_now = line_held(state, order["id"], line["lineNo"])
    need = unshipped_quantity(state, order, line) - held_now
    label = f"{order['id']} line {line['lineNo']}"
    if need <= 0:
        raise silo.tool_error(
            "conflict",
            f"{label} is already fully reserved ({held_now} held for "
            f"{unshipped_quantity(state, order, line)} still to ship).",
            {"held": held_now},
        )
    want = need if quantity is None else quantity
    if want > need:
        raise w.fields.invalid(
            "quantity", f"must be at most {need} (what {label} still needs)", want
        )
    record = require_stock(state, line["productId"], order["warehouseId"])
    require_available(state, record, want, f"{label} needs {want}")
    return want


def reserve_line(
    state: State, order: Record, line: Record, quantity: int | None, actor_id: str
) -> Record:
    """Reserve ``quantity`` (default: all still unreserved) of one order line; the reservation."""
    want = _reservable(state, order, line, quantity)
    reservation_id = w.records.next_id(state, "RES", width=4)
    state["reservations"][reservation_id] = reservation = {
        "id": reservation_id,
        "salesOrderId": order["id"],
        "lineNo": line["lineNo"],
        "productId": line["productId"],
        "warehouseId": order["warehouseId"],
        "quantity": want,
        "consumed": 0,
        "status": "active",
        "createdAt": w.clock.now(state),
        "createdBy": actor_id,
    }
    detail = (
        f"Reserved {want} of {line['productId']} at {order['warehouseId']} for {order['id']} "
        f"line {line['lineNo']}."
    )
    w.records.audit(state, actor_id, "reserve_stock", "reservation", reservation_id, detail)
    return reservation


_STOCK_ROLES = actor("sales", "warehouse")


class _Reservation(w.Input):
    lineNo = w.fields.integer("The order line.", minimum=1)
    quantity = w.fields.integer(
        "Units to reserve (default: all still needed).",
        minimum=1,
        bounds=(1, 10_000_000),
        default=None,
    )


@_STOCK_ROLES.write_tool(
    _Reservation,
    target=in_status(
        target("salesOrders", "salesOrderId", "The order.", "salesOrder"),
        ("confirmed",),
        "reserve stock",
    ),
)
def reserve_stock(call: w.Write[_Reservation]) -> dict[str, Any]:
    """Reserve stock in the order's warehouse for one line of a confirmed sales order (default:
    everything the line still needs). Sales or warehouse roles; refused for a customer on hold.
    """
    state, args, order = call.state, call.args, call.record
    check_customer_can_receive(state, order, "reserving stock for")
    line = find_line(order, args.lineNo)
    if line is None:
        raise silo.tool_error(
            "not_found",
            f"{order['id']} has no line {call.input['lineNo']} (lines: "
            f"{', '.join(str(ln['lineNo']) for ln in order['lines'])}).",
        )
    quantity = args.quantity
    return {"created": _view(state, reserve_line(state, order, line, quantity, call.actor["id"]))}


@_STOCK_ROLES.write_tool(
    Reason,
    target=in_status(
        target("reservations", "reservationId", "The reservation.", "reservation"),
        ("active",),
        "be released",
    ),
)
def release_reservation(call: w.Write[Reason]) -> dict[str, Any]:
    """Release what an active reservation still holds, making it available again.

    Active -> released.
    """
    reservation = call.record
    freed = held(reservation)
    detail = f"Released {freed}: {call.args.reason}"
    audit_id = change(call, detail, status="released")
    return {"updated": _view(call.state, reservation), "released": freed, "auditId": audit_id}
