"""VER-014: Hollvik's bank details replaced; the bounced payment re-issued and paid."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.payables import outstanding
from ..state import State, is_authorised

IBAN = "SE7280000810340009785412"


@silo.verifier(id="VER-014", task_id="TASK-014")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """New verified IBAN; invoices of the bounced payment paid in full by a new payment."""
    vendor = w.grade.find_by(initial, "vendors", "name", "Hollvik Dun AB")
    after = final["vendors"][vendor["id"]]
    failed = [
        p
        for p in w.tools.sorted_by_id(initial["payments"])
        if p["vendorId"] == vendor["id"] and p["status"] == "failed"
    ]
    invoices = [a["invoiceId"] for p in failed for a in p["allocations"]]
    new = [
        p for p in w.grade.new_records(final, initial, "payments") if p["vendorId"] == vendor["id"]
    ]
    done = [p for p in new if p["status"] == "completed"]
    return [
        silo.check(
            "the vendor's bank account is the confirmed IBAN, verified",
            after["iban"] == IBAN and after["bankStatus"] == "verified",
            f"{after['iban']} ({after['bankStatus']})",
        ),
        silo.check(
            "the bounced invoice is paid in full",
            bool(invoices)
            and all(outstanding(final, final["vendorInvoices"][i]) == 0 for i in invoices),
            ", ".join(invoices),
        ),
        silo.check(
            "a new payment to the new account, approved within limit by someone but its creator",
            bool(done)
            and all(
                p["bankAccount"] == IBAN
                and p["approvedBy"] not in (None, p["createdBy"])
                and is_authorised(final, final["users"][p["approvedBy"]], "payment", p["amount"])
                for p in done
            ),
        ),
        silo.check(
            "the bounced payment is kept as history",
            all(final["payments"][p["id"]]["status"] == "failed" for p in failed),
        ),
        silo.optional("exactly one new payment", len(new) == 1),
    ]
