"""Customers: the customer master, credit limits, holds and what each customer owes."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.sales import customer_figures, exposure
from ..state import Record, State, money_text
from .common import ACTOR, acting_user, require_authority, require_permission

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
        "creditAvailable": w.to_money(customer["creditLimit"] - owed["total"]),
    }


def _customer(state: State, input: dict[str, Any]) -> Record:
    customer: Record = w.require_record(state, "customers", w.read_string(input, "customerId"))
    return customer


list_customers = w.list_tool(
    "list_customers",
    "List customers sorted by id with credit limit, exposure and available credit; filter by "
    "status or country. Paged.",
    "customers",
    filters={
        "status": w.enum("Only customers with this status.", STATUSES),
        "country": w.string("Only customers in this country, e.g. BE."),
    },
    view=customer_view,
)
search_customers = w.search_tool(
    "search_customers",
    "Find customers whose id, name or email contains the query. Paged.",
    "customers",
    ["name", "email"],
    view=customer_view,
)
get_customer = w.get_tool(
    "get_customer", "One customer.", "customers", "customerId", "CUS-001", view=customer_view
)


@w.define_tool(
    "get_customer_credit",
    "A customer's credit position: limit, exposure (outstanding issued invoices + shipped but "
    "unbilled goods + unshipped confirmed orders, all incl. VAT), available credit, and whether "
    "an extra amount would fit.",
    {
        "customerId": w.string("The customer."),
        "additionalAmount": w.money("An order amount incl. VAT to test against the limit."),
    },
    ["customerId"],
)
def get_customer_credit(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Credit limit versus exposure."""
    customer = _customer(state, input)
    extra = w.read_money(input, "additionalAmount", 0, allow_zero=True)
    owed = exposure(state, customer["id"])
    after = w.to_money(owed["total"] + extra)
    return {
        "customerId": customer["id"],
        "status": customer["status"],
        "creditLimit": customer["creditLimit"],
        "exposure": owed,
        "creditAvailable": w.to_money(customer["creditLimit"] - owed["total"]),
        "additionalAmount": extra,
        "exposureAfter": after,
        "withinLimit": after <= customer["creditLimit"],
    }


@w.define_tool(
    "get_customer_statement",
    "A customer's issued invoices with total, paid, outstanding and days overdue, and the "
    "outstanding and overdue totals.",
    {"customerId": w.string("The customer.")},
    ["customerId"],
)
def get_customer_statement(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Open items of one customer."""
    customer = _customer(state, input)
    rows = [
        {
            "invoiceId": i["id"],
            "issueDate": i["issueDate"],
            "dueDate": i["dueDate"],
            "status": i["status"],
            **customer_figures(state, i),
        }
        for i in w.sorted_by_id(state["customerInvoices"])
        if i["customerId"] == customer["id"] and i["status"] == "issued"
    ]
    return {
        "customerId": customer["id"],
        "invoices": rows,
        "outstanding": w.sum_money(r["outstanding"] for r in rows),
        "overdue": w.sum_money(r["outstanding"] for r in rows if r["isOverdue"]),
    }


@w.define_tool(
    "create_customer",
    "Register a customer (customer master roles). The credit limit starts at 0 until set.",
    {
        "name": w.string("Legal name."),
        "country": w.string("ISO country code.", pattern="^[A-Z]{2}$"),
        "email": w.string("Finance email."),
        "paymentTerms": w.enum("Payment terms.", TERMS),
        "discountPercent": w.number("Standard discount on list prices.", minimum=0, maximum=50),
        **ACTOR,
    },
    ["name", "country", "email", "paymentTerms", "actorId"],
)
def create_customer(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create an active customer with no credit."""
    actor = acting_user(state, input)
    require_permission(state, actor, "customerMaster")
    name = w.read_string(input, "name")
    clash = w.find_by(state, "customers", "name", name)
    if clash is not None:
        raise silo.tool_error("conflict", f"Customer {clash['id']} is already called {name}.")
    customer_id = w.next_id(state, "CUS")
    state["customers"][customer_id] = {
        "id": customer_id,
        "name": name,
        "country": w.read_string(input, "country"),
        "email": w.read_string(input, "email"),
        "creditLimit": 0,
        "paymentTerms": w.read_enum(input, "paymentTerms", TERMS),
        "discountPercent": w.read_number(input, "discountPercent", 0, minimum=0, maximum=50),
        "status": "active",
        "holdReason": None,
        "customerSince": w.today(state),
    }
    audit_id = w.audit(
        state, actor["id"], "create_customer", "customer", customer_id, f"Created customer {name}."
    )
    return {"created": state["customers"][customer_id], "auditId": audit_id}


@w.define_tool(
    "update_customer",
    "Change a customer's email, payment terms or standard discount (customer master roles).",
    {
        "customerId": w.string("The customer."),
        "email": w.string("New finance email."),
        "paymentTerms": w.enum("New payment terms.", TERMS),
        "discountPercent": w.number("New standard discount.", minimum=0, maximum=50),
        **ACTOR,
    },
    ["customerId", "actorId"],
)
def update_customer(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Update master data fields."""
    actor = acting_user(state, input)
    require_permission(state, actor, "customerMaster")
    customer = _customer(state, input)
    w.require_some(input, ["email", "paymentTerms", "discountPercent"])
    changes: list[w.Change] = []
    for field, value in {
        "email": w.read_string(input, "email", None),
        "paymentTerms": w.read_enum(input, "paymentTerms", TERMS, None),
        "discountPercent": w.read_number(input, "discountPercent", None, minimum=0, maximum=50),
    }.items():
        if value is not None:
            w.set_field(customer, field, value, changes)
    if not changes:
        raise silo.tool_error("conflict", f"Customer {customer['id']} already has these values.")
    audit_id = w.audit(
        state,
        actor["id"],
        "update_customer",
        "customer",
        customer["id"],
        f"Updated {', '.join(c['field'] for c in changes)}.",
        changes,
    )
    return {"updated": customer, "auditId": audit_id}


@w.define_tool(
    "set_credit_limit",
    "Set a customer's credit limit; the new limit must be within the actor's credit_limit "
    "approval limit.",
    {
        "customerId": w.string("The customer."),
        "creditLimit": w.money("The new limit (0 allowed)."),
        "reason": w.string("Why."),
        **ACTOR,
    },
    ["customerId", "creditLimit", "reason", "actorId"],
)
def set_credit_limit(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Change the credit limit."""
    actor = acting_user(state, input)
    customer = _customer(state, input)
    limit = w.read_money(input, "creditLimit", allow_zero=True)
    require_authority(state, actor, "credit_limit", limit, f"the new limit for {customer['id']}")
    changes: list[w.Change] = []
    if not w.set_field(customer, "creditLimit", limit, changes):
        raise silo.tool_error(
            "conflict", f"Customer {customer['id']}'s limit is already {money_text(limit)}."
        )
    audit_id = w.audit(
        state,
        actor["id"],
        "set_credit_limit",
        "customer",
        customer["id"],
        w.read_string(input, "reason"),
        changes,
    )
    return {"updated": customer_view(state, customer), "auditId": audit_id}


_ACTIONS = {
    "place_customer_on_hold": "be put on hold",
    "release_customer_hold": "be released from hold",
}


def _hold(state: State, input: dict[str, Any], wanted: str, to: str, action: str) -> Any:
    actor = acting_user(state, input)
    require_permission(state, actor, "receivables")
    customer = _customer(state, input)
    w.require_status(customer, "customers", (wanted,), _ACTIONS[action])
    changes: list[w.Change] = []
    w.set_field(customer, "status", to, changes)
    reason = w.read_string(input, "reason") if to == "on_hold" else None
    w.set_field(customer, "holdReason", reason, changes)
    audit_id = w.audit(
        state,
        actor["id"],
        action,
        "customer",
        customer["id"],
        f"Customer {customer['id']} is now {to}.",
        changes,
    )
    return {"updated": customer_view(state, customer), "auditId": audit_id}


@w.define_tool(
    "place_customer_on_hold",
    "Put an active customer on credit hold (receivables roles): no order can be confirmed, "
    "reserved or shipped for it until released.",
    {"customerId": w.string("The customer."), "reason": w.string("Why."), **ACTOR},
    ["customerId", "reason", "actorId"],
)
def place_customer_on_hold(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Active -> on_hold."""
    result: dict[str, Any] = _hold(state, input, "active", "on_hold", "place_customer_on_hold")
    return result


@w.define_tool(
    "release_customer_hold",
    "Release a customer's credit hold (receivables roles).",
    {"customerId": w.string("The customer."), "reason": w.string("Why."), **ACTOR},
    ["customerId", "reason", "actorId"],
)
def release_customer_hold(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """on_hold -> active."""
    result: dict[str, Any] = _hold(state, input, "on_hold", "active", "release_customer_hold")
    return result
