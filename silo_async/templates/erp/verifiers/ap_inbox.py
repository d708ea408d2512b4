"""VER-002: the AP inbox is worked: matching invoices approved, failing ones held, none paid."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.payables import invoice_total, match_exceptions
from ..state import State, is_authorised
from .common import unchanged_except


def _approved_properly(final: State, invoice_id: str) -> bool:
    invoice = final["vendorInvoices"][invoice_id]
    approver = final["users"].get(invoice["approvedBy"] or "")
    return (
        invoice["status"] == "approved"
        and approver is not None
        and is_authorised(final, approver, "vendor_invoice", invoice_total(final, invoice))
    )


def _reason_names(reason: str | None, kinds: set[str]) -> bool:
    text = (reason or "").lower()
    words = {"price": "price", "quantity": "quantit"}
    return all(words.get(k, k) in text for k in kinds)


@silo.verifier(id="VER-002", task_id="TASK-002")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Approve what matches (or needs no match), hold what fails with the reason, pay nothing."""
    inbox = [
        i for i in w.tools.sorted_by_id(initial["vendorInvoices"]) if i["status"] == "received"
    ]
    failing = {
        i["id"]: {e["type"] for e in match_exceptions(initial, i)}
        for i in inbox
        if i["purchaseOrderId"] is not None and match_exceptions(initial, i)
    }
    clean = [i["id"] for i in inbox if i["id"] not in failing]
    held = [final["vendorInvoices"][i] for i in failing]
    return [
        w.grade.written_by(final, initial, "USR-003"),
        silo.check(
            "every invoice that matches (or has no order) is approved by an authorised approver",
            bool(clean) and all(_approved_properly(final, i) for i in clean),
            ", ".join(clean),
        ),
        silo.check(
            "every invoice that fails the match is on hold",
            bool(failing) and all(h["status"] == "on_hold" for h in held),
            ", ".join(failing),
        ),
        silo.check(
            "each hold reason says what failed (price or quantity)",
            all(_reason_names(h["holdReason"], failing[h["id"]]) for h in held),
        ),
        silo.check("nothing was paid", not w.grade.new_ids(final, initial, "payments")),
        silo.check(
            "the match exceptions are recorded on the held invoices",
            all(h["matchExceptions"] for h in held),
        ),
        silo.check(
            "no invoice outside the inbox changed",
            not unchanged_except(final, initial, "vendorInvoices", [i["id"] for i in inbox]),
        ),
    ]
