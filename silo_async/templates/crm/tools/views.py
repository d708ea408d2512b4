"""Read projections: where derived values become visible to the agent.

The agent never sees the state. These views copy the stored facts and add what the state helpers
derive (names, probability, weighted amount, days in stage, stale and past-due flags, ages).
"""

from __future__ import annotations

from typing import Any

from ..state import (
    Account,
    Activity,
    Contact,
    Lead,
    Opportunity,
    State,
    User,
    current_year,
    days_in_stage,
    days_since_contact,
    full_name,
    is_activity_open,
    is_activity_overdue,
    is_past_due,
    is_stale,
    lead_age_days,
    open_opportunities,
    probability_of,
    quota_attainment,
    stage_entered_date,
    total_amount,
    total_weighted,
    weighted_amount,
    won_amount,
)

__all__ = [
    "account_view",
    "activity_view",
    "contact_view",
    "lead_view",
    "opportunity_view",
    "user_name",
    "user_view",
]


def user_name(state: State, user_id: str | None) -> str | None:
    """Display name of a user id (None stays None)."""
    if user_id is None:
        return None
    user = state["users"].get(user_id)
    return full_name(user) if user else None


def user_view(state: State, user: User, *, with_performance: bool = False) -> dict[str, Any]:
    """A user, plus pipeline and this year's attainment when asked."""
    view: dict[str, Any] = {**user, "name": full_name(user)}
    if with_performance:
        year = current_year(state)
        opps = open_opportunities(state, user["id"])
        view["openDealCount"] = len(opps)
        view["openPipelineAmount"] = total_amount(opps)
        view["openPipelineWeighted"] = total_weighted(state, opps)
        view["closedWonThisYear"] = won_amount(state, user["id"], year)
        view["quotaAttainmentPercent"] = quota_attainment(state, user["id"], year)
    return view


def account_view(state: State, account: Account) -> dict[str, Any]:
    """An account with its owner's name and whether that owner is still active."""
    owner = state["users"].get(account["ownerId"])
    return {
        **account,
        "ownerName": user_name(state, account["ownerId"]),
        "ownerActive": bool(owner and owner["active"]),
    }


def contact_view(state: State, contact: Contact) -> dict[str, Any]:
    """A contact with its account's name."""
    account = state["accounts"].get(contact["accountId"] or "")
    return {
        **contact,
        "name": full_name(contact),
        "accountName": account["name"] if account else None,
    }


def lead_view(state: State, lead: Lead) -> dict[str, Any]:
    """A lead with its owner's name, age and days since last contact."""
    return {
        **lead,
        "name": full_name(lead),
        "ownerName": user_name(state, lead["ownerId"]),
        "ageDays": lead_age_days(state, lead),
        "daysSinceContact": days_since_contact(state, lead),
    }


def opportunity_view(state: State, opp: Opportunity) -> dict[str, Any]:
    """A deal with stage name, probability, weighted amount, days in stage and flags."""
    account = state["accounts"].get(opp["accountId"])
    return {
        **opp,
        "accountName": account["name"] if account else None,
        "ownerName": user_name(state, opp["ownerId"]),
        "stageName": state["stages"][opp["stageId"]]["name"],
        "stageEnteredDate": stage_entered_date(opp),
        "probability": probability_of(state, opp),
        "weightedAmount": weighted_amount(state, opp),
        "daysInStage": days_in_stage(state, opp),
        "isStale": is_stale(state, opp),
        "isPastDue": is_past_due(state, opp),
    }


def activity_view(state: State, activity: Activity) -> dict[str, Any]:
    """An activity with its owner's name and open/overdue flags."""
    return {
        **activity,
        "ownerName": user_name(state, activity["ownerId"]),
        "isOpen": is_activity_open(activity),
        "isOverdue": is_activity_overdue(state, activity),
    }
