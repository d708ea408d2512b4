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


#: The owner filter every report takes.
_OWNER = w.fields.string("Only deals owned by this user id.", default=None, raw=True)


class _ByOwner(w.Input):
    ownerId = _OWNER


def _owner_filter(state: State, args: _ByOwner | _Forecast | _Stale) -> str | None:
    w.records.check_references(state, args, FILTERS)
    return args.ownerId


@w.define_tool(_ByOwner)
def pipeline_summary(state: State, args: _ByOwner) -> dict[str, Any]:
    """Open pipeline by stage: deal count, amount and probability-weighted amount, plus totals."""
    opps = open_opportunities(state, _owner_filter(state, args))
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


class _Forecast(w.Input):
    closingOnOrBefore = w.fields.date(
        "Only deals expected to close on or before this date", default=None
    )
    ownerId = _OWNER


@w.define_tool(_Forecast)
def forecast_report(state: State, args: _Forecast) -> dict[str, Any]:
    """Probability-weighted forecast of open deals expected to close on or before a date (default:
    all open deals), optionally for one owner.
    """
    opps = open_opportunities(state, _owner_filter(state, args))
    cutoff = args.closingOnOrBefore
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


class _Performance(w.Input):
    year = w.fields.integer(
        "Calendar year of closed-won business (default: the current year).",
        minimum=2000,
        default=None,
    )
    activeOnly = w.fields.boolean("Only users who are still active (default false).", default=False)


@w.define_tool(_Performance)
def rep_performance(state: State, args: _Performance) -> dict[str, Any]:
    """Per account executive (and any director with a quota): annual quota, closed-won in the year,
    attainment percent, and open pipeline. Includes deactivated users unless activeOnly.
    """
    year = current_year(state) if args.year is None else args.year
    if year > current_year(state):
        raise silo.tool_error(
            "invalid_input",
            f"year {year} is in the future (the current year is {current_year(state)}).",
        )
    rows = []
    for user in w.tools.sorted_by_id(state["users"]):
        if user["annualQuota"] <= 0 and user["role"] != "account_executive":
            continue
        if args.activeOnly and not user["active"]:
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


class _Stale(w.Input):
    thresholdDays = w.fields.integer(
        "Days in stage beyond which a deal counts as stale.", minimum=0, default=None
    )
    ownerId = _OWNER


@w.define_tool(_Stale, name="stale_opportunities")
def stale_deals_report(state: State, args: _Stale) -> dict[str, Any]:
    """Open deals that have sat in their current stage for more than thresholdDays (default: the
    company's stale policy), longest first, with counts per owner.
    """
    given = args.thresholdDays
    threshold = stale_threshold(state) if given is None else given
    owner_id = _owner_filter(state, args)
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
