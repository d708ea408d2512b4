"""VER-016: the Cinder & Flame delivery on PO-1007 booked with the refused stoves."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.purchasing import line_remaining
from ..domain.stock import find_stock
from ..state import Record, State

ORDER = "PO-1007"
NOTE = "CF-DN-55120"
STOVES, REFUSED, CASES = 150, 3, 40


def _line(po: Record, product_id: str) -> int:
    return int(next(ln["lineNo"] for ln in po["lines"] if ln["productId"] == product_id))


@silo.verifier(id="VER-016", task_id="TASK-016")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """One receipt: stoves 147 accepted + 3 refused, 40 cases; stock up by the accepted units."""
    po = initial["purchaseOrders"][ORDER]
    stove = w.grade.find_by(initial, "products", "name", "Ember canister stove")
    gas = w.grade.find_by(initial, "products", "name", "Ember gas canister 230 g (case of 24)")
    receipts = [
        g
        for g in w.grade.new_records(final, initial, "goodsReceipts")
        if g["purchaseOrderId"] == ORDER
    ]
    grn = receipts[0] if len(receipts) == 1 else None
    lines = {ln["lineNo"]: ln for ln in (grn or {"lines": []})["lines"]}
    stove_line, gas_line = lines.get(_line(po, stove["id"])), lines.get(_line(po, gas["id"]))

    def rise(product: Record) -> int:
        before = find_stock(initial, product["id"], po["warehouseId"])
        after = find_stock(final, product["id"], po["warehouseId"])
        return int(after["onHand"] - before["onHand"]) if before and after else 0

    return [
        silo.check(
            f"one goods receipt for {ORDER} with delivery note {NOTE}",
            grn is not None and grn["deliveryNote"] == NOTE,
            f"{len(receipts)} receipt(s)",
        ),
        silo.check(
            f"stoves: {STOVES - REFUSED} accepted and {REFUSED} refused",
            stove_line is not None
            and (stove_line["accepted"], stove_line["rejected"]) == (STOVES - REFUSED, REFUSED),
        ),
        silo.check(
            f"gas canisters: {CASES} cases accepted",
            gas_line is not None and gas_line["accepted"] == CASES and not gas_line["rejected"],
        ),
        silo.check(
            "stock at the warehouse rose by the accepted units",
            rise(stove) == STOVES - REFUSED and rise(gas) == CASES,
            f"stoves +{rise(stove)}, cases +{rise(gas)}",
        ),
        silo.optional(
            "the order stays open for what is still owed",
            final["purchaseOrders"][ORDER]["status"] == "sent"
            and [line_remaining(final, final["purchaseOrders"][ORDER], ln) for ln in po["lines"]]
            == [
                ln["quantity"] - (STOVES - REFUSED if ln["productId"] == stove["id"] else CASES)
                for ln in po["lines"]
            ],
        ),
        silo.optional(
            "no other stock line changed",
            len(w.grade.changed_ids(final, initial, "stock")) == 2,
        ),
    ]
