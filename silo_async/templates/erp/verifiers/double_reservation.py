"""VER-004: the line reserved twice holds only what it needs; SO-5006 is fully reserved."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.sales import unshipped_quantity
from ..domain.stock import line_held
from ..state import State

ORDER = "SO-5006"


def _lines(state: State) -> dict[tuple[str, int], tuple[int, int]]:
    """(order, line) -> (held, still to ship) for every confirmed order line."""
    return {
        (o["id"], ln["lineNo"]): (
            line_held(state, o["id"], ln["lineNo"]),
            unshipped_quantity(state, o, ln),
        )
        for o in w.tools.sorted_by_id(state["salesOrders"])
        if o["status"] == "confirmed"
        for ln in o["lines"]
    }


def _originals(state: State, doubled: list[tuple[str, int]]) -> list[str]:
    """The first active reservation of each line reserved twice: the one to keep."""
    firsts = []
    for order_id, line_no in doubled:
        same = [
            r
            for r in state["reservations"].values()
            if (r["salesOrderId"], r["lineNo"]) == (order_id, line_no) and r["status"] == "active"
        ]
        firsts.append(min(same, key=lambda r: (r["createdAt"], r["id"]))["id"])
    return firsts


@silo.verifier(id="VER-004", task_id="TASK-004")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Release the duplicate, reserve the starved order, leave stock and other orders alone."""
    before, after = _lines(initial), _lines(final)
    doubled = [k for k, (held, need) in before.items() if held > need]
    mine = [k for k in before if k[0] == ORDER]
    others = [k for k in before if k not in doubled and k[0] != ORDER]
    kept = _originals(initial, doubled)
    counts_same = all(
        final["stock"][k]["onHand"] == r["onHand"] for k, r in initial["stock"].items()
    )
    return [
        w.grade.written_by(final, initial, "USR-013"),
        silo.check(
            f"every line of {ORDER} is fully reserved",
            all(after[k][0] == after[k][1] for k in mine),
            ", ".join(f"line {k[1]}: {after[k][0]} of {after[k][1]}" for k in mine),
        ),
        silo.check(
            "the line reserved twice now holds exactly what it still needs",
            bool(doubled) and all(after[k][0] == after[k][1] for k in doubled),
            ", ".join(f"{k[0]} line {k[1]}: {after[k][0]}" for k in doubled),
        ),
        silo.check(
            "the duplicate is released, the line's first reservation kept",
            bool(kept) and all(final["reservations"][r]["status"] == "active" for r in kept),
            ", ".join(kept),
        ),
        silo.check("no stock count was changed", counts_same),
        silo.check(
            "no other order's reservations changed",
            all(after[k][0] == before[k][0] for k in others),
        ),
        silo.optional(
            "nothing was shipped or cancelled",
            not w.grade.new_ids(final, initial, "shipments")
            and not w.grade.changed_ids(final, initial, "salesOrders"),
        ),
    ]
