"""VER-020: Hollvik's over-billed invoice credited for the excess, matched and approved."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.payables import invoice_net, invoice_total, match_exceptions
from ..state import State, is_authorised
from .common import unchanged_except

REFERENCE, NOTE = "HD-88590", "HD-CN-0091"


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
        silo.check(
            f"credit note {NOTE} takes back exactly the excess units at the billed price",
            bool(excess)
            and credited == excess
            and priced
            and all(n["vendorReference"] == NOTE for n in notes),
            ", ".join(f"line {k}: {v:g}" for k, v in credited.items()) or "no credit note",
        ),
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
        silo.optional(
            "no other invoice changed",
            not unchanged_except(final, initial, "vendorInvoices", [invoice["id"]]),
        ),
    ]
