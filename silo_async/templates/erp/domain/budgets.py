"""Budgets: what each cost centre was given, has committed and has spent.

Allocated is the budget's amount plus transfers in, less transfers out. Committed is money
promised but not yet billed: approved requisitions not yet on an approved order (at their
estimated value) and the unbilled part of approved or sent purchase orders (ordered less
invoiced quantities, at order prices). Spent is ``priorSpend`` (booked outside this system) plus
live vendor invoices charged to the budget (net, less credit notes) plus approved and reimbursed
expenses. Remaining is allocated less committed less spent; a negative remaining is an overrun.
All figures exclude VAT.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from silo_async import world as w
from silo_async.world.amounts import sum_money, to_money

from ..state import State
from .payables import invoice_net
from .purchasing import LIVE_INVOICE, invoiced_quantity, requisition_net

__all__ = [
    "COMMITTING_PO",
    "allocated",
    "budget_figures",
    "budget_of_invoice",
    "committed",
    "po_commitment",
    "remaining",
    "requisition_commitment",
    "spent",
]

#: Purchase order statuses whose unbilled value is committed.
COMMITTING_PO: tuple[str, ...] = ("approved", "sent")
#: Expense statuses that count as spent.
SPENT_EXPENSE: tuple[str, ...] = ("approved", "reimbursed")


def allocated(state: State, budget: Mapping[str, Any]) -> float:
    """The amount plus transfers in, less transfers out."""
    moves = state["budgetTransfers"].values()
    inflow = sum_money(t["amount"] for t in moves if t["toBudgetId"] == budget["id"])
    outflow = sum_money(t["amount"] for t in moves if t["fromBudgetId"] == budget["id"])
    return to_money(budget["amount"] + inflow - outflow)


def po_commitment(state: State, po: Mapping[str, Any]) -> float:
    """The unbilled net value of an approved or sent order (0 otherwise)."""
    if po["status"] not in COMMITTING_PO:
        return 0
    return sum_money(
        w.amounts.multiply_money(
            max(0.0, line["quantity"] - invoiced_quantity(state, po["id"], line["lineNo"])),
            line["unitPrice"],
        )
        for line in po["lines"]
    )


def requisition_commitment(state: State, requisition: Mapping[str, Any]) -> float:
    """An approved requisition's estimate, until an approved order takes over from it."""
    if requisition["status"] == "approved":
        return requisition_net(requisition)
    order_id = requisition.get("purchaseOrderId")
    if (
        requisition["status"] == "ordered"
        and order_id is not None
        and state["purchaseOrders"][order_id]["status"] in ("draft", "pending_approval")
    ):
        return requisition_net(requisition)
    return 0


def committed(state: State, budget_id: str) -> float:
    """Money promised against the budget but not yet billed."""
    orders = (
        po_commitment(state, po)
        for po in state["purchaseOrders"].values()
        if po["budgetId"] == budget_id
    )
    requisitions = (
        requisition_commitment(state, r)
        for r in state["requisitions"].values()
        if r["budgetId"] == budget_id
    )
    return sum_money([*orders, *requisitions])


def budget_of_invoice(state: State, invoice: Mapping[str, Any]) -> str | None:
    """The budget a vendor invoice is charged to: its order's, or its own for services."""
    if invoice["purchaseOrderId"] is not None:
        budget: str = state["purchaseOrders"][invoice["purchaseOrderId"]]["budgetId"]
        return budget
    own: str | None = invoice["budgetId"]
    return own


def spent(state: State, budget: Mapping[str, Any]) -> float:
    """Prior spend plus live invoices and approved or reimbursed expenses on the budget."""
    invoices = (
        invoice_net(state, i)
        for i in state["vendorInvoices"].values()
        if i["status"] in LIVE_INVOICE and budget_of_invoice(state, i) == budget["id"]
    )
    expenses = (
        e["amount"]
        for e in state["expenses"].values()
        if e["budgetId"] == budget["id"] and e["status"] in SPENT_EXPENSE
    )
    return sum_money([budget["priorSpend"], *invoices, *expenses])


def remaining(state: State, budget: Mapping[str, Any]) -> float:
    """Allocated less committed less spent (negative: over budget)."""
    return to_money(
        allocated(state, budget) - committed(state, budget["id"]) - spent(state, budget)
    )


def budget_figures(state: State, budget: Mapping[str, Any]) -> dict[str, Any]:
    """``{allocated, committed, spent, remaining, overBudget}``."""
    given = allocated(state, budget)
    promised = committed(state, budget["id"])
    used = spent(state, budget)
    left = to_money(given - promised - used)
    return {
        "allocated": given,
        "committed": promised,
        "spent": used,
        "remaining": left,
        "overBudget": left < 0,
    }
