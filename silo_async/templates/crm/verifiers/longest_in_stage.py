"""VER-011: the open deal longest in its current stage, and for how many days."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.grade import few_numbers, mentions, states_number, unchanged

from ..state import State, days_in_stage, open_opportunities


@silo.verifier(id="VER-011", task_id="TASK-011")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Names the deal (by name or id) and its days in stage."""
    ranked = sorted(
        open_opportunities(initial), key=lambda o: (-days_in_stage(initial, o), o["id"])
    )
    top = ranked[0]
    days = days_in_stage(initial, top)
    answer = ctx.agent_output
    others = [
        o["id"] for o in ranked[1:] if mentions(answer, o["id"]) or mentions(answer, o["name"])
    ]
    return [
        silo.check(
            f"names {top['name']} ({top['id']})",
            mentions(answer, top["name"]) or mentions(answer, top["id"]),
        ),
        silo.check(f"states {days} days", states_number(answer, days, 0)),
        silo.check(
            "names no other open deal (no enumerating)", not others, ", ".join(others) or "none"
        ),
        silo.check("commits to an answer (1 to 3 numbers)", few_numbers(answer, 3)),
        silo.optional(
            "a single deal is the longest",
            len(ranked) > 1 and days_in_stage(initial, ranked[1]) < days,
        ),
        silo.optional("the world is unchanged", unchanged(final, initial)),
    ]
