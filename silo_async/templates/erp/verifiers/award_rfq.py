"""VER-007: RFQ-001 awarded to the cheapest orderable quotation, ordered and submitted."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.purchasing import is_valid, pending_approval, po_net
from ..state import Record, State, is_authorised, lines_net
from .common import warehouse_in

RFQ = "RFQ-001"


def _best(state: State) -> Record:
    quotes = [q for q in w.tools.sorted_by_id(state["quotations"]) if q["rfqId"] == RFQ]
    quotes.sort(key=lambda q: lines_net(q["lines"]))
    best: Record = next(
        q
        for q in quotes
        if is_valid(state, q) and state["vendors"][q["vendorId"]]["status"] == "active"
    )
    return best


def _same_lines(po: Record, quote: Record) -> bool:
    pick = ("productId", "quantity", "unitPrice")
    return [[ln[k] for k in pick] for ln in po["lines"]] == [
        [ln[k] for k in pick] for ln in quote["lines"]
    ]


@silo.verifier(id="VER-007", task_id="TASK-007")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Accepted quotation, order to Utrecht from it on the requisition's budget, submitted."""
    best = _best(initial)
    rfq = final["rfqs"][RFQ]
    requisition = initial["requisitions"][initial["rfqs"][RFQ]["requisitionId"]]
    orders = [
        p
        for p in w.grade.new_records(final, initial, "purchaseOrders")
        if p["quotationId"] == best["id"]
    ]
    po = orders[0] if orders else None
    pending = pending_approval(final, po["id"]) if po else None
    approver = final["users"].get(pending["assigneeId"]) if pending else None
    return [
        w.grade.written_by(final, initial, "USR-007"),
        silo.check(
            f"{RFQ} is awarded to {best['id']}, the cheapest quotation that can be ordered",
            rfq["status"] == "awarded"
            and rfq["awardedQuotationId"] == best["id"]
            and final["quotations"][best["id"]]["status"] == "accepted",
            str(rfq["awardedQuotationId"]),
        ),
        silo.check(
            "a purchase order to Utrecht carries the quotation's vendor, lines and prices",
            po is not None
            and po["vendorId"] == best["vendorId"]
            and _same_lines(po, best)
            and po["warehouseId"] == warehouse_in(initial, "Utrecht")["id"],
        ),
        silo.check(
            "the order is on the requisition and its budget, and the requisition is ordered",
            po is not None
            and po["requisitionId"] == requisition["id"]
            and po["budgetId"] == requisition["budgetId"]
            and final["requisitions"][requisition["id"]]["status"] == "ordered",
        ),
        silo.check(
            "the order is submitted to an approver whose limit covers it",
            po is not None
            and po["status"] == "pending_approval"
            and approver is not None
            and is_authorised(final, approver, "purchase_order", po_net(po)),
        ),
        silo.optional(
            "only one order was raised", len(w.grade.new_ids(final, initial, "purchaseOrders")) == 1
        ),
    ]
