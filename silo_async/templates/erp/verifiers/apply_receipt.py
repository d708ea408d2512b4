"""VER-019: Summit Sports' unapplied receipt applied to the invoices its remittance names."""

from __future__ import annotations

import re

import silo_async as silo
from silo_async import world as w

from ..domain.sales import customer_outstanding, unallocated
from ..state import State


@silo.verifier(id="VER-019", task_id="TASK-019")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The named invoices settled from the receipt; the customer's other invoices untouched."""
    customer = w.grade.find_by(initial, "customers", "name", "Summit Sports Antwerpen BV")
    receipt = next(
        p
        for p in w.tools.sorted_by_id(initial["payments"])
        if p["customerId"] == customer["id"] and unallocated(p) > 0
    )
    named = re.findall(r"\bINV-\d+\b", receipt["reference"])
    after = final["payments"][receipt["id"]]
    applied = {a["invoiceId"]: a["amount"] for a in after["allocations"]}
    owed = {i: customer_outstanding(initial, initial["customerInvoices"][i]) for i in named}
    others = [
        i
        for i, inv in initial["customerInvoices"].items()
        if inv["customerId"] == customer["id"] and i not in named
    ]
    return [
        silo.check(
            "the receipt pays each named invoice in full",
            bool(named) and all(applied.get(i) == owed[i] for i in named),
            ", ".join(f"{i}: {applied.get(i)}" for i in named),
        ),
        silo.check(
            "the named invoices are settled",
            all(customer_outstanding(final, final["customerInvoices"][i]) == 0 for i in named),
        ),
        silo.check(
            "nothing of the receipt is left or applied elsewhere",
            unallocated(after) == 0 and set(applied) == set(named),
        ),
        silo.optional(
            "the customer's other invoices keep their balance",
            all(
                customer_outstanding(final, final["customerInvoices"][i])
                == customer_outstanding(initial, initial["customerInvoices"][i])
                for i in others
            ),
        ),
        silo.optional(
            "no new receipt was recorded", not w.grade.new_ids(final, initial, "payments")
        ),
    ]
