"""chase-overdue: a customer's long-overdue invoices get their next reminder; at the last, a hold.

Overdue is computed (issued, money still owed, past the due date), and "at least N days" is
the clerk's threshold. Each such invoice that may still be reminded (the policy caps reminders)
gets its next reminder; when any of them is more than M days overdue, the customer — if still
active — goes on credit hold: no new order can be confirmed or shipped until they pay.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..domain import sales as sal
from ..state import State
from ._common import as_actor, name_of, users_who

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A customer with invoices at least N days overdue, and a receivables user."""
    days = rng.randint(1, 90)
    last = world["policies"]["maxReminders"]
    choices = []
    for customer in sorted_by_id(world["customers"]):
        late = [
            i
            for i in sorted_by_id(world["customerInvoices"])
            if i["customerId"] == customer["id"]
            and sal.is_overdue(world, i)
            and sal.days_overdue(world, i) >= days
            and len(i["reminders"]) < last
        ]
        if late:
            choices.append((customer, late))
    if not choices:
        raise silo.NoInstance(f"no customer has an invoice {days} or more days overdue")
    customer, late = rng.choice(choices)
    actor = rng.choice(users_who(world, "receivables"))
    hold_after = rng.randint(max(days, 30), 100)
    too_late = any(sal.days_overdue(world, i) > hold_after for i in late)
    return {
        "customer": customer["name"],
        "customerId": customer["id"],
        "days": days,
        "actor": name_of(actor),
        "actorId": actor["id"],
        "invoices": [i["id"] for i in late],
        "holdAfter": hold_after,
        "hold": too_late and customer["status"] == "active",
    }


def instruction(p: Mapping[str, Any]) -> str:
    """The clerk's rule, in days."""
    return (
        f"I'm {p['actor']}. Chase {p['customer']}: send the next payment reminder on each of "
        f"their invoices that is at least {p['days']} days overdue. If any of those is more "
        f"than {p['holdAfter']} days overdue, also put the customer on credit hold (unless they "
        "already are). Do it as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """A reminder per invoice, then the hold when one is too late."""
    actor = p["actorId"]
    calls = [
        silo.Call("send_payment_reminder", {"invoiceId": i, "actorId": actor})
        for i in p["invoices"]
    ]
    if p["hold"]:
        reason = f"An invoice is more than {p['holdAfter']} days overdue."
        calls.append(
            silo.Call(
                "place_customer_on_hold",
                {"customerId": p["customerId"], "reason": reason, "actorId": actor},
            )
        )
    return calls


family = silo.TaskFamily(
    id="chase-overdue",
    title="Chase a customer's overdue invoices",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD", "customers.*.holdReason"),
)
