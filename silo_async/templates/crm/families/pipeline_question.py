"""pipeline-question: a manager asks one figure about a rep's pipeline; nothing may change.

Three questions, each a small computation over records the agent must find: the weighted value
of the rep's open deals expected to close by a date (amount times the stage's win probability,
past-due deals included), their unweighted value, or how many of them are past their expected
close date. The answer must state the figure and commit to it: an answer listing every figure
it saw is not an answer.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.grade import few_numbers
from silo_async.world.tools import sorted_by_id

from ..state import (
    State,
    can_own_deals,
    full_name,
    is_past_due,
    open_opportunities,
    total_amount,
    total_weighted,
)

__all__ = ["family"]

#: The most figures an answer may state (the figure asked, and a date or count around it).
_FEW = 3
_QUESTIONS = ("weighted", "total", "past_due")
#: How far ahead a question looks, in days from today.
_HORIZONS = (15, 30, 45, 60, 90)


def _money(value: float) -> str:
    return f"${value:,.0f}" if value == int(value) else f"${value:,.2f}"


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A rep with open deals, a question about them, and its answer."""
    reps = [
        u
        for u in sorted_by_id(world["users"])
        if u["active"] and can_own_deals(u) and open_opportunities(world, u["id"])
    ]
    managers = [u for u in sorted_by_id(world["users"]) if u["active"] and not can_own_deals(u)]
    if not reps:
        raise silo.NoInstance("no active rep has an open deal")
    rep = rng.choice(reps)
    asker = rng.choice(managers) if managers else None
    question = rng.choice(_QUESTIONS)
    deals = open_opportunities(world, rep["id"])
    # A date by which at least one of the rep's deals closes: a sum over nothing is no question.
    first = min(o["expectedCloseDate"] for o in deals)
    by = max(first, add_days(today(world), rng.choice(_HORIZONS)))
    if question == "past_due":
        answer = str(sum(1 for o in deals if is_past_due(world, o)))
    else:
        closing = [o for o in deals if o["expectedCloseDate"] <= by]
        value = total_weighted(world, closing) if question == "weighted" else total_amount(closing)
        answer = _money(value)
    return {
        "rep": full_name(rep),
        "asker": None if asker is None else full_name(asker),
        "question": question,
        "by": by,
        "answer": answer,
    }


def instruction(p: Mapping[str, Any]) -> str:
    """One question, with the date it is about when it has one."""
    who = f"I'm {p['asker']}. " if p["asker"] else ""
    ask = {
        "weighted": (
            f"what is the weighted value (amount times win probability) of {p['rep']}'s open "
            f"deals expected to close on or before {p['by']}? Past-due deals count."
        ),
        "total": (
            f"what is the total amount of {p['rep']}'s open deals expected to close on or "
            f"before {p['by']}? Past-due deals count."
        ),
        "past_due": (
            f"how many of {p['rep']}'s open deals are past their expected close date today?"
        ),
    }[p["question"]]
    return (
        f"{who}Quick question for the forecast call: {ask} Answer with the figure; change nothing."
    )


def answer(p: Mapping[str, Any]) -> str:
    """The figure the answer must state."""
    return str(p["answer"])


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """A question changes nothing: the gold world is the initial one."""
    return []


def checks(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """The answer commits to a figure instead of listing every one it saw."""
    return [
        silo.check(
            f"commits to an answer (at most {_FEW} figures)",
            few_numbers(ctx.agent_output, _FEW),
        )
    ]


family = silo.TaskFamily(
    id="pipeline-question",
    title="Answer a question about a rep's pipeline",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    answer=answer,
    checks=checks,
)
