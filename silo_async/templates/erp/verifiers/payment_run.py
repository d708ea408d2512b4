"""VER-015: the 15 May payment run: one approved payment per payable vendor, nothing more."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.payables import open_to_pay, paid
from ..state import State, is_authorised

DUE_BY = "2026-05-22"
PAY_ON = "2026-05-15"


def _due(state: State) -> dict[str, dict[str, float]]:
    """Vendor -> {invoice: left to pay} for approved invoices due by DUE_BY."""
    out: dict[str, dict[str, float]] = {}
    for invoice in w.tools.sorted_by_id(state["vendorInvoices"]):
        left = open_to_pay(state, invoice)
        if invoice["status"] == "approved" and invoice["dueDate"] <= DUE_BY and left > 0:
            out.setdefault(invoice["vendorId"], {})[invoice["id"]] = left
    return out


@silo.verifier(id="VER-015", task_id="TASK-015")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Vendors whose bank account is not verified cannot be paid and must be named."""
    due = _due(initial)
    payable = {
        v: d
        for v, d in due.items()
        if initial["vendors"][v]["status"] == "active"
        and initial["vendors"][v]["bankStatus"] == "verified"
    }
    skipped = [initial["vendors"][v] for v in due if v not in payable]
    new = [
        p for p in w.grade.new_records(final, initial, "payments") if p["direction"] == "outbound"
    ]
    per = {v: [p for p in new if p["vendorId"] == v] for v in payable}
    answer = ctx.agent_output
    return [
        silo.check(
            f"one approved payment per payable vendor, dated {PAY_ON}",
            bool(payable)
            and all(
                len(ps) == 1 and ps[0]["status"] == "approved" and ps[0]["paymentDate"] == PAY_ON
                for ps in per.values()
            ),
            ", ".join(f"{v}: {len(ps)}" for v, ps in per.items()),
        ),
        silo.check(
            "each pays exactly what is left on every invoice due",
            all(
                len(ps) == 1
                and {a["invoiceId"]: a["amount"] for a in ps[0]["allocations"]} == payable[v]
                for v, ps in per.items()
            ),
        ),
        silo.check(
            "approved within limit by someone other than the preparer",
            all(
                p["approvedBy"] not in (None, p["createdBy"])
                and is_authorised(final, final["users"][p["approvedBy"]], "payment", p["amount"])
                for p in new
            ),
        ),
        silo.check(
            "nothing was executed or paid yet",
            all(p["status"] != "completed" for p in new)
            and all(paid(final, i) == paid(initial, i) for i in initial["vendorInvoices"]),
        ),
        silo.check(
            "the answer names the vendor left out",
            bool(skipped)
            and all(
                w.grade.mentions_id(answer, v["id"])
                or w.grade.mentions(answer, v["name"].split()[0])
                for v in skipped
            ),
            ", ".join(v["id"] for v in skipped),
        ),
        silo.optional(
            "no payment to any other vendor", {p["vendorId"] for p in new} <= set(payable)
        ),
    ]
