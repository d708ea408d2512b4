"""VER-001: the duplicate vendor record is merged into the original; its documents moved."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..state import Record, State
from .common import unchanged_except

_DOCUMENTS = ("purchaseOrders", "vendorInvoices", "payments", "quotations")


def _pair(initial: State) -> tuple[Record, list[Record]]:
    by_vat: dict[str, list[Record]] = {}
    for vendor in w.tools.sorted_by_id(initial["vendors"]):
        if vendor["status"] != "merged":
            by_vat.setdefault(vendor["vatNumber"], []).append(vendor)
    group = next(g for g in by_vat.values() if len(g) > 1)
    group.sort(key=lambda v: v["createdAt"])
    return group[0], group[1:]


@silo.verifier(id="VER-001", task_id="TASK-001")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Duplicate merged into the oldest record; every document of the duplicate moved."""
    original, copies = _pair(initial)
    copy_ids = {c["id"] for c in copies}
    moved = [(c, i) for c in _DOCUMENTS for i, r in initial[c].items() if r["vendorId"] in copy_ids]
    survivor = final["vendors"][original["id"]]
    still = [i for c in _DOCUMENTS for i, r in final[c].items() if r["vendorId"] in copy_ids]
    touched = {i for _, i in moved}
    return [
        silo.check(
            "the duplicate is merged into the original record",
            all(
                final["vendors"][c]["status"] == "merged"
                and final["vendors"][c]["mergedIntoId"] == original["id"]
                for c in copy_ids
            ),
            ", ".join(sorted(copy_ids)),
        ),
        silo.check(
            "every document of the duplicate now belongs to the original",
            bool(moved) and all(final[c][i]["vendorId"] == original["id"] for c, i in moved),
            f"{len(moved)} documents",
        ),
        silo.check("nothing refers to the duplicate any more", not still, ", ".join(still)),
        silo.check(
            "the original record is still active with its own details",
            survivor["status"] == "active"
            and all(survivor[k] == original[k] for k in ("name", "vatNumber", "iban")),
        ),
        silo.optional(
            "no other vendor changed",
            not unchanged_except(final, initial, "vendors", copy_ids),
        ),
        silo.optional(
            "no other order or invoice changed",
            not unchanged_except(final, initial, "purchaseOrders", touched)
            and not unchanged_except(final, initial, "vendorInvoices", touched),
        ),
    ]
