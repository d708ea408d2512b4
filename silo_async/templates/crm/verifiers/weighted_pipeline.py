"""VER-008: the probability-weighted value of open pipeline, derived from the initial world."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.grade import few_numbers, final_number, states_number, unchanged

from ..state import State, open_opportunities, total_amount, total_weighted


@silo.verifier(id="VER-008", task_id="TASK-008")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """States the weighted total (not the unweighted one) without enumerating figures."""
    opps = open_opportunities(initial)
    expected = total_weighted(initial, opps)
    unweighted = total_amount(opps)
    answer = ctx.agent_output
    last = final_number(answer)
    return [
        silo.check(
            f"states the weighted total {expected:,.0f}", states_number(answer, expected, 0.5)
        ),
        silo.check(
            f"does not state the unweighted total {unweighted:,.0f}",
            not states_number(answer, unweighted, 0.5),
        ),
        silo.check("commits to a figure (1 to 3 numbers)", few_numbers(answer, 3)),
        silo.optional(
            "the last figure is the weighted total",
            last is not None and abs(last - expected) <= 0.5,
            str(last),
        ),
        silo.optional("the world is unchanged", unchanged(final, initial)),
    ]
