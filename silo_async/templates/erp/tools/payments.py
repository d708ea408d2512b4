"""Outbound payments: draft -> approved -> completed (or failed / cancelled).

A payment pays one vendor's approved invoices to the vendor's bank account at the time it is
created. Segregation of duties: whoever creates a payment cannot approve it. A payment that
bounced stays failed; ``retry_payment`` re-issues what is still owed once the vendor's bank
details have been replaced.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import payables as pay
from ..state import Record, State, money_text
from .common import Reason, actor, changed, record_decision, require_authority, target, who
from .vendors import require_active_vendor

__all__ = [
    "approve_payment",
    "cancel_payment",
    "create_vendor_payment",
    "execute_payment",
    "get_payment",
    "list_payments",
    "retry_payment",
]

STATUSES = ("draft", "approved", "completed", "failed", "cancelled")

PAYMENTS = w.Collection("payments", "paymentId", "PAY-3002")
list_payments = PAYMENTS.list_tool(
    "List payments (outbound to vendors, inbound from customers) sorted by id; filter by "
    "direction, status, vendor or customer. Paged.",
    filters={
        "direction": w.schema.enum("Only this direction.", ("outbound", "inbound")),
        "status": w.schema.enum("Only payments with this status.", STATUSES),
        "vendorId": w.schema.string("Only payments to this vendor."),
        "customerId": w.schema.string("Only receipts from this customer."),
    },
    references={"vendorId": "vendors", "customerId": "customers"},
)
get_payment = PAYMENTS.get_tool("One payment.")


def _payable_vendor(state: State, vendor_id: str) -> Record:
    vendor: Record = w.records.require_record(state, "vendors", vendor_id)
    merged = vendor["mergedIntoId"]
    require_active_vendor(vendor, f"merged into {merged}" if merged else None, "it cannot be paid.")
    if vendor["bankStatus"] != "verified":
        raise silo.tool_error(
            "not_allowed",
            f"Vendor {vendor['id']}'s bank account {vendor['iban']} is {vendor['bankStatus']}; "
            "replace it with update_vendor_bank_details before paying.",
            {"vendorId": vendor["id"], "bankStatus": vendor["bankStatus"]},
        )
    return vendor


class _Allocation(w.Input):
    invoiceId = w.fields.string("An approved invoice of the vendor.")
    amount = w.fields.money("Amount (default: everything left to pay).", default=None)


class _NewPayment(w.Input):
    vendorId = w.fields.string("The vendor.")
    allocations = w.fields.objects("Invoices paid.", _Allocation)
    paymentDate = w.fields.date("When the bank should pay (today or later)")


def _allocation(state: State, vendor: Record, item: _Allocation) -> dict[str, Any]:
    invoice = w.records.require_record(state, "vendorInvoices", item.invoiceId)
    if invoice["vendorId"] != vendor["id"]:
        raise silo.tool_error(
            "invalid_input", f"{invoice['id']} is {invoice['vendorId']}'s invoice."
        )
    w.records.require_status(invoice, "vendorInvoices", ("approved",), "be paid")
    left = pay.open_to_pay(state, invoice)
    if left <= 0:
        raise silo.tool_error("invalid_state", f"{invoice['id']} has nothing left to pay.")
    amount = w.fields.read(item, "amount", default=left, maximum=left)
    return {"invoiceId": invoice["id"], "amount": amount}


def _or_today(state: State, day: str | None) -> str:
    return w.clock.today(state) if day is None else day


_PAYABLES = actor("payables")


@_PAYABLES.write_tool(_NewPayment)
def create_vendor_payment(call: w.Write[_NewPayment]) -> dict[str, Any]:
    """Draft a payment to an active vendor with verified bank details, paying approved invoices
    (each amount defaults to what is left to pay). Payables roles.
    """
    state, args = call.state, call.args
    vendor = _payable_vendor(state, args.vendorId)
    allocations = [_allocation(state, vendor, item) for item in args.allocations]
    if len({a["invoiceId"] for a in allocations}) != len(allocations):
        raise silo.tool_error("invalid_input", "Give each invoice once.")
    date = args.paymentDate
    if date < w.clock.today(state):
        raise w.fields.invalid(
            "paymentDate", f"must be today ({w.clock.today(state)}) or later", date
        )
    payment: Record = {
        "id": w.records.next_id(state, "PAY", width=4),
        "direction": "outbound",
        "vendorId": vendor["id"],
        "customerId": None,
        "amount": w.amounts.sum_money(a["amount"] for a in allocations),
        "allocations": allocations,
        "method": "bank_transfer",
        "bankAccount": vendor["iban"],
        "reference": None,
        "status": "draft",
        "paymentDate": date,
        "createdBy": call.actor["id"],
        "approvedBy": None,
        "completedAt": None,
        "failureReason": None,
        "retryOf": None,
    }
    audit_id = call.add(_PAYMENT, payment, f"{money_text(payment['amount'])} to {vendor['id']}.")
    return {"created": payment, "auditId": audit_id}


def _outbound(statuses: tuple[str, ...], action: str) -> w.Target:
    """The payment, outbound and in one of ``statuses`` to ``action``."""

    def guard(state: State, payment: Record) -> None:
        if payment["direction"] != "outbound":
            raise silo.tool_error("invalid_input", f"{payment['id']} is a customer receipt.")
        w.records.require_status(payment, "payments", statuses, action)

    return target("payments", "paymentId", "The payment.", "payment", guard)


_PAYMENT = w.Target("payments", "paymentId", w.schema.string("The payment."), "payment")


@actor().write_tool(target=_outbound(("draft",), "be approved"))
def approve_payment(call: w.Write) -> dict[str, Any]:
    """Approve a draft payment within the actor's payment limit; the person who created the payment
    cannot approve it.

    Draft -> approved.
    """
    state, actor, payment = call.state, call.actor, call.record
    if payment["createdBy"] == actor["id"]:
        raise silo.tool_error(
            "not_allowed",
            f"{who(state, actor)} created {payment['id']} and cannot also approve it.",
        )
    require_authority(state, actor, "payment", payment["amount"], payment["id"])
    record_decision(state, "payment", payment["id"], payment["amount"], actor, "approved")
    return changed(call, None, "Approved.", status="approved", approvedBy=actor["id"])


@actor("treasury").write_tool(target=_outbound(("approved",), "be executed"))
def execute_payment(call: w.Write) -> dict[str, Any]:
    """Release an approved payment to the bank (treasury roles) once its payment date has come; its
    invoices are paid by the allocated amounts.

    Approved -> completed.
    """
    state, payment = call.state, call.record
    if payment["paymentDate"] > w.clock.today(state):
        raise silo.tool_error(
            "invalid_state",
            f"{payment['id']} is scheduled for {payment['paymentDate']}; today is "
            f"{w.clock.today(state)}.",
        )
    vendor = state["vendors"][payment["vendorId"]]
    if vendor["iban"] != payment["bankAccount"] or vendor["bankStatus"] != "verified":
        raise silo.tool_error(
            "invalid_state",
            f"{payment['id']} would pay {payment['bankAccount']}, but {vendor['id']}'s account is "
            f"now {vendor['iban']} ({vendor['bankStatus']}); cancel it and create a new payment.",
        )
    return changed(
        call, None, "Sent to the bank.", status="completed", completedAt=w.clock.now(state)
    )


@_PAYABLES.write_tool(Reason, target=_outbound(("draft", "approved"), "be cancelled"))
def cancel_payment(call: w.Write[Reason]) -> dict[str, Any]:
    """Cancel a draft or approved payment.

    Draft / approved -> cancelled.
    """
    return changed(call, None, call.args.reason, status="cancelled")


class _Retry(w.Input):
    paymentDate = w.fields.date("When the bank should pay (default today)", default=None)


@_PAYABLES.write_tool(_Retry, target=_outbound(("failed",), "be retried"))
def retry_payment(call: w.Write[_Retry]) -> dict[str, Any]:
    """Re-issue a failed payment as a new draft for what its invoices still owe, to the vendor's
    current bank account (which must differ from the one that failed and be verified). The failed
    payment stays as history.

    Failed -> a new draft payment.
    """
    state, failed = call.state, call.record
    vendor = _payable_vendor(state, failed["vendorId"])
    if vendor["iban"] == failed["bankAccount"]:
        raise silo.tool_error(
            "invalid_state",
            f"{vendor['id']}'s bank account is still {vendor['iban']}, the one {failed['id']} "
            "bounced on; update the bank details first.",
        )
    items = [
        {"invoiceId": a["invoiceId"]}
        for a in failed["allocations"]
        if pay.open_to_pay(state, state["vendorInvoices"][a["invoiceId"]]) > 0
    ]
    if not items:
        raise silo.tool_error("invalid_state", f"Nothing {failed['id']} paid is still owed.")
    retry = {
        "vendorId": vendor["id"],
        "allocations": items,
        "actorId": call.actor["id"],
        "paymentDate": _or_today(state, call.args.paymentDate),
    }
    result = create_vendor_payment.fn(state, retry)
    result["created"]["retryOf"] = failed["id"]
    return dict(result)
