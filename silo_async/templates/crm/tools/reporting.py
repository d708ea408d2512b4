"""Reports: read-only, always recomputed from the facts and the simulated clock."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import (
    State,
    current_year,
    full_name,
    open_opportunities,
    open_stages,
    quota_attainment,
    stale_opportunities,
    stale_threshold,
    total_amount,
    total_weighted,
    won_amount,
)
from .helpers import FILTERS
from .views import opportunity_view, user_name

__all__ = ["forecast_report", "pipeline_summary", "rep_performance", "stale_deals_report"]


def _owner_filter(state: State, input: dict[str, Any]) -> str | None:
    w.records.check_references(state, input, FILTERS)
    owner_id: str | None = input.get("ownerId")
    return owner_id


@w.define_tool({"ownerId": w.schema.string("Only deals owned by this user id.")})
def pipeline_summary(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Open pipeline by stage: deal count, amount and probability-weighted amount, plus totals."""
    opps = open_opportunities(state, _owner_filter(state, input))
    rows = []
    for stage in open_stages(state):
        in_stage = [o for o in opps if o["stageId"] == stage["id"]]
        rows.append(
            {
                "stageId": stage["id"],
                "stageName": stage["name"],
                "probability": stage["probability"],
                "count": len(in_stage),
                "amount": total_amount(in_stage),
                "weightedAmount": total_weighted(state, in_stage),
            }
        )
    return {
        "asOf": w.clock.today(state),
        "stages": rows,
        "totalCount": len(opps),
        "totalAmount": total_amount(opps),
        "totalWeightedAmount": total_weighted(state, opps),
    }


@w.define_tool(
    {
        "closingOnOrBefore": w.schema.date("Only deals expected to close on or before this date"),
        "ownerId": w.schema.string("Only deals owned by this user id."),
    }
)
def forecast_report(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Probability-weighted forecast of open deals expected to close on or before a date (default:
    all open deals), optionally for one owner.
    """
    opps = open_opportunities(state, _owner_filter(state, input))
    cutoff = w.fields.read_date(input, "closingOnOrBefore", None)
    if cutoff is not None:
        opps = [o for o in opps if o["expectedCloseDate"] <= cutoff]
    return {
        "asOf": w.clock.today(state),
        "closingOnOrBefore": cutoff,
        "dealCount": len(opps),
        "amount": total_amount(opps),
        "weightedAmount": total_weighted(state, opps),
        "deals": [opportunity_view(state, o) for o in opps],
    }


@w.define_tool(
    {
        "year": w.schema.integer(
            "Calendar year of closed-won business (default: the current year).", minimum=2000
        ),
        "activeOnly": w.schema.boolean("Only users who are still active (default false)."),
    }
)
def rep_performance(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Per account executive (and any director with a quota): annual quota, closed-won in the year,
    attainment percent, and open pipeline. Includes deactivated users unless activeOnly.
    """
    year = w.fields.read_int(input, "year", current_year(state), minimum=2000)
    if year > current_year(state):
        raise silo.tool_error(
            "invalid_input",
            f"year {year} is in the future (the current year is {current_year(state)}).",
        )
    rows = []
    for user in w.tools.sorted_by_id(state["users"]):
        if user["annualQuota"] <= 0 and user["role"] != "account_executive":
            continue
        if input.get("activeOnly") and not user["active"]:
            continue
        opps = open_opportunities(state, user["id"])
        rows.append(
            {
                "userId": user["id"],
                "name": full_name(user),
                "active": user["active"],
                "annualQuota": user["annualQuota"],
                "closedWon": won_amount(state, user["id"], year),
                "attainmentPercent": quota_attainment(state, user["id"], year),
                "openDealCount": len(opps),
                "openPipelineAmount": total_amount(opps),
            }
        )
    return {"year": year, "reps": rows}


@w.define_tool(
    {
        "thresholdDays": w.schema.integer(
            "Days in stage beyond which a deal counts as stale.", minimum=0
        ),
        "ownerId": w.schema.string("Only deals owned by this user id."),
    },
    name="stale_opportunities",
)
def stale_deals_report(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Open deals that have sat in their current stage for more than thresholdDays (default: the
    company's stale policy), longest first, with counts per owner.
    """
    threshold = w.fields.read_int(input, "thresholdDays", stale_threshold(state), minimum=0)
    owner_id = _owner_filter(state, input)
    stale = [
        o
        for o in stale_opportunities(state, threshold)
        if owner_id is None or o["ownerId"] == owner_id
    ]
    by_owner: dict[str, int] = {}
    for opp in stale:
        by_owner[opp["ownerId"]] = by_owner.get(opp["ownerId"], 0) + 1
    counts = [
        {
            "ownerId": uid,
            "ownerName": user_name(state, uid),
            "ownerActive": state["users"][uid]["active"],
            "count": n,
        }
        for uid, n in sorted(by_owner.items(), key=lambda item: (-item[1], item[0]))
    ]
    return {
        "asOf": w.clock.today(state),
        "thresholdDays": threshold,
        "count": len(stale),
        "totalAmount": w.amounts.sum_money(o["amount"] for o in stale),
        "countByOwner": counts,
        "opportunities": [opportunity_view(state, o) for o in stale],
    }
