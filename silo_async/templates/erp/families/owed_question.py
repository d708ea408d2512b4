"""owed-question: how much a customer owes on invoices overdue by some days — a figure, no change.

Outstanding is computed per invoice (its total with VAT less what receipts have paid of it), and
only issued invoices at least N days past due count (a written-off one is no longer owed). The
answer must commit to the figure.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.amounts import sum_money
from silo_async.world.grade import few_numbers
from silo_async.world.tools import sorted_by_id

from ..domain import sales as sal
from ..state import State
from ._common import money, name_of, users_who

__all__ = ["family"]

_FEW = 3


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A customer, a number of days, and what they owe beyond it."""
    days = rng.randint(1, 120)
    customer = rng.choice(sorted_by_id(world["customers"]))
    owed = sum_money(
        sal.customer_outstanding(world, i)
        for i in world["customerInvoices"].values()
        if i["customerId"] == customer["id"]
        and sal.is_overdue(world, i)
        and sal.days_overdue(world, i) >= days
    )
    asker = rng.choice(users_who(world, "sales"))
    return {
        "customer": customer["name"],
        "days": days,
        "asker": name_of(asker),
        "answer": money(owed),
    }


def instruction(p: Mapping[str, Any]) -> str:
    """A sales question before a customer call."""
    return (
        f"I'm {p['asker']}, about to call {p['customer']}. How much do they owe us, VAT "
        f"included, on invoices that are at least {p['days']} days overdue? Answer with the "
        "amount in euros; change nothing."
    )


def answer(p: Mapping[str, Any]) -> str:
    """The amount the answer must state."""
    return str(p["answer"])


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """A question changes nothing."""
    return []


def checks(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """The answer commits to an amount instead of listing every one it saw."""
    return [
        silo.check(
            f"commits to an answer (at most {_FEW} figures)", few_numbers(ctx.agent_output, _FEW)
        )
    ]


family = silo.TaskFamily(
    id="owed-question",
    title="Say what a customer owes past a number of days",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    answer=answer,
    checks=checks,
)
