"""Billing: bills and balances, cards on file, payments approved in the banking app, credits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w
from silo_async.world.amounts import to_money
from silo_async.world.clock import now

from ..state import (
    Bill,
    Card,
    Credit,
    CreditReason,
    Payment,
    State,
    bill_balance,
    bills_of,
    card_expired,
    charge_credited,
)
from .helpers import ACTOR, BILL, CaseInput, case_for
from .views import bill_view, card_view, payment_view

__all__ = [
    "get_bill",
    "get_payment",
    "issue_credit",
    "list_bills",
    "list_cards",
    "list_credits",
    "list_unbilled_charges",
    "request_card_payment",
]

BILL_STATUSES = ["paid", "unpaid", "overdue"]


def _in_status(state: State, bill: Bill, input: Mapping[str, Any]) -> bool:
    wanted = input.get("status")
    return wanted is None or bill_view(state, bill)["status"] == wanted


BILLS = w.Collection("bills", "billId", "BIL-0021", view=bill_view)
list_bills = BILLS.list_tool(
    "List bills sorted by id, optionally one customer's, or only paid, unpaid (not yet due) or "
    "overdue ones. Each has its charges, credits, payments, balance and status. Paged.",
    filters={"customerId": w.fields.string("Only this customer's bills.", default=None)},
    references={"customerId": "customers"},
    extra={"status": w.schema.enum("Only bills in this status.", BILL_STATUSES)},
    where=_in_status,
)
get_bill = BILLS.get_tool(
    "One bill: its charges (each with an id, line, description, amount, date), credits, "
    "payments, balance and status (paid, unpaid or overdue)."
)


class _Customer(w.Input):
    customerId = w.fields.string("Customer id, e.g. CUS-004.")
    limit = w.fields.LIMIT
    offset = w.fields.OFFSET


@w.define_tool(_Customer)
def list_credits(state: State, args: _Customer) -> dict[str, Any]:
    """Every credit on a customer's bills, oldest first, with its reason and date. Paged."""
    w.records.require_record(state, "customers", args.customerId)
    bills = {b["id"] for b in bills_of(state, args.customerId)}
    rows = [c for c in w.tools.sorted_by_id(state["credits"]) if c["billId"] in bills]
    return w.tools.paginate(rows, args)


@w.define_tool(_Customer)
def list_cards(state: State, args: _Customer) -> dict[str, Any]:
    """A customer's payment cards on file (brand, last four digits, expiry, expired). Paged."""
    w.records.require_record(state, "customers", args.customerId)
    rows = [c for c in w.tools.sorted_by_id(state["cards"]) if c["customerId"] == args.customerId]
    return w.tools.paginate(rows, args, lambda c: card_view(state, c))


@w.define_tool(_Customer)
def list_unbilled_charges(state: State, args: _Customer) -> dict[str, Any]:
    """Charges waiting for a customer's next bill (add-ons bought, fees). Paged."""
    w.records.require_record(state, "customers", args.customerId)
    rows = [
        c
        for c in w.tools.sorted_by_id(state["unbilledCharges"])
        if c["customerId"] == args.customerId
    ]
    return w.tools.paginate(rows, args)


get_payment = w.Collection("payments", "paymentId", "PAY-020", view=payment_view).get_tool(
    "One payment: bill, card, amount and status (awaiting_approval until the customer approves "
    "it in their banking app, then settled)."
)


class _Pay(CaseInput):
    cardId = w.fields.string("The customer's card on file they chose, e.g. CRD-004.")
    amount = w.fields.money("Amount in EUR, at most the bill's balance.")


@ACTOR.write_tool(_Pay, target=BILL)
def request_card_payment(call: w.Write[_Pay]) -> dict[str, Any]:
    """Ask for a payment towards a bill from a card on file. The customer's bank asks them to
    approve it in their banking app; it settles only then (see get_payment).
    """
    state, args, bill = call.state, call.args, call.record
    case_for(state, args, bill["customerId"])
    card: Card = w.records.require_record(state, "cards", args.cardId)
    if card["customerId"] != bill["customerId"]:
        raise silo.tool_error(
            "not_allowed", f"Card {card['id']} is not on file for {bill['customerId']}."
        )
    if card_expired(state, card):
        raise silo.tool_error(
            "invalid_state",
            f"Card {card['id']} ({card['brand']} ending {card['last4']}) expired in "
            f"{card['expiry']}; ask for another card.",
            {"expiry": card["expiry"]},
        )
    balance = bill_balance(state, bill)
    amount = w.fields.read(args, "amount", maximum=balance) if balance > 0 else None
    if amount is None:
        raise silo.tool_error("invalid_state", f"Bill {bill['id']} has nothing left to pay.")
    payment: Payment = {
        "id": w.records.next_id(state, "PAY"),
        "billId": bill["id"],
        "cardId": card["id"],
        "amount": amount,
        "status": "awaiting_approval",
        "requestedAt": now(state),
        "settledAt": None,
        "caseId": args.caseId,
    }
    state["payments"][payment["id"]] = payment
    call.audit(f"Payment {payment['id']} of {amount:.2f} requested from card {card['id']}.")
    return {"payment": payment_view(state, payment)}


CREDIT_REASONS: list[CreditReason] = ["goodwill", "duplicate_charge", "billing_error", "outage"]


class _Credit(CaseInput):
    amount = w.fields.money("Amount in EUR.")
    reason = w.fields.enum("Why.", CREDIT_REASONS)
    note = w.fields.string("What the credit is for, in a sentence.")
    chargeId = w.fields.string(
        "The charge it corrects (for duplicate_charge and billing_error), e.g. BIL-0021-C2.",
        default=None,
    )


@ACTOR.write_tool(_Credit, target=BILL)
def issue_credit(call: w.Write[_Credit]) -> dict[str, Any]:
    """Credit a bill, against one of its charges or as a whole. Up to the acting staff member's
    credit limit per credit; a charge is never credited beyond its amount.
    """
    state, args, bill = call.state, call.args, call.record
    case = case_for(state, args, bill["customerId"])
    amount, limit = args.amount, call.actor["creditLimit"]
    if amount > limit:
        raise silo.tool_error(
            "not_allowed",
            f"{call.actor['name']} ({call.actor['id']}) may credit at most {limit:.2f} at a time; "
            f"{amount:.2f} needs a more senior colleague.",
            {"creditLimit": limit},
        )
    charge_id = args.chargeId
    if args.reason in ("duplicate_charge", "billing_error") and charge_id is None:
        raise w.fields.invalid("chargeId", f"is required for {args.reason}", None)
    if charge_id is not None:
        charge = next((c for c in bill["charges"] if c["id"] == charge_id), None)
        if charge is None:
            raise w.records.not_found("charges", charge_id, f"Charge on {bill['id']}")
        left = to_money(charge["amount"] - charge_credited(state, bill["id"], charge_id))
        if amount > left:
            raise silo.tool_error(
                "invalid_input",
                f"Charge {charge_id} has {left:.2f} left to credit; {amount:.2f} is too much.",
                {"left": left},
            )
    credit: Credit = {
        "id": w.records.next_id(state, "ADJ"),
        "billId": bill["id"],
        "chargeId": charge_id,
        "amount": amount,
        "reason": args.reason,
        "note": args.note,
        "createdAt": now(state),
        "createdBy": call.actor["id"],
        "caseId": case["id"],
    }
    state["credits"][credit["id"]] = credit
    call.audit(f"Credit {credit['id']} of {amount:.2f} ({args.reason}) on case {case['id']}.")
    return {"credit": credit, "bill": bill_view(state, bill)}
