"""Expense claims: submitted by employees, approved within limits, reimbursed by treasury.

Rules: nobody approves their own claim; the amount must be within the approver's expense limit;
a claim above ``policies.receiptRequiredAbove`` needs a receipt; approving charges the claim to
its budget, which must have that much remaining.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.budgets import remaining
from ..state import Record, State, money_text
from .common import (
    ACTOR,
    acting_user,
    record_change,
    record_decision,
    require_authority,
    require_permission,
    who,
)

__all__ = [
    "approve_expense",
    "get_expense",
    "list_expenses",
    "reimburse_expense",
    "reject_expense",
    "submit_expense",
]

STATUSES = ("submitted", "approved", "rejected", "reimbursed")
CATEGORIES = ("travel", "lodging", "meals", "events", "postage", "materials", "other")

list_expenses = w.list_tool(
    "list_expenses",
    "List expense claims sorted by id; filter by status, employee or department. Paged.",
    "expenses",
    filters={
        "status": w.enum("Only claims with this status.", STATUSES),
        "employeeId": w.string("Only this employee's claims."),
        "departmentId": w.string("Only this department's claims."),
    },
    references={"employeeId": "users", "departmentId": "departments"},
)
get_expense = w.get_tool("get_expense", "One expense claim.", "expenses", "expenseId", "EXP-7003")


@w.define_tool(
    "submit_expense",
    "Submit an expense claim for an employee (the employee or their manager), charged to their "
    "department's budget.",
    {
        "employeeId": w.string("Who spent the money."),
        "category": w.enum("Kind of expense.", CATEGORIES),
        "description": w.string("What it was."),
        "amount": w.money("Amount incl. VAT."),
        "incurredOn": w.date("When"),
        "hasReceipt": w.boolean("Whether a receipt is attached."),
        **ACTOR,
    },
    ["employeeId", "category", "description", "amount", "incurredOn", "hasReceipt", "actorId"],
)
def submit_expense(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a submitted claim."""
    actor = acting_user(state, input)
    employee = w.require_record(state, "users", w.read_string(input, "employeeId"))
    if actor["id"] not in (employee["id"], employee["managerId"]):
        raise silo.tool_error(
            "not_allowed", f"{who(state, actor)} cannot claim expenses for {employee['id']}."
        )
    budget = next(
        (
            b
            for b in w.sorted_by_id(state["budgets"])
            if b["departmentId"] == employee["departmentId"] and b["status"] == "open"
        ),
        None,
    )
    if budget is None:
        raise silo.tool_error("invalid_state", f"{employee['departmentId']} has no open budget.")
    expense_id = w.next_id(state, "EXP", width=4)
    state["expenses"][expense_id] = {
        "id": expense_id,
        "employeeId": employee["id"],
        "departmentId": employee["departmentId"],
        "budgetId": budget["id"],
        "category": w.read_enum(input, "category", CATEGORIES),
        "description": w.read_string(input, "description"),
        "amount": w.read_money(input, "amount"),
        "incurredOn": w.read_date(input, "incurredOn"),
        "submittedAt": w.now(state),
        "hasReceipt": w.read_bool(input, "hasReceipt"),
        "status": "submitted",
        "decidedBy": None,
        "decidedAt": None,
        "rejectionReason": None,
        "reimbursedAt": None,
    }
    audit_id = w.audit(state, actor["id"], "submit_expense", "expense", expense_id, "Submitted.")
    return {"created": state["expenses"][expense_id], "auditId": audit_id}


def _claim(state: State, input: dict[str, Any]) -> tuple[Record, Record]:
    actor = acting_user(state, input)
    expense: Record = w.require_record(state, "expenses", w.read_string(input, "expenseId"))
    w.require_status(expense, "expenses", ("submitted",), "be decided")
    if expense["employeeId"] == actor["id"]:
        raise silo.tool_error(
            "not_allowed", f"{who(state, actor)} cannot decide their own claim {expense['id']}."
        )
    return actor, expense


def _decided(state: State, actor: Record, expense: Record, status: str, reason: str | None) -> Any:
    approval_id = record_decision(
        state, "expense", expense["id"], expense["amount"], actor, status, reason
    )
    changes: list[w.Change] = []
    w.set_field(expense, "status", status, changes)
    w.set_field(expense, "decidedBy", actor["id"], changes)
    w.set_field(expense, "decidedAt", w.now(state), changes)
    w.set_field(expense, "rejectionReason", reason, changes)
    action = "approve_expense" if status == "approved" else "reject_expense"
    audit_id = w.audit(
        state,
        actor["id"],
        action,
        "expense",
        expense["id"],
        f"{status.capitalize()} ({approval_id}).",
        changes,
    )
    return {"updated": expense, "auditId": audit_id}


@w.define_tool(
    "approve_expense",
    "Approve a submitted claim: not your own, within your expense limit, with a receipt when "
    "above the policy threshold, and within the budget's remaining amount.",
    {"expenseId": w.string("The claim."), **ACTOR},
    ["expenseId", "actorId"],
)
def approve_expense(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Submitted -> approved."""
    actor, expense = _claim(state, input)
    threshold = state["policies"]["receiptRequiredAbove"]
    if expense["amount"] > threshold and not expense["hasReceipt"]:
        raise silo.tool_error(
            "invalid_state",
            f"{expense['id']} is {money_text(expense['amount'])} without a receipt; claims above "
            f"{money_text(threshold)} need one. Reject it or ask for the receipt.",
        )
    require_authority(state, actor, "expense", expense["amount"], expense["id"])
    budget = state["budgets"][expense["budgetId"]]
    if expense["amount"] > remaining(state, budget):
        raise silo.tool_error(
            "limit_exceeded",
            f"Budget {budget['id']} has {money_text(remaining(state, budget))} remaining; "
            f"{expense['id']} is {money_text(expense['amount'])}.",
        )
    result: dict[str, Any] = _decided(state, actor, expense, "approved", None)
    return result


@w.define_tool(
    "reject_expense",
    "Reject a submitted claim (not your own) with a reason.",
    {"expenseId": w.string("The claim."), "reason": w.string("Why."), **ACTOR},
    ["expenseId", "reason", "actorId"],
)
def reject_expense(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Submitted -> rejected."""
    actor, expense = _claim(state, input)
    result: dict[str, Any] = _decided(
        state, actor, expense, "rejected", w.read_string(input, "reason")
    )
    return result


@w.define_tool(
    "reimburse_expense",
    "Pay an approved claim back to the employee (treasury roles).",
    {"expenseId": w.string("The claim."), **ACTOR},
    ["expenseId", "actorId"],
)
def reimburse_expense(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Approved -> reimbursed."""
    actor = acting_user(state, input)
    require_permission(state, actor, "treasury")
    expense = w.require_record(state, "expenses", w.read_string(input, "expenseId"))
    w.require_status(expense, "expenses", ("approved",), "be reimbursed")
    audit_id = record_change(
        state,
        actor["id"],
        "reimburse_expense",
        "expense",
        expense,
        "Reimbursed.",
        status="reimbursed",
        reimbursedAt=w.now(state),
    )
    return {"updated": expense, "auditId": audit_id}
