"""Customer invoices and collections: billing shipments, reminders, write-offs, ageing.

An invoice is created as a draft from shipments of one order (at the order's prices), then
issued: issuing dates it today and sets the due date from the customer's terms. Paid and
outstanding come from receipts applied to it.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import sales as sal
from ..domain.dues import Bucket, ageing
from ..state import Record, State, terms_days
from .common import Reason, actor, change, changed, in_status, require_authority, target

__all__ = [
    "create_customer_invoice",
    "get_ar_aging",
    "get_customer_invoice",
    "invoice_view",
    "issue_customer_invoice",
    "list_customer_invoices",
    "list_overdue_customer_invoices",
    "search_customer_invoices",
    "send_payment_reminder",
    "void_customer_invoice",
    "write_off_customer_invoice",
]

STATUSES = ("draft", "issued", "void", "written_off")
_BUCKETS: tuple[Bucket, ...] = (
    ("current", 0, 0),
    ("1-30", 1, 30),
    ("31-60", 31, 60),
    ("61-90", 61, 90),
    ("90+", 91, 10**6),
)


def invoice_view(state: State, invoice: Any) -> dict[str, Any]:
    """A customer invoice with its figures and the customer's name."""
    return {
        **invoice,
        **sal.customer_figures(state, invoice),
        "customerName": state["customers"][invoice["customerId"]]["name"],
    }


CUSTOMER_INVOICES = w.Collection("customerInvoices", "invoiceId", "INV-8003", view=invoice_view)
list_customer_invoices = CUSTOMER_INVOICES.list_tool(
    "List customer invoices sorted by id with total, paid, outstanding and days overdue; filter "
    "by status or customer, or only overdue ones. Paged.",
    filters={
        "status": w.schema.enum("Only invoices with this status.", STATUSES),
        "customerId": w.schema.string("Only this customer's invoices."),
    },
    references={"customerId": "customers"},
    extra={"overdueOnly": w.schema.boolean("Only issued invoices past due with money owed.")},
    where=lambda state, i, input: not input.get("overdueOnly") or sal.is_overdue(state, i),
)
search_customer_invoices = CUSTOMER_INVOICES.search_tool(
    "Find customer invoices whose id, customer name or sales order contains the query. Paged.",
    lambda state, i: [state["customers"][i["customerId"]]["name"], i["salesOrderId"]],
)
get_customer_invoice = CUSTOMER_INVOICES.get_tool(
    "One customer invoice.", name="get_customer_invoice"
)


def _invoice(description: str) -> w.Target:
    return target("customerInvoices", "invoiceId", description, "customerInvoice")


_INVOICE = _invoice("The invoice.")
_RECEIVABLES = actor("receivables")


def _shipments(state: State, ids: list[str]) -> tuple[Record, list[Record]]:
    shipments = [w.records.require_record(state, "shipments", i) for i in ids]
    orders = {s["salesOrderId"] for s in shipments}
    if len(orders) != 1:
        raise silo.tool_error(
            "invalid_input",
            f"One invoice bills one order; these shipments are on {sorted(orders)}.",
        )
    billed = sal.invoiced_shipment_ids(state) & set(ids)
    if billed:
        raise silo.tool_error("conflict", f"Already invoiced: {', '.join(sorted(billed))}.")
    return state["salesOrders"][orders.pop()], shipments


class _Billing(w.Input):
    shipmentIds = w.fields.strings("Shipments to bill.", "A shipment id.", unique=True)


@_RECEIVABLES.write_tool(_Billing)
def create_customer_invoice(call: w.Write[_Billing]) -> dict[str, Any]:
    """Create a draft invoice billing shipments of one sales order (not yet invoiced) at the order's
    prices. Receivables roles. Issue it with issue_customer_invoice.
    """
    state = call.state
    ids = call.args.shipmentIds
    order, shipments = _shipments(state, ids)
    quantities: dict[int, int] = {}
    for shipment in shipments:
        for line in shipment["lines"]:
            quantities[line["lineNo"]] = quantities.get(line["lineNo"], 0) + line["quantity"]
    lines = [
        {
            "lineNo": i + 1,
            "productId": ln["productId"],
            "quantity": quantities[ln["lineNo"]],
            "unitPrice": ln["unitPrice"],
        }
        for i, ln in enumerate(x for x in order["lines"] if x["lineNo"] in quantities)
    ]
    invoice: Record = {
        "id": w.records.next_id(state, "INV", width=4),
        "customerId": order["customerId"],
        "salesOrderId": order["id"],
        "shipmentIds": ids,
        "issueDate": None,
        "dueDate": None,
        "status": "draft",
        "lines": lines,
        "reminders": [],
        "writtenOffAt": None,
        "writeOffReason": None,
    }
    audit_id = call.add(_INVOICE, invoice, f"Draft for {', '.join(ids)}.")
    return {"created": invoice_view(state, invoice), "auditId": audit_id}


@_RECEIVABLES.write_tool(target=in_status(_INVOICE, ("draft",), "be issued"))
def issue_customer_invoice(call: w.Write) -> dict[str, Any]:
    """Issue a draft invoice: dated today, due after the customer's payment terms.

    Draft -> issued.
    """
    state, invoice = call.state, call.record
    customer = state["customers"][invoice["customerId"]]
    call.set("status", "issued")
    call.set("issueDate", w.clock.today(state))
    call.set(
        "dueDate",
        w.clock.add_days(w.clock.today(state), terms_days(state, customer["paymentTerms"])),
    )
    audit_id = call.audit("Issued.")
    return {"updated": invoice_view(state, invoice), "auditId": audit_id}


@_RECEIVABLES.write_tool(Reason, target=in_status(_INVOICE, ("draft", "issued"), "be voided"))
def void_customer_invoice(call: w.Write[Reason]) -> dict[str, Any]:
    """Void a draft or an issued invoice nothing has been paid on; its shipments can be billed
    again.

    Draft / issued -> void.
    """
    state, invoice = call.state, call.record
    if sal.customer_paid(state, invoice["id"]) > 0:
        raise silo.tool_error("invalid_state", f"Payments are applied to {invoice['id']}.")
    return changed(call, invoice_view, call.args.reason, status="void")


@actor().write_tool(Reason, target=in_status(_INVOICE, ("issued",), "be written off"))
def write_off_customer_invoice(call: w.Write[Reason]) -> dict[str, Any]:
    """Write off what is still outstanding on an issued invoice, within the actor's write-off limit.

    Issued -> written_off.
    """
    state, invoice = call.state, call.record
    owed = sal.customer_outstanding(state, invoice)
    require_authority(state, call.actor, "write_off", owed, invoice["id"])
    reason = call.args.reason
    audit_id = change(
        call,
        reason,
        status="written_off",
        writtenOffAt=w.clock.now(state),
        writeOffReason=reason,
    )
    return {"updated": invoice_view(state, invoice), "auditId": audit_id}


@_RECEIVABLES.write_tool(target=_invoice("The overdue invoice."))
def send_payment_reminder(call: w.Write) -> dict[str, Any]:
    """Send the next payment reminder for an overdue invoice (levels 1 to the policy's maximum)."""
    state, invoice = call.state, call.record
    if not sal.is_overdue(state, invoice):
        raise silo.tool_error(
            "invalid_state",
            f"{invoice['id']} is not overdue (status {invoice['status']}, due "
            f"{invoice['dueDate']}, outstanding {sal.customer_outstanding(state, invoice)}).",
        )
    level = len(invoice["reminders"]) + 1
    if level > state["policies"]["maxReminders"]:
        raise silo.tool_error(
            "invalid_state",
            f"{invoice['id']} already had its final reminder; escalate (hold the customer).",
        )
    reminder = {"sentAt": w.clock.now(state), "level": level, "sentBy": call.actor["id"]}
    invoice["reminders"].append(reminder)
    audit_id = call.audit(f"Reminder level {level}.")
    return {"updated": invoice_view(state, invoice), "level": level, "auditId": audit_id}


class _Overdue(w.Input):
    minDaysOverdue = w.fields.integer(
        "Only invoices at least this many days overdue.", minimum=1, default=1
    )


@w.define_tool(_Overdue)
def list_overdue_customer_invoices(state: State, args: _Overdue) -> dict[str, Any]:
    """Issued invoices past due with money owed, sorted by id, with days overdue and reminders sent;
    optionally only those at least some days overdue.
    """
    least = args.minDaysOverdue
    rows = [
        invoice_view(state, i)
        for i in w.tools.sorted_by_id(state["customerInvoices"])
        if sal.is_overdue(state, i) and sal.days_overdue(state, i) >= least
    ]
    return {
        "results": rows,
        "count": len(rows),
        "outstanding": w.amounts.sum_money(r["outstanding"] for r in rows),
    }


@w.define_tool()
def get_ar_aging(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Receivables ageing: outstanding of issued invoices per customer in buckets by days past due
    (current, 1-30, 31-60, 61-90, 90+), with totals.
    """
    owed = (
        (i["customerId"], sal.days_overdue(state, i), sal.customer_outstanding(state, i))
        for i in w.tools.sorted_by_id(state["customerInvoices"])
    )
    rows = ageing(owed, _BUCKETS, "customerId")
    totals = {name: w.amounts.sum_money(r[name] for r in rows) for name, _, _ in _BUCKETS}
    return {
        "asOf": w.clock.today(state),
        "customers": rows,
        "totals": {**totals, "total": w.amounts.sum_money(totals.values())},
    }
