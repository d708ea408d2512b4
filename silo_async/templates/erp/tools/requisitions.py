"""Requisitions: a department asks to buy; an authorised approver decides within the budget.

draft -> pending_approval (submitted to a named approver) -> approved or rejected; an approved
requisition becomes ``ordered`` when a purchase order (or an RFQ's order) is raised from it.
Approving commits the requisition's estimated value to its budget, so the budget must have
that much remaining.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.budgets import budget_figures, remaining
from ..domain.purchasing import approval_fields, pending_approval, requisition_net
from ..state import Record, State, has_permission, money_text
from .approvals import decide, request_approval
from .common import Note, Reason, actor, change, changed, in_status, named, target, who
from .lines import LineItem, line_tools, read_lines

__all__ = [
    "add_requisition_line",
    "approve_requisition",
    "cancel_requisition",
    "check_requisition_budget",
    "create_requisition",
    "get_requisition",
    "list_requisitions",
    "reject_requisition",
    "remove_requisition_line",
    "requisition_view",
    "search_requisitions",
    "submit_requisition",
    "update_requisition",
    "update_requisition_line",
]

STATUSES = ("draft", "pending_approval", "approved", "rejected", "ordered", "cancelled")


def _standard_cost(state: State, context: Mapping[str, Any], product: Record) -> float:
    cost: float = product["standardCost"]
    return cost


def requisition_view(state: State, requisition: Any) -> dict[str, Any]:
    """A requisition with line totals, its estimated net and its pending approval."""
    return {
        **requisition,
        "lines": [
            {**ln, "lineTotal": w.amounts.multiply_money(ln["quantity"], ln["estimatedUnitCost"])}
            for ln in requisition["lines"]
        ],
        "estimatedNet": requisition_net(requisition),
        **approval_fields(state, requisition["id"]),
    }


REQUISITIONS = w.Collection("requisitions", "requisitionId", "REQ-4005", view=requisition_view)
list_requisitions = REQUISITIONS.list_tool(
    "List requisitions sorted by id with estimated net and pending approver; filter by status, "
    "department or requester. Paged.",
    filters={
        "status": w.schema.enum("Only requisitions with this status.", STATUSES),
        "departmentId": w.schema.string("Only this department."),
        "requesterId": w.schema.string("Only this requester."),
    },
    references={"departmentId": "departments", "requesterId": "users"},
)
search_requisitions = REQUISITIONS.search_tool(
    "Find requisitions whose id or justification contains the query. Paged.", ["justification"]
)
get_requisition = REQUISITIONS.get_tool("One requisition.")


def _budget_for(state: State, budget_id: str, department_id: str) -> Record:
    budget: Record = w.records.require_record(state, "budgets", budget_id)
    if budget["departmentId"] != department_id:
        raise silo.tool_error(
            "invalid_input",
            f"Budget {budget['id']} belongs to {budget['departmentId']}, not {department_id}.",
        )
    w.records.require_status(budget, "budgets", ("open",), "be charged")
    return budget


#: Any active user may work on requisitions (each tool checks who may do what).
_ANYONE = actor()


_REQUISITION = target("requisitions", "requisitionId", "The requisition.", "requisition")


class _RequestedLine(LineItem):
    unitPrice = w.fields.money("Estimated unit cost (default: standard cost).", default=None)


class _NewRequisition(w.Input):
    requesterId = w.fields.string("Who needs the goods.")
    departmentId = w.fields.string("The requesting department.")
    budgetId = w.fields.string("A budget of that department.")
    justification = w.fields.string("Why it is needed.")
    neededBy = w.fields.date("When it is needed", default=None)
    lines = w.fields.objects("What to buy.", _RequestedLine)


@_ANYONE.write_tool(_NewRequisition)
def create_requisition(call: w.Write[_NewRequisition]) -> dict[str, Any]:
    """Raise a draft requisition for a department, charged to one of its budgets. The estimated unit
    cost defaults to the product's standard cost. Anyone may request for themselves; purchasing
    roles may request for others.
    """
    state, args, actor = call.state, call.args, call.actor
    requester = _ANYONE.resolve(state, args.requesterId)
    if requester["id"] != actor["id"] and not has_permission(state, actor, "purchasing"):
        raise silo.tool_error(
            "not_allowed", f"{who(state, actor)} may only raise requisitions for themselves."
        )
    department = named(state, "departments", args.departmentId)
    budget = _budget_for(state, args.budgetId, department["id"])
    lines = read_lines(state, args.lines, "estimatedUnitCost", _standard_cost, call.input)
    requisition: Record = {
        "id": w.records.next_id(state, "REQ", width=4),
        "requesterId": requester["id"],
        "departmentId": department["id"],
        "budgetId": budget["id"],
        "status": "draft",
        "lines": lines,
        "justification": args.justification,
        "createdAt": w.clock.now(state),
        "neededBy": _or_in_30_days(state, args.neededBy),
        "purchaseOrderId": None,
        "rfqId": None,
        "rejectionReason": None,
    }
    audit_id = call.add(_REQUISITION, requisition, f"Raised for {department['name']}.")
    return {"created": requisition_view(state, requisition), "auditId": audit_id}


def _or_in_30_days(state: State, needed_by: str | None) -> str:
    """The needed-by date given, else 30 days from today."""
    return w.clock.add_days(w.clock.today(state), 30) if needed_by is None else needed_by


class _RequisitionChanges(w.Input):
    justification = w.fields.string("New justification.", default=None)
    neededBy = w.fields.date("New needed-by date", default=None)
    budgetId = w.fields.string("New budget of the same department.", default=None)


@_ANYONE.write_tool(_RequisitionChanges, target=in_status(_REQUISITION, ("draft",), "be edited"))
def update_requisition(call: w.Write[_RequisitionChanges]) -> dict[str, Any]:
    """Change a draft requisition's justification, needed-by date or budget."""
    state, args, requisition = call.state, call.args, call.record
    w.fields.require_some(args, list(w.fields.fields_of(_RequisitionChanges)))
    budget_id = args.budgetId
    if budget_id is not None:
        _budget_for(state, budget_id, requisition["departmentId"])
    for field, value in {
        "justification": args.justification,
        "neededBy": args.neededBy,
        "budgetId": budget_id,
    }.items():
        if value is not None:
            call.set(field, value)
    audit_id = call.audit("Updated.")
    return {"updated": requisition_view(state, requisition), "auditId": audit_id}


add_requisition_line, update_requisition_line, remove_requisition_line = line_tools(
    "requisition", "requisitions", "requisitionId", "estimatedUnitCost", _standard_cost, None
)


class _Approver(w.Input):
    approverId = w.fields.string("The approver.")


@_ANYONE.write_tool(_Approver, target=in_status(_REQUISITION, ("draft",), "be submitted"))
def submit_requisition(call: w.Write[_Approver]) -> dict[str, Any]:
    """Submit a draft requisition to an approver authorised for its estimated net (not the
    requester); it becomes pending_approval.

    Draft -> pending_approval.
    """
    state, actor, requisition = call.state, call.actor, call.record
    if not requisition["lines"]:
        raise silo.tool_error("invalid_state", f"{requisition['id']} has no lines to approve.")
    approver_id = call.args.approverId
    if approver_id == requisition["requesterId"]:
        raise silo.tool_error(
            "not_allowed", f"The requester {approver_id} cannot approve their own requisition."
        )
    approval = request_approval(
        state, "requisition", requisition["id"], requisition_net(requisition), approver_id, actor
    )
    audit_id = change(
        call, f"Submitted to {approver_id} ({approval['id']}).", status="pending_approval"
    )
    return {
        "updated": requisition_view(state, requisition),
        "approval": approval,
        "auditId": audit_id,
    }


def _check_budget(state: State, requisition: Record) -> None:
    budget = state["budgets"][requisition["budgetId"]]
    left = remaining(state, budget)
    need = requisition_net(requisition)
    if need > left:
        raise silo.tool_error(
            "limit_exceeded",
            f"Budget {budget['id']} ({budget['name']}) has {money_text(left)} remaining; "
            f"{requisition['id']} needs {money_text(need)}.",
            {"budgetId": budget["id"], "remaining": left, "amount": need},
        )


@_ANYONE.write_tool(Note, target=in_status(_REQUISITION, ("pending_approval",), "be approved"))
def approve_requisition(call: w.Write[Note]) -> dict[str, Any]:
    """Approve a pending requisition as its assigned approver, within the approver's requisition
    limit and the budget's remaining amount (approval commits the estimate to the budget).

    pending_approval -> approved.
    """
    state, actor, requisition = call.state, call.actor, call.record
    approval = decide(
        state,
        requisition,
        "requisition",
        requisition_net(requisition),
        actor,
        "approved",
        call.args.comment,
        lambda: _check_budget(state, requisition),
    )
    return changed(call, requisition_view, f"Approved ({approval['id']}).", status="approved")


@_ANYONE.write_tool(Reason, target=in_status(_REQUISITION, ("pending_approval",), "be rejected"))
def reject_requisition(call: w.Write[Reason]) -> dict[str, Any]:
    """Reject a pending requisition as its assigned approver, with a reason.

    pending_approval -> rejected.
    """
    state, actor, requisition = call.state, call.actor, call.record
    reason = call.args.reason
    decide(
        state, requisition, "requisition", requisition_net(requisition), actor, "rejected", reason
    )
    return changed(call, requisition_view, reason, status="rejected", rejectionReason=reason)


@_ANYONE.write_tool(
    Reason,
    target=in_status(_REQUISITION, ("draft", "pending_approval", "approved"), "be cancelled"),
)
def cancel_requisition(call: w.Write[Reason]) -> dict[str, Any]:
    """Cancel a requisition that is not yet ordered (the requester or purchasing roles); a pending
    approval is cancelled and an approved one releases its budget commitment.

    Draft / pending_approval / approved -> cancelled.
    """
    state, actor, requisition = call.state, call.actor, call.record
    if actor["id"] != requisition["requesterId"] and not has_permission(state, actor, "purchasing"):
        raise silo.tool_error(
            "not_allowed", f"{who(state, actor)} cannot cancel {requisition['id']}."
        )
    pending = pending_approval(state, requisition["id"])
    if pending is not None:
        pending["status"] = "cancelled"
    return changed(call, requisition_view, call.args.reason, status="cancelled")


class _Requisition(w.Input):
    requisitionId = w.fields.string("The requisition.")


@w.define_tool(_Requisition)
def check_requisition_budget(state: State, args: _Requisition) -> dict[str, Any]:
    """Whether a requisition's budget can absorb its estimated net: the budget's figures, and the
    shortfall if any.
    """
    requisition = named(state, "requisitions", args.requisitionId)
    budget = state["budgets"][requisition["budgetId"]]
    figures = budget_figures(state, budget)
    need = requisition_net(requisition)
    return {
        "requisitionId": requisition["id"],
        "budgetId": budget["id"],
        "estimatedNet": need,
        "budget": figures,
        "sufficient": need <= figures["remaining"],
        "shortfall": w.amounts.to_money(max(0, need - figures["remaining"])),
    }
