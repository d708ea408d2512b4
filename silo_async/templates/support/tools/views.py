"""Read projections: where derived values become visible to the agent.

The agent never sees the state, and never sees what only the customer holds: a customer's
security PIN, the codes texted to their phone, and the phone itself stay out of every view.
"""

from __future__ import annotations

from typing import Any

from silo_async.world.clock import today

from ..state import (
    Bill,
    Card,
    Case,
    Customer,
    Incident,
    Line,
    LineAddon,
    Payment,
    State,
    active_hold,
    addon_end,
    bill_balance,
    bill_total,
    card_expired,
    credits_on,
    current_plan,
    full_name,
    is_overdue,
    is_verified,
    lines_of,
    overdue_bills,
    scheduled_plan,
)

__all__ = [
    "bill_view",
    "card_view",
    "case_view",
    "customer_view",
    "incident_view",
    "line_addon_view",
    "line_view",
    "payment_view",
]


def customer_view(state: State, customer: Customer) -> dict[str, Any]:
    """A customer without their security PIN, with their lines and what they owe overdue."""
    view = {k: v for k, v in customer.items() if k != "securityPin"}
    overdue = overdue_bills(state, customer["id"])
    return {
        **view,
        "name": full_name(customer),
        "lineIds": [line["id"] for line in lines_of(state, customer["id"])],
        "overdueBillIds": [b["id"] for b in overdue],
        "overdueAmount": round(sum(bill_balance(state, b) for b in overdue), 2),
    }


def line_view(state: State, line: Line) -> dict[str, Any]:
    """A line with its holder's name, the plan in force, a scheduled change and its hold."""
    plan = current_plan(state, line)
    scheduled = scheduled_plan(state, line)
    hold = active_hold(state, line["id"])
    sim = state["sims"][line["simId"]]
    return {
        **line,
        "customerName": full_name(state["customers"][line["customerId"]]),
        "iccid": sim["iccid"],
        "planId": plan["id"],
        "planName": plan["name"],
        "monthlyFee": plan["monthlyFee"],
        "dataAllowanceGb": plan["dataGb"],
        "scheduledPlanChange": None
        if scheduled is None
        else {
            "planId": scheduled["planId"],
            "planName": state["plans"][scheduled["planId"]]["name"],
            "from": scheduled["start"],
        },
        "hold": None if hold is None else {k: hold[k] for k in ("id", "team", "reason")},
    }


def bill_view(state: State, bill: Bill) -> dict[str, Any]:
    """A bill with its total, credits, payments, balance and status."""
    balance = bill_balance(state, bill)
    if balance <= 0:
        status = "paid"
    elif is_overdue(state, bill):
        status = "overdue"
    else:
        status = "unpaid"
    payments = [p for p in state["payments"].values() if p["billId"] == bill["id"]]
    return {
        **bill,
        "total": bill_total(bill),
        "credits": credits_on(state, bill["id"]),
        "payments": sorted(payments, key=lambda p: p["id"]),
        "balance": balance,
        "status": status,
    }


def card_view(state: State, card: Card) -> dict[str, Any]:
    """A card on file (only its last four digits) and whether it has expired."""
    return {**card, "expired": card_expired(state, card)}


def payment_view(state: State, payment: Payment) -> dict[str, Any]:
    """A payment with the card it is taken from."""
    card = state["cards"][payment["cardId"]]
    return {**payment, "card": f"{card['brand']} ending {card['last4']}"}


def case_view(state: State, case: Case) -> dict[str, Any]:
    """A case, with whether its caller is verified."""
    return {**case, "verified": is_verified(case)}


def incident_view(state: State, incident: Incident) -> dict[str, Any]:
    """An incident with how many lines wait for its update (not whose they are)."""
    view = {k: v for k, v in incident.items() if k != "subscriberLineIds"}
    return {**view, "subscribers": len(incident["subscriberLineIds"])}


def line_addon_view(state: State, item: LineAddon) -> dict[str, Any]:
    """An add-on bought for a line, with its name, last day and whether it is in force."""
    addon = state["addons"][item["addonId"]]
    end = addon_end(state, item) if addon["days"] else None
    return {
        **item,
        "name": addon["name"],
        "kind": addon["kind"],
        "zone": addon["zone"],
        "endDate": end,
        "inForce": end is not None and item["startDate"] <= today(state) <= end,
    }
