"""Customers: the customer master, credit limits, holds and what each customer owes."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.dues import owed_totals
from ..domain.sales import customer_figures, exposure
from ..state import Record, State, money_text
from .common import REASON, actor, in_status, named, require_authority, target, update_fields

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


@w.define_tool(
    {
        "customerId": w.schema.string("The customer."),
        "additionalAmount": w.schema.money("An order amount incl. VAT to test against the limit."),
    },
    ["customerId"],
)
def get_customer_credit(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """A customer's credit position: limit, exposure (outstanding issued invoices + shipped but
    unbilled goods + unshipped confirmed orders, all incl. VAT), available credit, and whether an
    extra amount would fit.
    """
    customer = named(state, "customers", input, "customerId")
    extra = w.fields.read_money(input, "additionalAmount", 0, allow_zero=True)
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


@w.define_tool({"customerId": w.schema.string("The customer.")}, ["customerId"])
def get_customer_statement(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """A customer's issued invoices with total, paid, outstanding and days overdue, and the
    outstanding and overdue totals.
    """
    customer = named(state, "customers", input, "customerId")
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


@actor("customerMaster").write_tool(
    {
        "name": w.schema.string("Legal name."),
        "country": w.schema.string("ISO country code.", pattern="^[A-Z]{2}$"),
        "email": w.schema.string("Finance email."),
        "paymentTerms": w.schema.enum("Payment terms.", TERMS),
        "discountPercent": w.schema.number(
            "Standard discount on list prices.", minimum=0, maximum=50
        ),
    },
    ["name", "country", "email", "paymentTerms"],
)
def create_customer(call: w.Write) -> dict[str, Any]:
    """Register a customer (customer master roles). The credit limit starts at 0 until set."""
    state, input = call.state, call.input
    name = w.fields.read_string(input, "name")
    clash = w.grade.find_by(state, "customers", "name", name)
    if clash is not None:
        raise silo.tool_error("conflict", f"Customer {clash['id']} is already called {name}.")
    customer: Record = {
        "id": w.records.next_id(state, "CUS"),
        "name": name,
        "country": w.fields.read_string(input, "country"),
        "email": w.fields.read_string(input, "email"),
        "creditLimit": 0,
        "paymentTerms": w.fields.read_enum(input, "paymentTerms", TERMS),
        "discountPercent": w.fields.read_number(input, "discountPercent", 0, minimum=0, maximum=50),
        "status": "active",
        "holdReason": None,
        "customerSince": w.clock.today(state),
    }
    audit_id = call.add(_CUSTOMER, customer, f"Created customer {name}.")
    return {"created": customer, "auditId": audit_id}


@actor("customerMaster").write_tool(
    {
        "email": w.schema.string("New finance email."),
        "paymentTerms": w.schema.enum("New payment terms.", TERMS),
        "discountPercent": w.schema.number("New standard discount.", minimum=0, maximum=50),
    },
    target=_CUSTOMER,
)
def update_customer(call: w.Write) -> dict[str, Any]:
    """Change a customer's email, payment terms or standard discount (customer master roles)."""
    input, customer = call.input, call.record
    w.fields.require_some(input, ["email", "paymentTerms", "discountPercent"])
    values = {
        "email": w.fields.read_string(input, "email", None),
        "paymentTerms": w.fields.read_enum(input, "paymentTerms", TERMS, None),
        "discountPercent": w.fields.read_number(
            input, "discountPercent", None, minimum=0, maximum=50
        ),
    }
    audit_id = update_fields(call, values, "Customer")
    return {"updated": customer, "auditId": audit_id}


@actor().write_tool(
    {
        "creditLimit": w.schema.money("The new limit (0 allowed)."),
        "reason": w.schema.string("Why."),
    },
    ["creditLimit", "reason"],
    target=_CUSTOMER,
)
def set_credit_limit(call: w.Write) -> dict[str, Any]:
    """Set a customer's credit limit; the new limit must be within the actor's credit_limit approval
    limit.
    """
    state, input, customer = call.state, call.input, call.record
    limit = w.fields.read_money(input, "creditLimit", allow_zero=True)
    require_authority(
        state, call.actor, "credit_limit", limit, f"the new limit for {customer['id']}"
    )
    if not call.set("creditLimit", limit):
        raise silo.tool_error(
            "conflict", f"Customer {customer['id']}'s limit is already {money_text(limit)}."
        )
    audit_id = call.audit(w.fields.read_string(input, "reason"))
    return {"updated": customer_view(state, customer), "auditId": audit_id}


def _hold(call: w.Write, to: str) -> Any:
    customer = call.record
    call.set("status", to)
    reason = w.fields.read_string(call.input, "reason") if to == "on_hold" else None
    call.set("holdReason", reason)
    audit_id = call.audit(f"Customer {customer['id']} is now {to}.")
    return {"updated": customer_view(call.state, customer), "auditId": audit_id}


_RECEIVABLES = actor("receivables")


@_RECEIVABLES.write_tool(
    REASON,
    ["reason"],
    target=in_status(_CUSTOMER, ("active",), "be put on hold"),
)
def place_customer_on_hold(call: w.Write) -> dict[str, Any]:
    """Put an active customer on credit hold (receivables roles): no order can be confirmed,
    reserved or shipped for it until released.

    Active -> on_hold.
    """
    result: dict[str, Any] = _hold(call, "on_hold")
    return result


@_RECEIVABLES.write_tool(
    REASON,
    ["reason"],
    target=in_status(_CUSTOMER, ("on_hold",), "be released from hold"),
)
def release_customer_hold(call: w.Write) -> dict[str, Any]:
    """Release a customer's credit hold (receivables roles).

    on_hold -> active.
    """
    result: dict[str, Any] = _hold(call, "active")
    return result
