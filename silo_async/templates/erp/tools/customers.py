"""Customers: the customer master, credit limits, holds and what each customer owes."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.dues import owed_totals
from ..domain.sales import customer_figures, exposure
from ..state import Record, State, money_text
from .common import Reason, actor, in_status, named, require_authority, target, update_fields

__all__ = [
    "create_customer",
    "customer_view",
    "get_customer",
    "get_customer_credit",
    "get_customer_statement",
    "list_customers",
    "place_customer_on_hold",
    "release_customer_hold",
    "search_customers",
    "set_credit_limit",
    "update_customer",
]

STATUSES = ("active", "on_hold", "blocked")
TERMS = ("NET_14", "NET_30", "NET_45", "NET_60")


def customer_view(state: State, customer: Any) -> dict[str, Any]:
    """A customer with its credit exposure and what is still available under the limit."""
    owed = exposure(state, customer["id"])
    return {
        **customer,
        "exposure": owed["total"],
        "creditAvailable": w.amounts.to_money(customer["creditLimit"] - owed["total"]),
    }


CUSTOMERS = w.Collection("customers", "customerId", "CUS-001", view=customer_view)
list_customers = CUSTOMERS.list_tool(
    "List customers sorted by id with credit limit, exposure and available credit; filter by "
    "status or country. Paged.",
    filters={
        "status": w.schema.enum("Only customers with this status.", STATUSES),
        "country": w.schema.string("Only customers in this country, e.g. BE."),
    },
)
search_customers = CUSTOMERS.search_tool(
    "Find customers whose id, name or email contains the query. Paged.", ["name", "email"]
)
get_customer = CUSTOMERS.get_tool("One customer.")


class _Customer(w.Input):
    customerId = w.fields.string("The customer.")


class _Credit(_Customer):
    additionalAmount = w.fields.money(
        "An order amount incl. VAT to test against the limit.", default=0, allow_zero=True
    )


@w.define_tool(_Credit)
def get_customer_credit(state: State, args: _Credit) -> dict[str, Any]:
    """A customer's credit position: limit, exposure (outstanding issued invoices + shipped but
    unbilled goods + unshipped confirmed orders, all incl. VAT), available credit, and whether an
    extra amount would fit.
    """
    customer = named(state, "customers", args.customerId)
    extra = args.additionalAmount
    owed = exposure(state, customer["id"])
    after = w.amounts.to_money(owed["total"] + extra)
    return {
        "customerId": customer["id"],
        "status": customer["status"],
        "creditLimit": customer["creditLimit"],
        "exposure": owed,
        "creditAvailable": w.amounts.to_money(customer["creditLimit"] - owed["total"]),
        "additionalAmount": extra,
        "exposureAfter": after,
        "withinLimit": after <= customer["creditLimit"],
    }


@w.define_tool(_Customer)
def get_customer_statement(state: State, args: _Customer) -> dict[str, Any]:
    """A customer's issued invoices with total, paid, outstanding and days overdue, and the
    outstanding and overdue totals.
    """
    customer = named(state, "customers", args.customerId)
    rows = [
        {
            "invoiceId": i["id"],
            "issueDate": i["issueDate"],
            "dueDate": i["dueDate"],
            "status": i["status"],
            **customer_figures(state, i),
        }
        for i in w.tools.sorted_by_id(state["customerInvoices"])
        if i["customerId"] == customer["id"] and i["status"] == "issued"
    ]
    return {
        "customerId": customer["id"],
        "invoices": rows,
        **owed_totals(rows),
    }


_CUSTOMER = target("customers", "customerId", "The customer.", "customer")


class _NewCustomer(w.Input):
    name = w.fields.string("Legal name.")
    country = w.fields.string("ISO country code.", pattern="^[A-Z]{2}$")
    email = w.fields.string("Finance email.")
    paymentTerms = w.fields.enum("Payment terms.", TERMS)
    discountPercent = w.fields.number(
        "Standard discount on list prices.", minimum=0, maximum=50, default=0
    )


@actor("customerMaster").write_tool(_NewCustomer)
def create_customer(call: w.Write[_NewCustomer]) -> dict[str, Any]:
    """Register a customer (customer master roles). The credit limit starts at 0 until set."""
    state, args = call.state, call.args
    name = args.name
    clash = w.grade.find_by(state, "customers", "name", name)
    if clash is not None:
        raise silo.tool_error("conflict", f"Customer {clash['id']} is already called {name}.")
    customer: Record = {
        "id": w.records.next_id(state, "CUS"),
        "name": name,
        "country": args.country,
        "email": args.email,
        "creditLimit": 0,
        "paymentTerms": args.paymentTerms,
        "discountPercent": args.discountPercent,
        "status": "active",
        "holdReason": None,
        "customerSince": w.clock.today(state),
    }
    audit_id = call.add(_CUSTOMER, customer, f"Created customer {name}.")
    return {"created": customer, "auditId": audit_id}


class _CustomerChanges(w.Input):
    email = w.fields.string("New finance email.", default=None)
    paymentTerms = w.fields.enum("New payment terms.", TERMS, default=None)
    discountPercent = w.fields.number("New standard discount.", minimum=0, maximum=50, default=None)


@actor("customerMaster").write_tool(_CustomerChanges, target=_CUSTOMER)
def update_customer(call: w.Write[_CustomerChanges]) -> dict[str, Any]:
    """Change a customer's email, payment terms or standard discount (customer master roles)."""
    args, customer = call.args, call.record
    w.fields.require_some(args, list(w.fields.fields_of(_CustomerChanges)))
    values = {
        "email": args.email,
        "paymentTerms": args.paymentTerms,
        "discountPercent": args.discountPercent,
    }
    audit_id = update_fields(call, values, "Customer")
    return {"updated": customer, "auditId": audit_id}


class _CreditLimit(w.Input):
    creditLimit = w.fields.money("The new limit (0 allowed).", allow_zero=True)
    reason = w.fields.string("Why.")


@actor().write_tool(_CreditLimit, target=_CUSTOMER)
def set_credit_limit(call: w.Write[_CreditLimit]) -> dict[str, Any]:
    """Set a customer's credit limit; the new limit must be within the actor's credit_limit approval
    limit.
    """
    state, args, customer = call.state, call.args, call.record
    limit = args.creditLimit
    require_authority(
        state, call.actor, "credit_limit", limit, f"the new limit for {customer['id']}"
    )
    if not call.set("creditLimit", limit):
        raise silo.tool_error(
            "conflict", f"Customer {customer['id']}'s limit is already {money_text(limit)}."
        )
    audit_id = call.audit(args.reason)
    return {"updated": customer_view(state, customer), "auditId": audit_id}


def _hold(call: w.Write[Reason], to: str) -> Any:
    customer = call.record
    call.set("status", to)
    reason = call.args.reason if to == "on_hold" else None
    call.set("holdReason", reason)
    audit_id = call.audit(f"Customer {customer['id']} is now {to}.")
    return {"updated": customer_view(call.state, customer), "auditId": audit_id}


_RECEIVABLES = actor("receivables")


@_RECEIVABLES.write_tool(Reason, target=in_status(_CUSTOMER, ("active",), "be put on hold"))
def place_customer_on_hold(call: w.Write[Reason]) -> dict[str, Any]:
    """Put an active customer on credit hold (receivables roles): no order can be confirmed,
    reserved or shipped for it until released.

    Active -> on_hold.
    """
    result: dict[str, Any] = _hold(call, "on_hold")
    return result


@_RECEIVABLES.write_tool(Reason, target=in_status(_CUSTOMER, ("on_hold",), "be released from hold"))
def release_customer_hold(call: w.Write[Reason]) -> dict[str, Any]:
    """Release a customer's credit hold (receivables roles).

    on_hold -> active.
    """
    result: dict[str, Any] = _hold(call, "active")
    return result
