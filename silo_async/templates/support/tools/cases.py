"""Cases: one per customer contact, where the caller is verified and the outcome recorded."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w
from silo_async.world.clock import now

from ..state import Case, Customer, Line, State, is_verified, one_time_code
from .helpers import ACTOR, CASE, OPEN_CASE
from .views import case_view

__all__ = [
    "add_case_note",
    "escalate_case",
    "get_case",
    "list_cases",
    "open_case",
    "resolve_case",
    "send_verification_code",
    "verify_caller",
]

TEAMS = ["billing", "technical", "fraud", "retention"]

CASES = w.Collection("cases", "caseId", "CAS-0005", view=case_view)
list_cases = CASES.list_tool(
    "List cases sorted by id, optionally one customer's or in one status. Paged.",
    filters={
        "customerId": w.fields.string("Only this customer's cases.", default=None),
        "status": w.fields.enum(
            "Only this status.", ["open", "resolved", "escalated"], default=None
        ),
    },
    references={"customerId": "customers"},
)
get_case = CASES.get_tool("One case: its customer, status, whether the caller is verified, notes.")


class _NewCase(w.Input):
    customerId = w.fields.string("The account holder the contact is about, e.g. CUS-004.")
    subject = w.fields.string("What the contact is about, in a few words.")


@ACTOR.write_tool(_NewCase)
def open_case(call: w.Write[_NewCase]) -> dict[str, Any]:
    """Open a case for this contact about a customer's account. The caller starts unverified."""
    state, args = call.state, call.args
    customer: Customer = w.records.require_record(state, "customers", args.customerId)
    case: Case = {
        "id": w.records.next_id(state, "CAS", width=4),
        "customerId": customer["id"],
        "subject": args.subject,
        "status": "open",
        "openedAt": now(state),
        "openedBy": call.actor["id"],
        "verifiedBy": None,
        "failedAttempts": 0,
        "team": None,
        "notes": [],
        "resolution": None,
        "closedAt": None,
    }
    call.add(CASE, case, f"Opened: {args.subject}")
    return {"created": case_view(state, case)}


class _Verify(w.Input):
    method = w.fields.enum(
        "pin: the account's security PIN as the caller says it; sms_code: a code texted with "
        "send_verification_code, as the caller reads it back.",
        ["pin", "sms_code"],
    )
    secret = w.fields.string("What the caller said: the PIN or the code.")


def _matches(state: State, case: Case, method: str, secret: str) -> str | None:
    """The id of what the secret matched (the customer, or the code record), else None."""
    said = "".join(ch for ch in secret if ch.isdigit())
    if method == "pin":
        customer = state["customers"][case["customerId"]]
        return customer["id"] if said and said == customer["securityPin"] else None
    for code in w.tools.sorted_by_id(state["verificationCodes"]):
        if code["caseId"] == case["id"] and code["usedAt"] is None and code["code"] == said:
            return code["id"]
    return None


@ACTOR.write_tool(_Verify, target=OPEN_CASE)
def verify_caller(call: w.Write[_Verify]) -> dict[str, Any]:
    """Check the caller on a case is the account holder, by their security PIN or a texted code.

    A wrong answer is recorded and reported (``verified: false`` and the attempts left); after
    too many the case is locked and can no longer verify anyone.
    """
    state, args, case = call.state, call.args, call.record
    allowed = state["policies"]["pinAttempts"]
    if is_verified(case):
        raise silo.tool_error("conflict", f"The caller on case {case['id']} is already verified.")
    if case["failedAttempts"] >= allowed:
        raise silo.tool_error(
            "not_allowed",
            f"Case {case['id']} is locked after {allowed} failed attempts; the caller must visit a "
            "store with photo ID.",
        )
    matched = _matches(state, case, args.method, args.secret)
    if matched is None:
        call.set("failedAttempts", case["failedAttempts"] + 1)
        call.audit(f"Verification by {args.method} failed.")
        left = allowed - case["failedAttempts"]
        return {"verified": False, "attemptsLeft": left, "case": case_view(state, case)}
    if args.method == "sms_code":
        w.records.set_field(state["verificationCodes"][matched], "usedAt", now(state), [])
    call.set("verifiedBy", args.method)
    call.audit(f"Caller verified by {args.method}.")
    return {"verified": True, "case": case_view(state, case)}


class _SendCode(w.Input):
    lineId = w.fields.string("One of the account holder's active lines, e.g. LIN-004.")


@ACTOR.write_tool(_SendCode, target=OPEN_CASE)
def send_verification_code(call: w.Write[_SendCode]) -> dict[str, Any]:
    """Text a one-time code to one of the case customer's lines, for the caller to read back
    (verify_caller with method sms_code). The code itself is never shown here.
    """
    state, case = call.state, call.record
    line: Line = w.records.require_record(state, "lines", call.args.lineId)
    if line["customerId"] != case["customerId"]:
        raise silo.tool_error(
            "not_allowed",
            f"Line {line['id']} is not {case['customerId']}'s; codes go only to the account "
            "holder's own lines.",
        )
    if line["status"] != "active":
        raise silo.tool_error(
            "invalid_state", f"Line {line['id']} is {line['status']} and cannot receive texts."
        )
    sent = sum(1 for c in state["verificationCodes"].values() if c["lineId"] == line["id"])
    code_id = w.records.next_id(state, "OTP")
    code = one_time_code(line["id"], sent + 1)
    state["verificationCodes"][code_id] = {
        "id": code_id,
        "caseId": case["id"],
        "lineId": line["id"],
        "code": code,
        "sentAt": now(state),
        "usedAt": None,
    }
    _deliver(
        state,
        line,
        f"Your Larkspur verification code is {code}. We will never ask for it "
        "except on a call or chat you started.",
    )
    call.audit(f"Verification code texted to {line['msisdn']}.")
    return {"sent": True, "to": line["msisdn"], "caseId": case["id"]}


def _deliver(state: State, line: Line, text: str) -> None:
    """Put a text in the inbox of the phone holding the line's SIM (if it is in one)."""
    for device in w.tools.sorted_by_id(state["devices"]):
        if device["simId"] == line["simId"]:
            message_id = w.records.next_id(state, "MSG")
            state["messages"][message_id] = {
                "id": message_id,
                "deviceId": device["id"],
                "sender": "Larkspur",
                "text": text,
                "receivedAt": now(state),
            }


class _Note(w.Input):
    text = w.fields.string("The note.")


@ACTOR.write_tool(_Note, target=OPEN_CASE)
def add_case_note(call: w.Write[_Note]) -> dict[str, Any]:
    """Add a note to an open case."""
    note = {"at": now(call.state), "by": call.actor["id"], "text": call.args.text}
    call.record["notes"].append(note)
    call.audit("Note added.")
    return {"updated": case_view(call.state, call.record)}


class _Escalate(w.Input):
    team = w.fields.enum("The team that must act.", TEAMS)
    reason = w.fields.string("What the team must do, and why.")


@ACTOR.write_tool(_Escalate, target=OPEN_CASE)
def escalate_case(call: w.Write[_Escalate]) -> dict[str, Any]:
    """Hand an open case to the team that must act (billing, technical, fraud, retention); it
    is closed to further work here.
    """
    state, args, case = call.state, call.args, call.record
    case["notes"].append({"at": now(state), "by": call.actor["id"], "text": args.reason})
    call.set("team", args.team)
    call.set("status", "escalated")
    call.set("closedAt", now(state))
    call.audit(f"Escalated to {args.team}: {args.reason}")
    return {"updated": case_view(state, case)}


class _Resolve(w.Input):
    resolution = w.fields.string("What was done, in a sentence or two.")


@ACTOR.write_tool(_Resolve, target=OPEN_CASE)
def resolve_case(call: w.Write[_Resolve]) -> dict[str, Any]:
    """Close an open case as resolved, with a summary of what was done."""
    state, case = call.state, call.record
    call.set("resolution", call.args.resolution)
    call.set("status", "resolved")
    call.set("closedAt", now(state))
    call.audit(f"Resolved: {call.args.resolution}")
    return {"updated": case_view(state, case)}
