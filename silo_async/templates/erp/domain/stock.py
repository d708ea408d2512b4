"""Stock: what is on hand, held for orders, on its way, and below its reorder point.

``onHand`` is the only stored quantity. Reserved is the sum of active reservations (what each
still holds: ``quantity - consumed``); available is on hand minus reserved; inbound is what sent
purchase orders still have to deliver to the warehouse plus transfers in transit to it;
projected is available plus inbound. A stock line is below its reorder point when its projected
quantity is, for an active product.
"""

from __future__ import annotations

from typing import Any

from ..state import Record, State
from .purchasing import line_remaining

__all__ = [
    "available",
    "find_stock",
    "held",
    "inbound",
    "is_below_reorder",
    "line_held",
    "projected",
    "reserved",
    "stock_view",
]


def find_stock(state: State, product_id: str, warehouse_id: str) -> Record | None:
    """The stock line of a product in a warehouse, or None when the warehouse never held it."""
    for record in state["stock"].values():
        if record["productId"] == product_id and record["warehouseId"] == warehouse_id:
            found: Record = record
            return found
    return None


def held(reservation: Record) -> int:
    """What a reservation still holds (0 once released or consumed)."""
    if reservation["status"] != "active":
        return 0
    return int(reservation["quantity"] - reservation["consumed"])


def reserved(state: State, product_id: str, warehouse_id: str) -> int:
    """Units of a product held by active reservations in a warehouse."""
    return sum(
        held(r)
        for r in state["reservations"].values()
        if r["productId"] == product_id and r["warehouseId"] == warehouse_id
    )


def line_held(state: State, order_id: str, line_no: int) -> int:
    """Units held by active reservations for one sales order line."""
    return sum(
        held(r)
        for r in state["reservations"].values()
        if r["salesOrderId"] == order_id and r["lineNo"] == line_no
    )


def available(state: State, record: Record) -> int:
    """On hand minus reserved (negative when more is reserved than is there)."""
    return int(record["onHand"]) - reserved(state, record["productId"], record["warehouseId"])


def inbound(state: State, product_id: str, warehouse_id: str) -> int:
    """Units still due from sent purchase orders plus transfers in transit to the warehouse."""
    from_orders = sum(
        line_remaining(state, po, line)
        for po in state["purchaseOrders"].values()
        if po["status"] == "sent" and po["warehouseId"] == warehouse_id
        for line in po["lines"]
        if line["productId"] == product_id
    )
    in_transit = sum(
        t["quantity"]
        for t in state["transfers"].values()
        if t["status"] == "in_transit"
        and t["productId"] == product_id
        and t["toWarehouseId"] == warehouse_id
    )
    return int(from_orders + in_transit)


def projected(state: State, record: Record) -> int:
    """Available plus inbound."""
    return available(state, record) + inbound(state, record["productId"], record["warehouseId"])


def is_below_reorder(state: State, record: Record) -> bool:
    """An active product whose projected quantity is below the line's reorder point."""
    product = state["products"][record["productId"]]
    return bool(product["status"] == "active" and projected(state, record) < record["reorderPoint"])


def stock_view(state: State, record: Record) -> dict[str, Any]:
    """A stock line with its derived quantities."""
    product = state["products"][record["productId"]]
    res = reserved(state, record["productId"], record["warehouseId"])
    incoming = inbound(state, record["productId"], record["warehouseId"])
    free = int(record["onHand"]) - res
    return {
        **record,
        "sku": product["sku"],
        "productName": product["name"],
        "productStatus": product["status"],
        "reserved": res,
        "available": free,
        "inbound": incoming,
        "projected": free + incoming,
        "belowReorderPoint": product["status"] == "active"
        and free + incoming < record["reorderPoint"],
    }
