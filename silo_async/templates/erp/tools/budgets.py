"""Budgets: each cost centre's allocation, commitments and spend, and transfers.

How the figures are derived is described in ``domain/budgets.py``.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import budgets as bud
from ..domain.payables import invoice_net
from ..domain.purchasing import LIVE_INVOICE
from ..state import State, money_text
from .common import actor, named, require_authority, target

__all__ = [
    "budget_view",
    "check_budget",
    "get_budget",
    "list_budget_transfers",
    "list_budgets",
    "transfer_budget",
]


def budget_view(state: State, budget: Any) -> dict[str, Any]:
    """A budget with its cost centre and figures."""
    department = state["departments"][budget["departmentId"]]
    return {
        **budget,
        "costCentre": department["costCentre"],
        "departmentName": department["name"],
        **bud.budget_figures(state, budget),
    }


BUDGETS = w.Collection("budgets", "budgetId", "BUD-004", view=budget_view)
list_budgets = BUDGETS.list_tool(
    "List budgets sorted by id with allocated (amount + transfers in - out), committed, spent "
    "and remaining; filter by department or fiscal year. Paged.",
    filters={
        "departmentId": w.schema.string("Only this department's budgets."),
        "fiscalYear": w.schema.integer("Only this fiscal year.", minimum=2000, maximum=2100),
    },
    references={"departmentId": "departments"},
)


def _drawing(state: State, budget_id: str) -> dict[str, Any]:
    return {
        "purchaseOrders": [
            {"id": po["id"], "status": po["status"], "committed": bud.po_commitment(state, po)}
            for po in w.tools.sorted_by_id(state["purchaseOrders"])
            if po["budgetId"] == budget_id and bud.po_commitment(state, po)
        ],
        "requisitions": [
            {
                "id": r["id"],
                "status": r["status"],
                "committed": bud.requisition_commitment(state, r),
            }
            for r in w.tools.sorted_by_id(state["requisitions"])
            if r["budgetId"] == budget_id and bud.requisition_commitment(state, r)
        ],
        "vendorInvoices": [
            {"id": i["id"], "status": i["status"], "net": invoice_net(state, i)}
            for i in w.tools.sorted_by_id(state["vendorInvoices"])
            if i["status"] in LIVE_INVOICE and bud.budget_of_invoice(state, i) == budget_id
        ],
        "expenses": [
            {"id": e["id"], "status": e["status"], "amount": e["amount"]}
            for e in w.tools.sorted_by_id(state["expenses"])
            if e["budgetId"] == budget_id and e["status"] in bud.SPENT_EXPENSE
        ],
    }


get_budget = BUDGETS.get_tool(
    "One budget with its figures and every document drawing on it (committed orders and "
    "requisitions, invoices and expenses spent).",
    view=lambda state, b: {**budget_view(state, b), "drawnBy": _drawing(state, b["id"])},
)


class _Check(w.Input):
    budgetId = w.fields.string("The budget.")
    amount = w.fields.money("The amount.")


@w.define_tool(_Check)
def check_budget(state: State, args: _Check) -> dict[str, Any]:
    """Whether a budget can absorb an amount (net): its remaining, and the shortfall if not."""
    budget = named(state, "budgets", args.budgetId)
    amount = args.amount
    left = bud.remaining(state, budget)
    return {
        "budgetId": budget["id"],
        "amount": amount,
        "remaining": left,
        "sufficient": amount <= left,
        "shortfall": w.amounts.to_money(max(0, amount - left)),
    }


BUDGET_TRANSFERS = w.Collection("budgetTransfers")
list_budget_transfers = BUDGET_TRANSFERS.list_tool(
    "List budget transfers sorted by id; filter by source or destination budget. Paged.",
    filters={
        "fromBudgetId": w.schema.string("Only transfers out of this budget."),
        "toBudgetId": w.schema.string("Only transfers into this budget."),
    },
    references={"fromBudgetId": "budgets", "toBudgetId": "budgets"},
)


_TRANSFER = w.Target(
    "budgetTransfers", "budgetTransferId", w.schema.string("Transfer."), "budgetTransfer"
)


class _Transfer(w.Input):
    toBudgetId = w.fields.string("Budget receiving.")
    amount = w.fields.money("Amount.")
    reason = w.fields.string("Why.")


@actor("budgets").write_tool(
    _Transfer, target=target("budgets", "fromBudgetId", "Budget giving.", "budget")
)
def transfer_budget(call: w.Write[_Transfer]) -> dict[str, Any]:
    """Move allocation from one open budget to another of the same fiscal year (budget roles, within
    the actor's budget transfer limit); the source must have that much remaining.
    """
    state, args, source = call.state, call.args, call.record
    to = named(state, "budgets", args.toBudgetId)
    for budget in (source, to):
        w.records.require_status(budget, "budgets", ("open",), "take part in a transfer")
    if source["id"] == to["id"] or source["fiscalYear"] != to["fiscalYear"]:
        raise silo.tool_error("invalid_input", "Transfer between two budgets of one fiscal year.")
    amount = args.amount
    require_authority(state, call.actor, "budget_transfer", amount, "the transfer")
    left = bud.remaining(state, source)
    if amount > left:
        raise silo.tool_error(
            "limit_exceeded",
            f"Budget {source['id']} has {money_text(left)} remaining; cannot give "
            f"{money_text(amount)}.",
            {"remaining": left, "amount": amount},
        )
    transfer = {
        "id": w.records.next_id(state, "BTR"),
        "fromBudgetId": source["id"],
        "toBudgetId": to["id"],
        "amount": amount,
        "reason": args.reason,
        "approvedBy": call.actor["id"],
        "at": w.clock.now(state),
    }
    audit_id = call.add(
        _TRANSFER, transfer, f"{money_text(amount)} from {source['id']} to {to['id']}."
    )
    return {
        "created": transfer,
        "from": budget_view(state, source),
        "to": budget_view(state, to),
        "auditId": audit_id,
    }
