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
#: The most units a count or a reorder level may say (read, not stated in the schema).
_MAX_UNITS = 10_000_000


class _StockLine(w.Input):
    """A stock line, named by its product and warehouse."""

    productId = w.fields.string("The product, e.g. PRD-011.")
    warehouseId = w.fields.string("The warehouse, e.g. WH-001.")


#: The same two as list filters (compared as given).
_WHERE = {key: field.schema for key, field in w.fields.fields_of(_StockLine).items()}

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


@w.define_tool(_StockLine)
def get_stock_level(state: State, args: _StockLine) -> dict[str, Any]:
    """One product's stock line in one warehouse, with derived quantities."""
    record = require_stock(state, args.productId, args.warehouseId)
    return stock_view(state, record)


class _LowStock(w.Input):
    warehouseId = w.fields.string("Only this warehouse.", default=None, raw=True)


@w.define_tool(_LowStock)
def list_low_stock(state: State, args: _LowStock) -> dict[str, Any]:
    """Stock lines of active products whose projected quantity (available + inbound) is below the
    reorder point, with the shortfall, the reorder quantity and the preferred vendor; optionally
    for one warehouse. Discontinued products are never listed.

    Lines below their reorder point, sorted by id.
    """
    w.records.check_references(state, args, {"warehouseId": "warehouses"})
    wanted = args.warehouseId
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


class _Need(w.Input):
    productId = w.fields.string("The product.")
    quantity = w.fields.integer("Units needed.", minimum=1)


@w.define_tool(_Need)
def find_stock(state: State, args: _Need) -> dict[str, Any]:
    """Where a quantity of a product is available: every warehouse's available stock, the ones that
    could supply the quantity alone, and whether it must be split.
    """
    product = named(state, "products", args.productId)
    need = args.quantity
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


def _stock_line(call: w.Write[_Adjustment] | w.Write[_Count] | w.Write[_Levels]) -> Record:
    """The stock line the call's ``productId`` and ``warehouseId`` name."""
    return require_stock(call.state, call.args.productId, call.args.warehouseId)


def _audit(call: w.Write, record: Record, detail: str, changes: list[w.records.Change]) -> str:
    return call.audit(detail, changes, entity="stock", entity_id=record["id"])


class _Adjustment(_StockLine):
    quantityChange = w.fields.integer(
        "Units to add (positive) or remove (negative), not 0.", bounds=(-1_000_000, 1_000_000)
    )
    reason = w.fields.string("Why the stock changes.")


@_WAREHOUSE.write_tool(_Adjustment)
def adjust_stock(call: w.Write[_Adjustment]) -> dict[str, Any]:
    """Correct on-hand stock by a signed quantity with a reason (damage, loss, found stock);
    warehouse roles. On hand may not fall below zero or below what is reserved.
    """
    state, args, actor = call.state, call.args, call.actor
    record = _stock_line(call)
    delta = args.quantityChange
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
        args.reason,
    )
    change = {"field": "onHand", "from": before, "to": record["onHand"]}
    audit_id = _audit(call, record, f"Adjusted by {delta}: {movement['reason']}", [change])
    return {"stock": stock_view(state, record), "movement": movement, "auditId": audit_id}


class _Count(_StockLine):
    countedQuantity = w.fields.integer("Units counted.", minimum=0, bounds=(0, _MAX_UNITS))


@_WAREHOUSE.write_tool(_Count)
def count_stock(call: w.Write[_Count]) -> dict[str, Any]:
    """Record a physical count: the difference from on hand is posted as an adjustment (reason cycle
    count) and the line's last count date is set. A count below what is reserved is refused:
    release reservations first.
    """
    state, actor = call.state, call.actor
    record = _stock_line(call)
    counted = call.args.countedQuantity
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


class _Levels(_StockLine):
    reorderPoint = w.fields.integer(
        "New reorder point.", minimum=0, bounds=(0, _MAX_UNITS), default=None
    )
    reorderQuantity = w.fields.integer(
        "New reorder quantity.", minimum=0, bounds=(0, _MAX_UNITS), default=None
    )


@_WAREHOUSE.write_tool(_Levels)
def set_reorder_levels(call: w.Write[_Levels]) -> dict[str, Any]:
    """Change a stock line's reorder point and/or reorder quantity (warehouse roles)."""
    state, args = call.state, call.args
    record = _stock_line(call)
    w.fields.require_some(args, ["reorderPoint", "reorderQuantity"])
    for key in ("reorderPoint", "reorderQuantity"):
        value = getattr(args, key)  # each read (and judged) in turn, after the one before is set
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
