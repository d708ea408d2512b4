"""VER-003: the approval given above the approver's limit is revoked and properly redone."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.purchasing import po_net
from ..state import Record, State, is_authorised
from .common import unchanged_except


def _over_limit(state: State) -> Record:
    found: Record = next(
        a
        for a in w.tools.sorted_by_id(state["approvals"])
        if a["documentType"] == "purchase_order"
        and a["status"] == "approved"
        and not is_authorised(state, state["users"][a["decidedBy"]], "purchase_order", a["amount"])
    )
    return found


@silo.verifier(id="VER-003", task_id="TASK-003")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Revoked, re-approved within a limit that covers the order, and sent."""
    bad = _over_limit(initial)
    po_id = bad["documentId"]
    po = final["purchaseOrders"][po_id]
    redone = [
        a
        for a in w.grade.new_records(final, initial, "approvals")
        if a["documentId"] == po_id and a["status"] == "approved"
    ]
    proper = [
        a
        for a in redone
        if is_authorised(final, final["users"][a["decidedBy"]], "purchase_order", po_net(po))
    ]
    new_ids = set(w.grade.new_ids(final, initial, "approvals"))
    return [
        w.grade.written_by(final, initial, ("USR-006", "USR-007")),
        silo.check(
            f"the over-limit approval {bad['id']} is revoked",
            final["approvals"][bad["id"]]["status"] == "revoked",
            final["approvals"][bad["id"]]["status"],
        ),
        silo.check(
            f"{po_id} has a new approval by someone whose limit covers it",
            bool(proper),
            ", ".join(a["decidedBy"] for a in redone) or "no new approval",
        ),
        silo.check(f"{po_id} is sent to the vendor", po["status"] == "sent", po["status"]),
        silo.optional(
            "the order's lines are unchanged",
            po["lines"] == initial["purchaseOrders"][po_id]["lines"],
        ),
        silo.optional(
            "no other order changed",
            not unchanged_except(final, initial, "purchaseOrders", [po_id]),
        ),
        silo.optional(
            "no other approval changed",
            not unchanged_except(final, initial, "approvals", {bad["id"], *new_ids}),
        ),
    ]
