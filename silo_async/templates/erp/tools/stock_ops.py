"""The one write path for stock: every change of ``onHand`` is a movement, stamped and audited.

Receipts, shipments, transfers, counts and adjustments all go through :func:`move_stock`, so
on-hand never goes negative and never drops below what reservations hold, and every change can
be traced from ``list_stock_movements``.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.stock import available, find_stock, reserved
from ..state import Record, State

__all__ = ["move_stock", "require_available", "require_stock", "stock_line"]


def require_stock(state: State, product_id: str, warehouse_id: str) -> Record:
    """The stock line, or ``not_found`` naming the product and warehouse."""
    w.records.require_record(state, "products", product_id)
    w.records.require_record(state, "warehouses", warehouse_id)
    record = find_stock(state, product_id, warehouse_id)
    if record is None:
        raise silo.tool_error(
            "not_found",
            f"Warehouse {warehouse_id} holds no stock line for {product_id}.",
            {"collection": "stock", "productId": product_id, "warehouseId": warehouse_id},
        )
    return record


def require_available(state: State, record: Record, wanted: int, shortfall: str) -> None:
    """``wanted`` units of the stock line must be available (on hand, not reserved).

    Raises:
        ToolError: ``invalid_state`` saying what is on hand and reserved, then ``shortfall``
            (what cannot happen, e.g. ``cannot move 12``), with details ``{available,
            requested}``.
    """
    free = available(state, record)
    if wanted > free:
        raise silo.tool_error(
            "invalid_state",
            f"Only {free} of {record['productId']} are available at {record['warehouseId']} "
            f"({record['onHand']} on hand, {record['onHand'] - free} reserved); {shortfall}.",
            {"available": free, "requested": wanted},
        )


def stock_line(state: State, product_id: str, warehouse_id: str) -> Record:
    """The stock line, created empty (reorder point 0) when the warehouse never held it."""
    record = find_stock(state, product_id, warehouse_id)
    if record is not None:
        return record
    stock_id = w.records.next_id(state, "STK")
    created: Record = {
        "id": stock_id,
        "productId": product_id,
        "warehouseId": warehouse_id,
        "onHand": 0,
        "reorderPoint": 0,
        "reorderQuantity": 0,
        "bin": None,
        "lastCountedOn": None,
    }
    state["stock"][stock_id] = created
    return created


def move_stock(
    state: State,
    record: Record,
    delta: int,
    kind: str,
    reference: tuple[str, str | None],
    actor_id: str,
    reason: str | None = None,
    keep_reserved: bool = True,
) -> dict[str, Any]:
    """Change ``onHand`` by ``delta`` and write the movement; the movement record.

    Args:
        state: the world.
        record: the stock line.
        delta: units in (positive) or out (negative).
        kind: ``receipt``, ``shipment``, ``transfer_out``, ``transfer_in``, ``adjustment``,
            ``return``.
        reference: ``(referenceType, referenceId)``.
        actor_id: who moved it.
        reason: free text for adjustments.
        keep_reserved: refuse to leave less on hand than reservations hold (a shipment that
            consumes its own reservations passes False after releasing them).

    Raises:
        ToolError: ``invalid_state`` when on-hand would go negative or below reserved.
    """
    after = int(record["onHand"]) + delta
    held = reserved(state, record["productId"], record["warehouseId"]) if keep_reserved else 0
    if after < max(0, held):
        raise silo.tool_error(
            "invalid_state",
            f"{record['productId']} at {record['warehouseId']}: {record['onHand']} on hand, "
            f"{held} reserved; moving {delta} would leave {after}"
            + (f", below the {held} reserved." if after >= 0 else ", below zero."),
            {"onHand": record["onHand"], "reserved": held, "change": delta},
        )
    record["onHand"] = after
    movement_id = w.records.next_id(state, "MOV", width=4)
    movement = {
        "id": movement_id,
        "type": kind,
        "productId": record["productId"],
        "warehouseId": record["warehouseId"],
        "quantity": delta,
        "referenceType": reference[0],
        "referenceId": reference[1],
        "reason": reason,
        "at": w.clock.now(state),
        "actorId": actor_id,
    }
    state["stockMovements"][movement_id] = movement
    return movement
