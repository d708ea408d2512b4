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
from ..state import Record, money_text
from .common import (
    Reason,
    actor,
    changed,
    in_status,
    named,
    record_decision,
    require_authority,
    target,
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

EXPENSES = w.Collection("expenses", "expenseId", "EXP-7003")
list_expenses = EXPENSES.list_tool(
    "List expense claims sorted by id; filter by status, employee or department. Paged.",
    filters={
        "status": w.schema.enum("Only claims with this status.", STATUSES),
        "employeeId": w.schema.string("Only this employee's claims."),
        "departmentId": w.schema.string("Only this department's claims."),
    },
    references={"employeeId": "users", "departmentId": "departments"},
)
get_expense = EXPENSES.get_tool("One expense claim.")


class _Claim(w.Input):
    employeeId = w.fields.string("Who spent the money.")
    category = w.fields.enum("Kind of expense.", CATEGORIES)
    description = w.fields.string("What it was.")
    amount = w.fields.money("Amount incl. VAT.")
    incurredOn = w.fields.date("When")
    hasReceipt = w.fields.boolean("Whether a receipt is attached.")


@actor().write_tool(_Claim)
def submit_expense(call: w.Write[_Claim]) -> dict[str, Any]:
    """Submit an expense claim for an employee (the employee or their manager), charged to their
    department's budget.
    """
    state, args, actor = call.state, call.args, call.actor
    employee = named(state, "users", args.employeeId)
    if actor["id"] not in (employee["id"], employee["managerId"]):
        raise silo.tool_error(
            "not_allowed", f"{who(state, actor)} cannot claim expenses for {employee['id']}."
        )
    budget = next(
        (
            b
            for b in w.tools.sorted_by_id(state["budgets"])
            if b["departmentId"] == employee["departmentId"] and b["status"] == "open"
        ),
        None,
    )
    if budget is None:
        raise silo.tool_error("invalid_state", f"{employee['departmentId']} has no open budget.")
    expense: Record = {
        "id": w.records.next_id(state, "EXP", width=4),
        "employeeId": employee["id"],
        "departmentId": employee["departmentId"],
        "budgetId": budget["id"],
        "category": args.category,
        "description": args.description,
        "amount": args.amount,
        "incurredOn": args.incurredOn,
        "submittedAt": w.clock.now(state),
        "hasReceipt": args.hasReceipt,
        "status": "submitted",
        "decidedBy": None,
        "decidedAt": None,
        "rejectionReason": None,
        "reimbursedAt": None,
    }
    audit_id = call.add(_SUBMITTED, expense, "Submitted.")
    return {"created": expense, "auditId": audit_id}


_CLAIM = target("expenses", "expenseId", "The claim.", "expense")
_SUBMITTED = in_status(_CLAIM, ("submitted",), "be decided")


def _not_own(call: w.Write) -> Record:
    expense: Record = call.record
    if expense["employeeId"] == call.actor["id"]:
        raise silo.tool_error(
            "not_allowed",
            f"{who(call.state, call.actor)} cannot decide their own claim {expense['id']}.",
        )
    return expense


def _decided(call: w.Write, status: str, reason: str | None) -> Any:
    state, actor, expense = call.state, call.actor, call.record
    approval_id = record_decision(
        state, "expense", expense["id"], expense["amount"], actor, status, reason
    )
    call.set("status", status)
    call.set("decidedBy", actor["id"])
    call.set("decidedAt", w.clock.now(state))
    call.set("rejectionReason", reason)
    audit_id = call.audit(f"{status.capitalize()} ({approval_id}).")
    return {"updated": expense, "auditId": audit_id}


@actor().write_tool(target=_SUBMITTED)
def approve_expense(call: w.Write) -> dict[str, Any]:
    """Approve a submitted claim: not your own, within your expense limit, with a receipt when above
    the policy threshold, and within the budget's remaining amount.

    Submitted -> approved.
    """
    state, actor, expense = call.state, call.actor, _not_own(call)
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
    result: dict[str, Any] = _decided(call, "approved", None)
    return result


@actor().write_tool(Reason, target=_SUBMITTED)
def reject_expense(call: w.Write[Reason]) -> dict[str, Any]:
    """Reject a submitted claim (not your own) with a reason.

    Submitted -> rejected.
    """
    _not_own(call)
    result: dict[str, Any] = _decided(call, "rejected", call.args.reason)
    return result


@actor("treasury").write_tool(target=in_status(_CLAIM, ("approved",), "be reimbursed"))
def reimburse_expense(call: w.Write) -> dict[str, Any]:
    """Pay an approved claim back to the employee (treasury roles).

    Approved -> reimbursed.
    """
    return changed(
        call, None, "Reimbursed.", status="reimbursed", reimbursedAt=w.clock.now(call.state)
    )
