"""VER-009: the active account executive furthest behind 2026 quota, and by how much."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.grade import few_numbers, mentions, states_number, unchanged

from ..state import State, quota_attainment, won_amount

YEAR = 2026


def _lowest(state: State, *, active_only: bool, this_year: bool) -> tuple[str, float]:
    rows: list[tuple[float, str]] = []
    for user in state["users"].values():
        if user["role"] != "account_executive" or user["annualQuota"] <= 0:
            continue
        if active_only and not user["active"]:
            continue
        if this_year:
            percent = quota_attainment(state, user["id"], YEAR) or 0.0
        else:
            percent = won_amount(state, user["id"]) / user["annualQuota"] * 100
        rows.append((percent, user["id"]))
    percent, user_id = min(rows)
    return user_id, percent


@silo.verifier(id="VER-009", task_id="TASK-009")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Right rep, right percentage; the departed rep is not the answer; other years excluded."""
    user_id, percent = _lowest(initial, active_only=True, this_year=True)
    rep = initial["users"][user_id]
    departed = [u for u in initial["users"].values() if not u["active"]]
    all_time_id, _ = _lowest(initial, active_only=True, this_year=False)
    anyone_id, _ = _lowest(initial, active_only=False, this_year=True)
    rivals = [
        quota_attainment(initial, u["id"], YEAR)
        for u in initial["users"].values()
        if u["role"] == "account_executive" and u["active"] and u["id"] != user_id
    ]
    rival_figures = sorted({p for p in rivals if p is not None and abs(p - percent) > 0.1})
    answer = ctx.agent_output
    return [
        silo.check(
            f"names {rep['firstName']} {rep['lastName']}", mentions(answer, rep["lastName"])
        ),
        silo.check(f"states {percent}%", states_number(answer, percent, 0.1)),
        silo.check(
            "does not name anyone who has left the company",
            not any(mentions(answer, u["lastName"]) for u in departed),
        ),
        silo.check(
            "does not state another active rep's attainment (no enumerating)",
            not any(states_number(answer, p, 0.05) for p in rival_figures),
            ", ".join(f"{p}%" for p in rival_figures),
        ),
        silo.check("commits to an answer (1 to 4 numbers)", few_numbers(answer, 4)),
        silo.optional(
            "the seed separates this year from all years",
            all_time_id != user_id,
            f"all-time lowest: {all_time_id}",
        ),
        silo.optional(
            "the seed separates active reps from everyone",
            anyone_id != user_id,
            f"lowest including departed: {anyone_id}",
        ),
        silo.optional("the world is unchanged", unchanged(final, initial)),
    ]
