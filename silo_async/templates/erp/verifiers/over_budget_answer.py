"""VER-005: names the over-budget cost centre and its overrun (transfers counted)."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.budgets import allocated, remaining
from ..state import State


@silo.verifier(id="VER-005", task_id="TASK-005")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The cost centre and the overrun, not the figure that forgets the budget transfer."""
    over = [b for b in w.tools.sorted_by_id(initial["budgets"]) if remaining(initial, b) < 0]
    budget = over[0]
    department = initial["departments"][budget["departmentId"]]
    overrun = -remaining(initial, budget)
    without_transfers = w.amounts.to_money(overrun + allocated(initial, budget) - budget["amount"])
    answer = ctx.agent_output
    return [
        silo.check(
            f"names {department['costCentre']} ({department['name']})",
            w.grade.mentions_id(answer, department["costCentre"])
            or w.grade.mentions(answer, department["name"]),
        ),
        silo.check(f"states the overrun {overrun:,.2f}", w.grade.states_number(answer, overrun)),
        silo.check("commits to a figure (1 to 3 numbers)", w.grade.few_numbers(answer, 3)),
        silo.optional(
            f"does not state {without_transfers:,.2f} (the overrun without the transfer)",
            not w.grade.states_number(answer, without_transfers),
        ),
        silo.optional(
            "nothing was written (every write is audited)",
            not w.grade.new_audit_entries(final, initial),
        ),
    ]
