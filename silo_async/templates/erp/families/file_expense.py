"""file-expense: an employee's claim is submitted by their manager, then decided by the rules.

The agent submits the claim for the employee as their manager, then decides it: approved
when the rules allow — a receipt for anything above the policy's threshold, within the
approver's expense limit, within the budget's remaining amount, and never one's own claim —
rejected (with the reason) when the receipt is missing, and otherwise left for someone with
the authority.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

from ..domain.budgets import remaining
from ..state import State, approval_limit
from ._common import as_actor, money, name_of

__all__ = ["family"]

_CLAIMS = (
    ("travel", "Train tickets to a supplier visit"),
    ("travel", "Taxi from the airport after a trade fair"),
    ("lodging", "Hotel night at the outdoor trade fair"),
    ("meals", "Lunch with a customer's buyer"),
    ("meals", "Team dinner after the stock count"),
    ("materials", "Safety gloves for the loading dock"),
    ("postage", "Courier for urgent samples"),
    ("events", "Stand fee at a regional camping fair"),
)


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """An employee, their claim, and their manager, who submits it for them and decides it."""
    users = world["users"]
    employees = [
        u
        for u in sorted_by_id(users)
        if u["active"]
        and u["managerId"] is not None
        and users[u["managerId"]]["active"]
        and approval_limit(world, users[u["managerId"]], "expense")
    ]
    if not employees:
        raise silo.NoInstance("nobody's manager may approve expenses")
    employee = rng.choice(employees)
    approver = users[employee["managerId"]]
    category, description = rng.choice(_CLAIMS)
    amount = round(rng.uniform(8, 2_600), 2)
    has_receipt = rng.random() < 0.7
    budget = next(
        b
        for b in sorted_by_id(world["budgets"])
        if b["departmentId"] == employee["departmentId"] and b["status"] == "open"
    )
    threshold = world["policies"]["receiptRequiredAbove"]
    if amount > threshold and not has_receipt:
        decision = "reject"
    elif amount <= (approval_limit(world, approver, "expense") or 0) and amount <= remaining(
        world, budget
    ):
        decision = "approve"
    else:
        decision = "leave"
    return {
        "employee": name_of(employee),
        "employeeId": employee["id"],
        "category": category,
        "description": description,
        "amount": amount,
        "receipt": has_receipt,
        "incurred": add_days(today(world), -rng.randint(1, 20)),
        "actor": name_of(approver),
        "actorId": approver["id"],
        "decision": decision,
        # The id the claim gets: the world numbers them (the decision names it).
        "expenseId": f"EXP-{world['sequences']['EXP'] + 1:04d}",
    }


def instruction(p: Mapping[str, Any]) -> str:
    """The claim as the employee hands it in, and who decides."""
    receipt = "with a receipt" if p["receipt"] else "without a receipt"
    return (
        f"I'm {p['actor']}. {p['employee']} handed in a {p['category']} expense: "
        f'"{p["description"]}", {money(p["amount"])}, incurred on {p["incurred"]}, {receipt}. '
        f"Submit the claim for {p['employee']} (acting as me), then decide it as me: approve "
        "it if the company's rules let me, reject it if it lacks a receipt it needs (say why), "
        "and otherwise leave it submitted for someone who may approve it."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """The submission, then the decision the rules give."""
    actor = p["actorId"]
    calls = [
        silo.Call(
            "submit_expense",
            {
                "employeeId": p["employeeId"],
                "category": p["category"],
                "description": p["description"],
                "amount": p["amount"],
                "incurredOn": p["incurred"],
                "hasReceipt": p["receipt"],
                "actorId": actor,
            },
        )
    ]
    if p["decision"] == "approve":
        calls.append(silo.Call("approve_expense", {"expenseId": p["expenseId"], "actorId": actor}))
    elif p["decision"] == "reject":
        reason = "A receipt is required above the policy threshold."
        calls.append(
            silo.Call(
                "reject_expense",
                {"expenseId": p["expenseId"], "reason": reason, "actorId": actor},
            )
        )
    return calls


family = silo.TaskFamily(
    id="file-expense",
    title="Submit and decide an expense claim",
    difficulty="hard",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    # The rejection's wording is the agent's; the description is the employee's, quoted.
    ignore=("auditLog", "sequences.AUD", "expenses.*.rejectionReason", "approvals.*.comment"),
)
