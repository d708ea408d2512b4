"""Customer receipts: money in, and applying it to the invoices it pays (cash application)."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.sales import customer_outstanding, unallocated
from ..state import Record, State, money_text
from .common import actor, named, target

__all__ = ["allocate_receipt", "list_unallocated_receipts", "record_customer_receipt"]


class _Allocation(w.Input):
    invoiceId = w.fields.string("An issued invoice of the customer.")
    amount = w.fields.money(
        "Amount (default: the invoice's outstanding, up to what is unapplied).", default=None
    )


_ALLOCATIONS = "Invoices this money pays."


def _apply(state: State, receipt: Record, items: list[_Allocation]) -> list[dict[str, Any]]:
    free = unallocated(receipt)
    applied: list[dict[str, Any]] = []
    for item in items:
        invoice = w.records.require_record(state, "customerInvoices", item.invoiceId)
        if invoice["customerId"] != receipt["customerId"]:
            raise silo.tool_error("invalid_input", f"{invoice['id']} is {invoice['customerId']}'s.")
        owed = customer_outstanding(state, invoice)
        owed -= w.amounts.sum_money(a["amount"] for a in applied if a["invoiceId"] == invoice["id"])
        if owed <= 0:
            raise silo.tool_error("invalid_state", f"{invoice['id']} has nothing outstanding.")
        amount = w.fields.read(item, "amount", default=min(owed, free), maximum=owed)
        if amount > free:
            raise silo.tool_error(
                "limit_exceeded",
                f"Only {money_text(free)} of {receipt['id']} is left to apply; {invoice['id']} "
                f"would take {money_text(amount)}.",
            )
        free = w.amounts.to_money(free - amount)
        applied.append({"invoiceId": invoice["id"], "amount": amount})
    return applied


_RECEIVABLES = actor("receivables")


def _open_receipt(state: State, receipt: Record) -> None:
    if receipt["direction"] != "inbound":
        raise silo.tool_error("invalid_input", f"{receipt['id']} is a payment to a vendor.")
    if unallocated(receipt) <= 0:
        raise silo.tool_error("invalid_state", f"{receipt['id']} is fully applied.")


_RECEIPT = target("payments", "paymentId", "The receipt.", "payment", _open_receipt)


class _Receipt(w.Input):
    customerId = w.fields.string("The customer.")
    amount = w.fields.money("Amount received.")
    receivedOn = w.fields.date("Value date")
    reference = w.fields.string("The bank reference / remittance text.")
    allocations: w.fields.Field[list[_Allocation]] = w.fields.objects(
        _ALLOCATIONS, _Allocation, default=[]
    )


@_RECEIVABLES.write_tool(_Receipt)
def record_customer_receipt(call: w.Write[_Receipt]) -> dict[str, Any]:
    """Record money received from a customer (receivables roles), optionally applying it to invoices
    at once; anything not applied stays unallocated.
    """
    state, args = call.state, call.args
    customer = named(state, "customers", args.customerId)
    receipt = {
        "id": "",
        "direction": "inbound",
        "vendorId": None,
        "customerId": customer["id"],
        "amount": args.amount,
        "allocations": [],
        "method": "bank_transfer",
        "bankAccount": None,
        "reference": args.reference,
        "status": "completed",
        "paymentDate": args.receivedOn,
        "createdBy": call.actor["id"],
        "approvedBy": None,
        "completedAt": w.clock.now(state),
        "failureReason": None,
        "retryOf": None,
    }
    receipt["allocations"] = _apply(state, receipt, args.allocations)
    receipt["id"] = w.records.next_id(state, "PAY", width=4)
    audit_id = call.add(
        _RECEIPT, receipt, f"{money_text(receipt['amount'])} from {customer['id']}."
    )
    return {"created": {**receipt, "unallocated": unallocated(receipt)}, "auditId": audit_id}


class _Allocations(w.Input):
    allocations = w.fields.objects(_ALLOCATIONS, _Allocation)


@_RECEIVABLES.write_tool(_Allocations, target=_RECEIPT)
def allocate_receipt(call: w.Write[_Allocations]) -> dict[str, Any]:
    """Apply the unallocated part of a customer receipt to that customer's issued invoices."""
    receipt = call.record
    added = _apply(call.state, receipt, call.args.allocations)
    receipt["allocations"] = [*receipt["allocations"], *added]
    audit_id = call.audit(", ".join(f"{a['invoiceId']} {a['amount']}" for a in added))
    return {"updated": {**receipt, "unallocated": unallocated(receipt)}, "auditId": audit_id}


class _ByCustomer(w.Input):
    customerId = w.fields.string("Only this customer's receipts.", default=None, raw=True)


@w.define_tool(_ByCustomer)
def list_unallocated_receipts(state: State, args: _ByCustomer) -> dict[str, Any]:
    """Customer receipts with money not yet applied to invoices, with their reference text."""
    w.records.check_references(state, args, {"customerId": "customers"})
    rows = [
        {**p, "unallocated": unallocated(p)}
        for p in w.tools.sorted_by_id(state["payments"])
        if p["direction"] == "inbound"
        and unallocated(p) > 0
        and args.customerId in (None, p["customerId"])
    ]
    return {"results": rows, "count": len(rows)}
