"""VER-010: how many open deals are past their expected close date, and their total value."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.clock import today
from silo_async.world.grade import few_numbers, states_number, unchanged

from ..state import State, open_opportunities, past_due_opportunities, total_amount


@silo.verifier(id="VER-010", task_id="TASK-010")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Count and unweighted total of deals strictly past due (closing today is not late)."""
    late = past_due_opportunities(initial)
    count = len(late)
    total = total_amount(late)
    due_by_today = [
        o for o in open_opportunities(initial) if o["expectedCloseDate"] <= today(initial)
    ]
    lenient_total = total_amount(due_by_today)
    answer = ctx.agent_output
    return [
        silo.check(f"states the count {count}", states_number(answer, count, 0)),
        silo.check(f"states the total {total:,.0f}", states_number(answer, total, 0.5)),
        silo.check(
            f"does not count deals closing today (total {lenient_total:,.0f})",
            lenient_total == total or not states_number(answer, lenient_total, 0.5),
        ),
        silo.check(
            f"does not state the count including deals closing today ({len(due_by_today)})",
            len(due_by_today) == count or not states_number(answer, len(due_by_today), 0),
        ),
        silo.check("commits to an answer (1 to 5 numbers)", few_numbers(answer, 5)),
        silo.optional(
            "the seed has a deal closing exactly today (the boundary is tested)",
            lenient_total != total,
        ),
        silo.optional("the world is unchanged", unchanged(final, initial)),
    ]
