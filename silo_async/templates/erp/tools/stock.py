"""Warehouses and stock levels: looking, counting, adjusting and reorder levels."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.stock import available, is_below_reorder, projected, reserved, stock_view
from ..state import Record, State
from .common import actor, named
from .stock_ops import move_stock, require_stock

__all__ = [
    "adjust_stock",
    "count_stock",
    "find_stock",
    "get_stock_level",
    "get_stock_movement",
    "get_warehouse",
    "list_low_stock",
    "list_stock",
    "list_stock_movements",
    "list_warehouses",
    "set_reorder_levels",
]

MOVEMENT_TYPES = ("receipt", "shipment", "transfer_out", "transfer_in", "adjustment", "return")
_WHERE = {
    "productId": w.schema.string("The product, e.g. PRD-011."),
    "warehouseId": w.schema.string("The warehouse, e.g. WH-001."),
}

WAREHOUSES = w.Collection("warehouses", "warehouseId", "WH-001")
list_warehouses = WAREHOUSES.list_tool("List warehouses. Paged.")
get_warehouse = WAREHOUSES.get_tool(
    "One warehouse with its totals: stock lines, units on hand and units reserved.",
    view=lambda state, wh: {
        **wh,
        "stockLines": sum(1 for s in state["stock"].values() if s["warehouseId"] == wh["id"]),
        "unitsOnHand": sum(
            s["onHand"] for s in state["stock"].values() if s["warehouseId"] == wh["id"]
        ),
        "unitsReserved": sum(
            reserved(state, s["productId"], wh["id"])
            for s in state["stock"].values()
            if s["warehouseId"] == wh["id"]
        ),
    },
)
STOCK = w.Collection("stock", view=stock_view)
list_stock = STOCK.list_tool(
    "List stock lines (one per product and warehouse) sorted by id with on hand, reserved, "
    "available, inbound and projected quantities; filter by product or warehouse, or only lines "
    "below their reorder point. Paged.",
    filters=_WHERE,
    references={"productId": "products", "warehouseId": "warehouses"},
    extra={
        "belowReorderOnly": w.schema.boolean("Only lines whose projected stock is below reorder.")
    },
    where=lambda state, r, input: not input.get("belowReorderOnly") or is_below_reorder(state, r),
)


@w.define_tool(_WHERE, ["productId", "warehouseId"])
def get_stock_level(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """One product's stock line in one warehouse, with derived quantities."""
    record = require_stock(
        state, w.fields.read_string(input, "productId"), w.fields.read_string(input, "warehouseId")
    )
    return stock_view(state, record)


@w.define_tool({"warehouseId": w.schema.string("Only this warehouse.")})
def list_low_stock(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Stock lines of active products whose projected quantity (available + inbound) is below the
    reorder point, with the shortfall, the reorder quantity and the preferred vendor; optionally
    for one warehouse. Discontinued products are never listed.

    Lines below their reorder point, sorted by id.
    """
    w.records.check_references(state, input, {"warehouseId": "warehouses"})
    wanted = input.get("warehouseId")
    rows = [
        {
            **stock_view(state, r),
            "shortfall": r["reorderPoint"] - projected(state, r),
            "preferredVendorId": state["products"][r["productId"]]["preferredVendorId"],
        }
        for r in w.tools.sorted_by_id(state["stock"])
        if (wanted is None or r["warehouseId"] == wanted) and is_below_reorder(state, r)
    ]
    return {"results": rows, "count": len(rows)}


@w.define_tool(
    {
        "productId": w.schema.string("The product."),
        "quantity": w.schema.integer("Units needed.", minimum=1),
    },
    ["productId", "quantity"],
)
def find_stock(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Where a quantity of a product is available: every warehouse's available stock, the ones that
    could supply the quantity alone, and whether it must be split.
    """
    product = named(state, "products", input, "productId")
    need = w.fields.read_int(input, "quantity", minimum=1)
    rows = [
        {"warehouseId": r["warehouseId"], "onHand": r["onHand"], "available": available(state, r)}
        for r in w.tools.sorted_by_id(state["stock"])
        if r["productId"] == product["id"]
    ]
    able = [r["warehouseId"] for r in rows if r["available"] >= need]
    total = sum(max(0, r["available"]) for r in rows)
    return {
        "productId": product["id"],
        "quantity": need,
        "warehouses": rows,
        "canSupplyAlone": able,
        "totalAvailable": total,
        "requiresSplit": not able and total >= need,
    }


_WAREHOUSE = actor("warehouse")


def _stock_line(call: w.Write) -> Record:
    """The stock line the call's ``productId`` and ``warehouseId`` name."""
    input = call.input
    return require_stock(
        call.state,
        w.fields.read_string(input, "productId"),
        w.fields.read_string(input, "warehouseId"),
    )


def _audit(call: w.Write, record: Record, detail: str, changes: list[w.records.Change]) -> str:
    return call.audit(detail, changes, entity="stock", entity_id=record["id"])


@_WAREHOUSE.write_tool(
    {
        **_WHERE,
        "quantityChange": w.schema.integer("Units to add (positive) or remove (negative), not 0."),
        "reason": w.schema.string("Why the stock changes."),
    },
    ["productId", "warehouseId", "quantityChange", "reason"],
)
def adjust_stock(call: w.Write) -> dict[str, Any]:
    """Correct on-hand stock by a signed quantity with a reason (damage, loss, found stock);
    warehouse roles. On hand may not fall below zero or below what is reserved.
    """
    state, input, actor = call.state, call.input, call.actor
    record = _stock_line(call)
    delta = w.fields.read_int(input, "quantityChange", minimum=-1_000_000, maximum=1_000_000)
    if delta == 0:
        raise w.fields.invalid("quantityChange", "must not be 0", delta)
    before = record["onHand"]
    movement = move_stock(
        state,
        record,
        delta,
        "adjustment",
        ("adjustment", None),
        actor["id"],
        w.fields.read_string(input, "reason"),
    )
    change = {"field": "onHand", "from": before, "to": record["onHand"]}
    audit_id = _audit(call, record, f"Adjusted by {delta}: {movement['reason']}", [change])
    return {"stock": stock_view(state, record), "movement": movement, "auditId": audit_id}


@_WAREHOUSE.write_tool(
    {**_WHERE, "countedQuantity": w.schema.integer("Units counted.", minimum=0)},
    ["productId", "warehouseId", "countedQuantity"],
)
def count_stock(call: w.Write) -> dict[str, Any]:
    """Record a physical count: the difference from on hand is posted as an adjustment (reason cycle
    count) and the line's last count date is set. A count below what is reserved is refused:
    release reservations first.
    """
    state, input, actor = call.state, call.input, call.actor
    record = _stock_line(call)
    counted = w.fields.read_int(input, "countedQuantity", minimum=0, maximum=10_000_000)
    before = record["onHand"]
    movement = None
    if counted != before:
        movement = move_stock(
            state,
            record,
            counted - before,
            "adjustment",
            ("count", None),
            actor["id"],
            "Cycle count variance",
        )
    changes: list[w.records.Change] = [{"field": "onHand", "from": before, "to": counted}]
    w.records.set_field(record, "lastCountedOn", w.clock.today(state), changes)
    audit_id = _audit(call, record, f"Counted {counted} (system said {before}).", changes)
    return {
        "stock": stock_view(state, record),
        "variance": counted - before,
        "movement": movement,
        "auditId": audit_id,
    }


@_WAREHOUSE.write_tool(
    {
        **_WHERE,
        "reorderPoint": w.schema.integer("New reorder point.", minimum=0),
        "reorderQuantity": w.schema.integer("New reorder quantity.", minimum=0),
    },
    ["productId", "warehouseId"],
)
def set_reorder_levels(call: w.Write) -> dict[str, Any]:
    """Change a stock line's reorder point and/or reorder quantity (warehouse roles)."""
    state, input = call.state, call.input
    record = _stock_line(call)
    w.fields.require_some(input, ["reorderPoint", "reorderQuantity"])
    for key in ("reorderPoint", "reorderQuantity"):
        value = w.fields.read_int(input, key, None, minimum=0, maximum=10_000_000)
        if value is not None:
            call.set(key, value, record)
    if not call.changes:
        raise silo.tool_error("conflict", f"Stock line {record['id']} already has these levels.")
    audit_id = _audit(call, record, "Reorder levels changed.", call.changes)
    return {"stock": stock_view(state, record), "auditId": audit_id}


STOCK_MOVEMENTS = w.Collection("stockMovements", "movementId", "MOV-0003")
list_stock_movements = STOCK_MOVEMENTS.list_tool(
    "Stock movements oldest first (ascending id); filter by product, warehouse, type or the "
    "document that caused them. Paged.",
    filters={
        **_WHERE,
        "type": w.schema.enum("Only this kind of movement.", MOVEMENT_TYPES),
        "referenceId": w.schema.string("Only movements caused by this document, e.g. GRN-1006."),
    },
    references={"productId": "products", "warehouseId": "warehouses"},
)
get_stock_movement = STOCK_MOVEMENTS.get_tool("One stock movement.", name="get_stock_movement")
