"""VER-013: Utrecht's low lines restocked by transfer from Rotterdam or one requisition."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.purchasing import pending_approval, requisition_net
from ..domain.stock import available, find_stock, is_below_reorder
from ..state import State, authorised_approvers, is_authorised
from .common import user_named, warehouse_in


def _plan(state: State) -> tuple[set[tuple[str, int]], dict[str, int]]:
    utrecht, rotterdam = (
        warehouse_in(state, "Utrecht")["id"],
        warehouse_in(state, "Rotterdam")["id"],
    )
    transfers, requisition = set(), {}
    for line in w.tools.sorted_by_id(state["stock"]):
        if line["warehouseId"] != utrecht or not is_below_reorder(state, line):
            continue
        source = find_stock(state, line["productId"], rotterdam)
        quantity = line["reorderQuantity"]
        if source is not None and available(state, source) - quantity >= source["reorderPoint"]:
            transfers.add((line["productId"], quantity))
        else:
            requisition[line["productId"]] = quantity
    return transfers, requisition


def _lowest(state: State, amount: float, requester: str) -> str | None:
    """The authorised approver with the lowest limit (the requester aside)."""
    found = authorised_approvers(state, "requisition", amount, [requester])
    return str(found[0]["id"]) if found else None


@silo.verifier(id="VER-013", task_id="TASK-013")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Transfers and the requisition exactly as the rule gives them (boundary: at = enough)."""
    transfers, wanted = _plan(initial)
    utrecht, rotterdam = (
        warehouse_in(initial, "Utrecht")["id"],
        warehouse_in(initial, "Rotterdam")["id"],
    )
    moved = {
        (t["productId"], t["quantity"])
        for t in w.grade.new_records(final, initial, "transfers")
        if t["fromWarehouseId"] == rotterdam and t["toWarehouseId"] == utrecht
    }
    routes_ok = all(
        t["fromWarehouseId"] == rotterdam and t["toWarehouseId"] == utrecht
        for t in w.grade.new_records(final, initial, "transfers")
    )
    new = w.grade.new_records(final, initial, "requisitions")
    req = new[0] if len(new) == 1 else None
    lieke = user_named(initial, "Lieke Janssens")
    operations = next(
        d for d in w.tools.sorted_by_id(initial["departments"]) if d["name"] == "Operations"
    )
    budget = next(
        b for b in w.tools.sorted_by_id(initial["budgets"]) if b["departmentId"] == operations["id"]
    )
    pending = pending_approval(final, req["id"]) if req else None
    approver = final["users"].get(pending["assigneeId"]) if pending else None
    return [
        w.grade.written_by(final, initial, "USR-009"),
        silo.check(
            "the products Rotterdam can spare were transferred in their reorder quantity",
            bool(transfers) and moved == transfers and routes_ok,
            ", ".join(f"{p} x{q}" for p, q in sorted(moved)) or "no transfer",
        ),
        silo.check(
            "one requisition for the others, in their reorder quantities",
            req is not None and {ln["productId"]: ln["quantity"] for ln in req["lines"]} == wanted,
            ", ".join(f"{p} x{q}" for p, q in sorted(wanted.items())),
        ),
        silo.check(
            "raised by Lieke Janssens for Operations against its budget",
            req is not None
            and req["requesterId"] == lieke["id"]
            and req["departmentId"] == operations["id"]
            and req["budgetId"] == budget["id"],
        ),
        silo.check(
            "submitted to the authorised approver with the lowest limit",
            req is not None
            and req["status"] == "pending_approval"
            and approver is not None
            and approver["id"] != lieke["id"]
            and is_authorised(final, approver, "requisition", requisition_net(req))
            and approver["id"] == _lowest(final, requisition_net(req), lieke["id"]),
            str(approver and approver["id"]),
        ),
        silo.optional(
            "no stock was adjusted",
            not [
                m
                for m in w.grade.new_records(final, initial, "stockMovements")
                if m["type"] == "adjustment"
            ],
        ),
    ]
