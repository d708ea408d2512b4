"""VER-012: the total overdue receivable today and the customer owing the most of it."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.sales import customer_outstanding, is_overdue
from ..state import State


@silo.verifier(id="VER-012", task_id="TASK-012")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Outstanding (not invoice totals) of invoices past due (not due today), derived."""
    per: dict[str, float] = {}
    everything = 0.0
    for invoice in w.tools.sorted_by_id(initial["customerInvoices"]):
        owed = customer_outstanding(initial, invoice)
        everything += owed
        if is_overdue(initial, invoice):
            per[invoice["customerId"]] = w.amounts.sum_money(
                [per.get(invoice["customerId"], 0), owed]
            )
    total = w.amounts.sum_money(per.values())
    top = initial["customers"][max(per, key=lambda c: per[c])]
    answer = ctx.agent_output
    return [
        silo.check(f"states the overdue total {total:,.2f}", w.grade.states_number(answer, total)),
        silo.check(
            f"names {top['name']} as owing the most overdue",
            w.grade.mentions(answer, top["name"]) or w.grade.mentions_id(answer, top["id"]),
        ),
        silo.check("commits to figures (1 to 4 numbers)", w.grade.few_numbers(answer, 4)),
        silo.optional(
            "does not give all outstanding (overdue or not) as the answer",
            not w.grade.states_number(answer, w.amounts.to_money(everything)),
        ),
        silo.optional(
            "nothing was written (every write is audited)",
            not w.grade.new_audit_entries(final, initial),
        ),
    ]
