"""VER-020: Hollvik's over-billed invoice credited for the excess, matched and approved."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.payables import invoice_net, invoice_total, match_exceptions
from ..state import State, is_authorised
from .common import unchanged_except

REFERENCE, NOTE = "HD-88590", "HD-CN-0091"


def _matched_around_the_credit(final: State, initial: State, invoice_id: str) -> silo.Check:
    """The invoice was matched (which shows the excess), credited, then matched again."""
    steps = [
        e["action"]
        for e in w.grade.new_audit_entries(final, initial)
        if e["action"] == "record_vendor_credit_note"
        or (e["action"] == "run_three_way_match" and e["entityId"] == invoice_id)
    ]
    credits = [i for i, a in enumerate(steps) if a == "record_vendor_credit_note"]
    matches = [i for i, a in enumerate(steps) if a == "run_three_way_match"]
    return silo.check(
        "the invoice was matched, credited, then matched again",
        bool(credits and matches) and matches[0] < credits[0] and matches[-1] > credits[-1],
        " -> ".join(steps) or "neither",
    )


@silo.verifier(id="VER-020", task_id="TASK-020")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The credit note takes back exactly the units billed beyond those received."""
    invoice = w.grade.find_by(initial, "vendorInvoices", "vendorReference", REFERENCE)
    excess = {
        e["lineNo"]: e["actual"] - e["expected"]
        for e in match_exceptions(initial, invoice)
        if e["type"] == "quantity"
    }
    prices = {ln["lineNo"]: ln["unitPrice"] for ln in invoice["lines"]}
    notes = [
        n
        for n in w.grade.new_records(final, initial, "vendorCreditNotes")
        if n["vendorInvoiceId"] == invoice["id"]
    ]
    credited = {ln["lineNo"]: ln["quantity"] for n in notes for ln in n["lines"]}
    priced = all(ln["unitPrice"] == prices[ln["lineNo"]] for n in notes for ln in n["lines"])
    after = final["vendorInvoices"][invoice["id"]]
    approver = final["users"].get(after["approvedBy"] or "")
    expected_net = w.amounts.sum_money(
        w.amounts.multiply_money(ln["quantity"] - excess.get(ln["lineNo"], 0), ln["unitPrice"])
        for ln in invoice["lines"]
    )
    return [
        w.grade.written_by(final, initial, "USR-003", {"approve_vendor_invoice"}),
        w.grade.written_by(
            final, initial, "USR-004", {"record_vendor_credit_note", "run_three_way_match"}
        ),
        silo.check(
            f"credit note {NOTE} takes back exactly the excess units at the billed price",
            bool(excess)
            and credited == excess
            and priced
            and all(n["vendorReference"] == NOTE for n in notes),
            ", ".join(f"line {k}: {v:g}" for k, v in credited.items()) or "no credit note",
        ),
        _matched_around_the_credit(final, initial, invoice["id"]),
        silo.check(
            "the invoice now passes the three-way match", not match_exceptions(final, after)
        ),
        silo.check(
            "the invoice is approved by someone whose limit covers it",
            after["status"] == "approved"
            and approver is not None
            and is_authorised(final, approver, "vendor_invoice", invoice_total(final, after)),
        ),
        silo.optional(
            f"its net is what was received ({expected_net:,.2f})",
            invoice_net(final, after) == expected_net,
        ),
        silo.check(
            "no other invoice changed",
            not unchanged_except(final, initial, "vendorInvoices", [invoice["id"]]),
        ),
    ]
