"""Who may act, the records writes act on, and the case rules every account change shares.

Every write names its actor (an active member of staff) and the case it is made on. Account
changes need a case whose caller has been verified (the customer's security PIN, or a code texted
to one of their lines); barring a line reported lost or stolen is the one exception, because it
protects the account holder. Messages name the rule and how to satisfy it.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Case, Line, Staff, State, is_verified

__all__ = [
    "ACTOR",
    "BILL",
    "CASE",
    "LINE",
    "OPEN_CASE",
    "acting_staff",
    "case_for",
    "require_open",
]


def acting_staff(state: State, staff_id: str) -> Staff:
    """The member of staff making a change: must exist and be active (``not_allowed``)."""
    staff: Staff = w.records.require_record(state, "staff", staff_id, "Staff member")
    if not staff["active"]:
        raise silo.tool_error(
            "not_allowed",
            f"Staff member {staff['id']} ({staff['name']}) is no longer active and cannot act.",
            {"id": staff["id"], "active": False},
        )
    return staff


#: Every write names who makes it: an active member of staff, resolved before anything else.
ACTOR = w.Actor(
    w.fields.string("Id of the staff member making this change, e.g. STF-001."), acting_staff
)


def require_open(state: State, case: Case) -> None:
    """``invalid_state`` unless the case is open (resolved and escalated ones take no more work)."""
    if case["status"] != "open":
        raise silo.tool_error(
            "invalid_state",
            f"Case {case['id']} is {case['status']}; open a new case for this contact.",
            {"id": case["id"], "status": case["status"]},
        )


CASE = w.Target("cases", "caseId", w.fields.string("Case id, e.g. CAS-0005."), "case")
OPEN_CASE = CASE.guarded(require_open)
LINE = w.Target("lines", "lineId", w.fields.string("Line id, e.g. LIN-004."), "line")
BILL = w.Target("bills", "billId", w.fields.string("Bill id, e.g. BIL-0021."), "bill")


class CaseInput(w.Input):
    """The case an account change is made on (every account write declares it first)."""

    caseId = w.fields.string("Id of the open case for this contact, e.g. CAS-0005.")


def case_for(state: State, args: CaseInput, customer_id: str, *, verified: bool = True) -> Case:
    """The open case a change to ``customer_id``'s account is made on.

    Raises:
        ToolError: ``not_found``; ``invalid_state`` for a closed case; ``not_allowed`` when the
            case is about another customer, or (``verified``) its caller is not verified yet.
    """
    case: Case = w.records.require_record(state, "cases", args.caseId)
    require_open(state, case)
    if case["customerId"] != customer_id:
        raise silo.tool_error(
            "not_allowed",
            f"Case {case['id']} is about customer {case['customerId']}, not {customer_id}; "
            "changes are made on a case of the account holder.",
            {"caseCustomerId": case["customerId"], "customerId": customer_id},
        )
    if verified and not is_verified(case):
        raise silo.tool_error(
            "not_allowed",
            f"The caller on case {case['id']} is not verified: verify them with verify_caller "
            "(security PIN or a texted code) before changing the account.",
            {"caseId": case["id"], "verified": False},
        )
    return case


def line_case(call: w.Write[Any], *, verified: bool = True) -> tuple[Line, Case]:
    """The target line and the case the change is made on (see :func:`case_for`)."""
    line: Line = call.record
    return line, case_for(call.state, call.args, line["customerId"], verified=verified)
