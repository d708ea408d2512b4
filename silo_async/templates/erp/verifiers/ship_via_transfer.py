"""VER-008: SO-5007 shipped complete from Utrecht after moving exactly the shortfall in."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.sales import unshipped_quantity
from ..domain.stock import available, find_stock, held, line_held
from ..state import State

ORDER = "SO-5007"


def _shortfalls(state: State) -> dict[str, tuple[int, str]]:
    """Product -> (units missing in the order's warehouse, warehouse with most available)."""
    order = state["salesOrders"][ORDER]
    out = {}
    for line in order["lines"]:
        need = unshipped_quantity(state, order, line) - line_held(state, ORDER, line["lineNo"])
        here = find_stock(state, line["productId"], order["warehouseId"])
        short = need - (available(state, here) if here else 0)
        if short > 0:
            others = [
                s
                for s in w.tools.sorted_by_id(state["stock"])
                if s["productId"] == line["productId"] and s["warehouseId"] != order["warehouseId"]
            ]
            best = max(others, key=lambda s: available(state, s))
            out[line["productId"]] = (short, best["warehouseId"])
    return out


@silo.verifier(id="VER-008", task_id="TASK-008")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The exact shortfall moved from the best warehouse and received; the order fully shipped."""
    order = initial["salesOrders"][ORDER]
    missing = _shortfalls(initial)
    moved = {
        (t["productId"], t["fromWarehouseId"], t["toWarehouseId"], t["quantity"]): t
        for t in w.grade.new_records(final, initial, "transfers")
    }
    wanted = {(p, src, order["warehouseId"], q) for p, (q, src) in missing.items()}
    left = [unshipped_quantity(final, final["salesOrders"][ORDER], ln) for ln in order["lines"]]
    others = [
        r
        for r in w.tools.sorted_by_id(initial["reservations"])
        if r["salesOrderId"] != ORDER and held(r) > 0
    ]
    adjustments = [
        m
        for m in w.grade.new_records(final, initial, "stockMovements")
        if m["type"] == "adjustment"
    ]
    return [
        w.grade.written_by(final, initial, "USR-009"),
        silo.check(
            "exactly the missing quantity was moved from the warehouse with most available",
            bool(wanted) and set(moved) == wanted,
            "; ".join(f"{k[3]} of {k[0]} from {k[1]}" for k in moved) or "no transfer",
        ),
        silo.check(
            "the transfer was booked into the order's warehouse",
            bool(moved) and all(t["status"] == "received" for t in moved.values()),
        ),
        silo.check(f"all of {ORDER} has shipped", not any(left), f"still to ship: {left}"),
        silo.check(
            "stock reserved for other orders is untouched",
            all(held(final["reservations"][r["id"]]) == held(r) for r in others),
        ),
        silo.optional("no stock was adjusted", not adjustments),
        silo.optional("one shipment", len(w.grade.new_ids(final, initial, "shipments")) == 1),
    ]
