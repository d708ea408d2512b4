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
from .common import REASON, actor, change, changed, in_status, named, target, who
from .lines import LINE_ITEM, line_tools, read_lines

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


@_ANYONE.write_tool(
    {
        "requesterId": w.schema.string("Who needs the goods."),
        "departmentId": w.schema.string("The requesting department."),
        "budgetId": w.schema.string("A budget of that department."),
        "justification": w.schema.string("Why it is needed."),
        "neededBy": w.schema.date("When it is needed"),
        "lines": w.schema.array(
            "What to buy.",
            {
                **LINE_ITEM,
                "properties": {
                    **LINE_ITEM["properties"],
                    "unitPrice": w.schema.money("Estimated unit cost (default: standard cost)."),
                },
            },
        ),
    },
    ["requesterId", "departmentId", "budgetId", "justification", "lines"],
)
def create_requisition(call: w.Write) -> dict[str, Any]:
    """Raise a draft requisition for a department, charged to one of its budgets. The estimated unit
    cost defaults to the product's standard cost. Anyone may request for themselves; purchasing
    roles may request for others.
    """
    state, input, actor = call.state, call.input, call.actor
    requester = _ANYONE.resolve(state, w.fields.read_string(input, "requesterId"))
    if requester["id"] != actor["id"] and not has_permission(state, actor, "purchasing"):
        raise silo.tool_error(
            "not_allowed", f"{who(state, actor)} may only raise requisitions for themselves."
        )
    department = named(state, "departments", input, "departmentId")
    budget = _budget_for(state, w.fields.read_string(input, "budgetId"), department["id"])
    lines = read_lines(state, input, "estimatedUnitCost", _standard_cost)
    requisition: Record = {
        "id": w.records.next_id(state, "REQ", width=4),
        "requesterId": requester["id"],
        "departmentId": department["id"],
        "budgetId": budget["id"],
        "status": "draft",
        "lines": lines,
        "justification": w.fields.read_string(input, "justification"),
        "createdAt": w.clock.now(state),
        "neededBy": w.fields.read_date(
            input, "neededBy", w.clock.add_days(w.clock.today(state), 30)
        ),
        "purchaseOrderId": None,
        "rfqId": None,
        "rejectionReason": None,
    }
    audit_id = call.add(_REQUISITION, requisition, f"Raised for {department['name']}.")
    return {"created": requisition_view(state, requisition), "auditId": audit_id}


@_ANYONE.write_tool(
    {
        "justification": w.schema.string("New justification."),
        "neededBy": w.schema.date("New needed-by date"),
        "budgetId": w.schema.string("New budget of the same department."),
    },
    target=in_status(_REQUISITION, ("draft",), "be edited"),
)
def update_requisition(call: w.Write) -> dict[str, Any]:
    """Change a draft requisition's justification, needed-by date or budget."""
    state, input, requisition = call.state, call.input, call.record
    w.fields.require_some(input, ["justification", "neededBy", "budgetId"])
    budget_id = w.fields.read_string(input, "budgetId", None)
    if budget_id is not None:
        _budget_for(state, budget_id, requisition["departmentId"])
    for field, value in {
        "justification": w.fields.read_string(input, "justification", None),
        "neededBy": w.fields.read_date(input, "neededBy", None),
        "budgetId": budget_id,
    }.items():
        if value is not None:
            call.set(field, value)
    audit_id = call.audit("Updated.")
    return {"updated": requisition_view(state, requisition), "auditId": audit_id}


add_requisition_line, update_requisition_line, remove_requisition_line = line_tools(
    "requisition", "requisitions", "requisitionId", "estimatedUnitCost", _standard_cost, None
)


@_ANYONE.write_tool(
    {"approverId": w.schema.string("The approver.")},
    ["approverId"],
    target=in_status(_REQUISITION, ("draft",), "be submitted"),
)
def submit_requisition(call: w.Write) -> dict[str, Any]:
    """Submit a draft requisition to an approver authorised for its estimated net (not the
    requester); it becomes pending_approval.

    Draft -> pending_approval.
    """
    state, input, actor, requisition = call.state, call.input, call.actor, call.record
    if not requisition["lines"]:
        raise silo.tool_error("invalid_state", f"{requisition['id']} has no lines to approve.")
    approver_id = w.fields.read_string(input, "approverId")
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


@_ANYONE.write_tool(
    {"comment": w.schema.string("Optional note.")},
    target=in_status(_REQUISITION, ("pending_approval",), "be approved"),
)
def approve_requisition(call: w.Write) -> dict[str, Any]:
    """Approve a pending requisition as its assigned approver, within the approver's requisition
    limit and the budget's remaining amount (approval commits the estimate to the budget).

    pending_approval -> approved.
    """
    state, input, actor, requisition = call.state, call.input, call.actor, call.record
    approval = decide(
        state,
        requisition,
        "requisition",
        requisition_net(requisition),
        actor,
        "approved",
        w.fields.read_string(input, "comment", None),
        lambda: _check_budget(state, requisition),
    )
    return changed(call, requisition_view, f"Approved ({approval['id']}).", status="approved")


@_ANYONE.write_tool(
    REASON,
    ["reason"],
    target=in_status(_REQUISITION, ("pending_approval",), "be rejected"),
)
def reject_requisition(call: w.Write) -> dict[str, Any]:
    """Reject a pending requisition as its assigned approver, with a reason.

    pending_approval -> rejected.
    """
    state, input, actor, requisition = call.state, call.input, call.actor, call.record
    reason = w.fields.read_string(input, "reason")
    decide(
        state, requisition, "requisition", requisition_net(requisition), actor, "rejected", reason
    )
    return changed(call, requisition_view, reason, status="rejected", rejectionReason=reason)


@_ANYONE.write_tool(
    REASON,
    ["reason"],
    target=in_status(_REQUISITION, ("draft", "pending_approval", "approved"), "be cancelled"),
)
def cancel_requisition(call: w.Write) -> dict[str, Any]:
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
    return changed(
        call, requisition_view, w.fields.read_string(call.input, "reason"), status="cancelled"
    )


@w.define_tool({"requisitionId": w.schema.string("The requisition.")}, ["requisitionId"])
def check_requisition_budget(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Whether a requisition's budget can absorb its estimated net: the budget's figures, and the
    shortfall if any.
    """
    requisition = named(state, "requisitions", input, "requisitionId")
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
