"""VER-021: the Utrecht count of Lumora 900 headlamps posted as a count variance."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..state import State
from .common import stock_at, warehouse_in

COUNTED = 41


@silo.verifier(id="VER-021", task_id="TASK-021")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """On hand is what was counted; the difference is one adjustment movement."""
    product = w.grade.find_by(initial, "products", "name", "Lumora 900 headlamp")
    utrecht = warehouse_in(initial, "Utrecht")["id"]
    before = stock_at(initial, product["id"], utrecht)
    after = stock_at(final, product["id"], utrecht)
    moves = [
        m
        for m in w.grade.new_records(final, initial, "stockMovements")
        if m["productId"] == product["id"] and m["warehouseId"] == utrecht
    ]
    variance = COUNTED - before["onHand"]
    return [
        w.grade.written_by(final, initial, "USR-009"),
        silo.check(f"on hand is {COUNTED}", after["onHand"] == COUNTED, str(after["onHand"])),
        silo.check(
            f"the variance {variance} is posted as one adjustment",
            len(moves) == 1
            and moves[0]["type"] == "adjustment"
            and moves[0]["quantity"] == variance,
        ),
        silo.optional(
            "the line's last count date is today", after["lastCountedOn"] == w.clock.today(final)
        ),
        silo.optional(
            "no other stock line changed",
            w.grade.changed_ids(final, initial, "stock") == [after["id"]],
        ),
    ]
