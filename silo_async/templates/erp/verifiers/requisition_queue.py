"""VER-006: pending requisitions approved within limits and budgets, or rejected for budget."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.budgets import remaining
from ..domain.purchasing import requisition_net
from ..state import Record, State, authorised_approvers, is_authorised
from .common import approval_of, unchanged_except


def _expected_approver(state: State, approval: Record) -> str:
    """The assignee when authorised, else the authorised approver with the lowest limit."""
    assignee = state["users"][approval["assigneeId"]]
    if is_authorised(state, assignee, "requisition", approval["amount"]):
        return str(assignee["id"])
    candidates = authorised_approvers(
        state, "requisition", approval["amount"], [assignee["id"], approval["requestedBy"]]
    )
    return str(candidates[0]["id"])


def _handed_over(final: State, initial: State) -> silo.Check:
    """Each reassignment was made by the approver the approval was assigned to."""
    moves = [
        e for e in w.grade.new_audit_entries(final, initial) if e["action"] == "reassign_approval"
    ]
    wrong = [
        f"{e['entityId']} by {e['actorId']}"
        for e in moves
        if e["entityId"] not in initial["approvals"]
        or e["actorId"] != initial["approvals"][e["entityId"]]["assigneeId"]
    ]
    return silo.check(
        "each reassignment was made by the approver it was assigned to",
        not wrong,
        ", ".join(wrong) or f"{len(moves)} reassignment(s)",
    )


@silo.verifier(id="VER-006", task_id="TASK-006")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Approve within budget and limit, else reject; budgets judged on the initial world.

    The pending requisitions draw on different budgets or fit together, so judging each on
    the initial world gives the same answer as judging them in any order.
    """
    pending = [
        a
        for a in w.tools.sorted_by_id(initial["approvals"])
        if a["documentType"] == "requisition" and a["status"] == "pending"
    ]
    fits: list[Record] = []
    short: list[Record] = []
    for approval in pending:
        requisition = initial["requisitions"][approval["documentId"]]
        budget = initial["budgets"][requisition["budgetId"]]
        ok = requisition_net(requisition) <= remaining(initial, budget)
        (fits if ok else short).append(approval)
    status = {i: final["requisitions"][i]["status"] for i in final["requisitions"]}
    decided = {a["documentId"]: approval_of(final, a["documentId"], "approved") for a in fits}
    return [
        _handed_over(final, initial),
        silo.check(
            "the requisitions their budget can absorb are approved",
            bool(fits) and all(status[a["documentId"]] == "approved" for a in fits),
            ", ".join(a["documentId"] for a in fits),
        ),
        silo.check(
            "each approved by the assignee, or the lowest-limit authorised approver instead",
            all(
                (d := decided[a["documentId"]]) is not None
                and d["decidedBy"] == _expected_approver(initial, a)
                for a in fits
            ),
            ", ".join(str((decided[a["documentId"]] or {}).get("decidedBy")) for a in fits),
        ),
        silo.check(
            "the requisitions their budget cannot absorb are rejected for insufficient budget",
            bool(short)
            and all(
                status[a["documentId"]] == "rejected"
                and "budget"
                in (final["requisitions"][a["documentId"]]["rejectionReason"] or "").lower()
                for a in short
            ),
            ", ".join(a["documentId"] for a in short),
        ),
        silo.optional(
            "no budget was topped up", not w.grade.new_ids(final, initial, "budgetTransfers")
        ),
        silo.optional(
            "no other requisition changed",
            not unchanged_except(
                final, initial, "requisitions", [a["documentId"] for a in pending]
            ),
        ),
    ]
