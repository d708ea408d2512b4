"""Opportunities: the staged pipeline, from first qualification to closed won or lost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import silo_async as silo
from silo_async import world as w

from ..state import (
    Opportunity,
    Stage,
    State,
    is_past_due,
    is_stale,
    next_open_stage,
    outcome_stage,
    pipeline,
)
from .helpers import (
    ACTOR,
    FILTERS,
    OPPORTUNITY,
    activities_about,
    assert_opportunity_open,
    deal_owner,
    future_date,
    reassign_tool,
    require_starting_stage,
    update_tool,
)
from .views import activity_view, opportunity_view

__all__ = [
    "advance_opportunity_stage",
    "close_opportunity_lost",
    "close_opportunity_won",
    "create_opportunity",
    "get_opportunity",
    "list_opportunities",
    "list_stages",
    "move_opportunity_stage",
    "new_opportunity",
    "reassign_opportunity",
    "search_opportunities",
    "update_opportunity",
]

STATUSES = ("open", "won", "lost")
LOST_REASONS = ("price", "competitor", "no_budget", "no_decision", "timing", "other")
#: An open deal: closed deals are history.
OPEN_OPPORTUNITY = OPPORTUNITY.guarded(assert_opportunity_open)


def _check_contact(state: State, contact_id: str, account_id: str) -> None:
    contact = w.records.require_record(state, "contacts", contact_id)
    if contact["status"] != "active" or contact["accountId"] != account_id:
        raise silo.tool_error(
            "invalid_input",
            f"Contact {contact_id} cannot be the deal's primary contact: it must be an active "
            f"contact of {account_id} (it is {contact['status']}, at {contact['accountId']}).",
        )


def new_opportunity(
    state: State,
    *,
    name: str,
    account_id: str,
    contact_id: str | None,
    owner_id: str,
    stage: Stage,
    amount: float,
    close: str,
    source_lead_id: str | None = None,
) -> Opportunity:
    """A new open deal entering ``stage`` today (checks are the caller's job; not stored yet)."""
    opp_id = w.records.next_id(state, "OPP")
    opp: Opportunity = {
        "id": opp_id,
        "name": name.strip(),
        "accountId": account_id,
        "primaryContactId": contact_id,
        "ownerId": owner_id,
        "stageId": stage["id"],
        "amount": amount,
        "expectedCloseDate": close,
        "createdDate": w.clock.today(state),
        "stageHistory": [{"stageId": stage["id"], "enteredDate": w.clock.today(state)}],
        "status": "open",
        "closedDate": None,
        "lostReason": None,
        "sourceLeadId": source_lead_id,
    }
    return opp


def _enter_stage(call: w.Write[Any], stage: Stage) -> None:
    call.set("stageId", stage["id"])
    call.record["stageHistory"].append(
        {"stageId": stage["id"], "enteredDate": w.clock.today(call.state)}
    )


@w.define_tool()
def list_stages(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """The pipeline stages in order, with their win probability."""
    return {"stages": pipeline(state)}


def _flags(state: State, opp: Opportunity, input: Mapping[str, Any]) -> bool:
    return (not input.get("staleOnly") or is_stale(state, opp)) and (
        not input.get("pastDueOnly") or is_past_due(state, opp)
    )


OPPORTUNITIES = w.Collection("opportunities", "opportunityId", "OPP-004", view=opportunity_view)
list_opportunities = OPPORTUNITIES.list_tool(
    "List opportunities sorted by id with probability, weighted amount, days in stage and "
    "stale/past-due flags; filter by owner, account, stage or status, or only stale or past-due "
    "deals. Paged.",
    filters={
        "ownerId": w.schema.string("Only deals owned by this user id."),
        "accountId": w.schema.string("Only deals of this account."),
        "stageId": w.schema.string("Only deals currently in this stage."),
        "status": w.schema.enum("Only deals with this status.", STATUSES),
    },
    references=FILTERS,
    extra={
        "staleOnly": w.schema.boolean(
            "Only open deals stuck in their stage past the stale policy."
        ),
        "pastDueOnly": w.schema.boolean("Only open deals whose expected close date has passed."),
    },
    where=_flags,
)

search_opportunities = OPPORTUNITIES.search_tool(
    "Find opportunities whose id, name or account name contains the query (case-insensitive). "
    "Paged.",
    lambda state, o: [o["name"], state["accounts"][o["accountId"]]["name"]],
)

get_opportunity = OPPORTUNITIES.get_tool(
    "One opportunity with its stage history, derived figures and related activities.",
    view=lambda state, opp: {
        **opportunity_view(state, opp),
        "activities": [
            activity_view(state, a) for a in activities_about(state, "opportunity", opp["id"])
        ],
    },
)


def _amount(description: str, **default: Any) -> Any:
    """An amount in USD: stated as a number, read as money (rounded to cents, positive)."""
    return w.fields.field(w.schema.number(description), read=w.fields.read_money, **default)


class _NewOpportunity(w.Input):
    name = w.fields.string("Deal name.", raw=True)
    accountId = w.fields.string("Account id.", raw=True)
    ownerId = w.fields.string("Owner: an active account executive or director.", raw=True)
    amount: w.fields.Field[float] = _amount("Amount in USD (positive).")
    expectedCloseDate = w.fields.date("Expected close date, today or later")
    stageId = w.fields.string(
        "Open stage to start in (default: the first open stage).", default=None, raw=True
    )
    primaryContactId = w.fields.string("An active contact of the account.", default=None, raw=True)


@ACTOR.write_tool(_NewOpportunity)
def create_opportunity(call: w.Write[_NewOpportunity]) -> dict[str, Any]:
    """Create an open opportunity on an account, in an open stage (default: the first)."""
    state, args = call.state, call.args
    account = w.records.require_record(state, "accounts", args.accountId)
    deal_owner(state, args.ownerId, "opportunities")
    amount = args.amount
    close = future_date(state, "expectedCloseDate", args.expectedCloseDate)
    stage = require_starting_stage(state, args.stageId)
    if args.primaryContactId is not None:
        _check_contact(state, args.primaryContactId, account["id"])
    opp = new_opportunity(
        state,
        name=args.name,
        account_id=account["id"],
        contact_id=args.primaryContactId,
        owner_id=args.ownerId,
        stage=stage,
        amount=amount,
        close=close,
    )
    call.add(OPPORTUNITY, opp, f"Created {opp['name']}.")
    return {"created": opportunity_view(state, opp)}


class _OpportunityChanges(w.Input):
    name = w.fields.string("New name.", default=None, raw=True)
    amount: w.fields.Field[float | None] = _amount("New amount in USD (positive).", default=None)
    expectedCloseDate = w.fields.date("New expected close date, today or later", default=None)
    primaryContactId = w.fields.string(
        "New primary contact (an active contact of the account).", default=None, raw=True
    )


@update_tool(_OpportunityChanges, OPEN_OPPORTUNITY, opportunity_view)
def update_opportunity(call: w.Write[_OpportunityChanges]) -> None:
    """Change an open opportunity's name, amount, expected close date or primary contact.

    Amounts are money, close dates not in the past, contacts of the deal's account.
    """
    state, args = call.state, call.args
    if args.name is not None:
        call.set("name", args.name.strip())
    if args.amount is not None:
        call.set("amount", args.amount)
    if args.expectedCloseDate is not None:
        call.set(
            "expectedCloseDate", future_date(state, "expectedCloseDate", args.expectedCloseDate)
        )
    if args.primaryContactId is not None:
        _check_contact(state, args.primaryContactId, call.record["accountId"])
        call.set("primaryContactId", args.primaryContactId)


def _move(call: w.Write[Any], stage: Stage) -> dict[str, Any]:
    opp = call.record
    if stage["isClosed"]:
        raise silo.tool_error(
            "not_allowed",
            f"Stage {stage['id']} ({stage['name']}) is a closed stage; use close_opportunity_won "
            "or close_opportunity_lost to close a deal.",
        )
    if stage["id"] == opp["stageId"]:
        raise silo.tool_error(
            "conflict", f"Opportunity {opp['id']} is already in {stage['id']} ({stage['name']})."
        )
    _enter_stage(call, stage)
    call.audit(f"Moved to {stage['name']}.")
    return {"updated": opportunity_view(call.state, opp)}


class _Stage(w.Input):
    stageId = w.fields.string("Target open stage id.", raw=True)


@ACTOR.write_tool(_Stage, target=OPEN_OPPORTUNITY)
def move_opportunity_stage(call: w.Write[_Stage]) -> dict[str, Any]:
    """Move an open opportunity to another open stage (forwards or back). Resets days in stage."""
    return _move(call, w.records.require_record(call.state, "stages", call.args.stageId))


@ACTOR.write_tool(target=OPEN_OPPORTUNITY)
def advance_opportunity_stage(call: w.Write) -> dict[str, Any]:
    """Move an open opportunity to the next open stage in the pipeline."""
    state, opp = call.state, call.record
    stage = next_open_stage(state, opp["stageId"])
    if stage is None:
        current = state["stages"][opp["stageId"]]
        raise silo.tool_error(
            "invalid_state",
            f"Opportunity {opp['id']} is in {current['name']}, the last open stage; close it "
            "instead.",
        )
    return _move(call, stage)


def _close(call: w.Write[Any], outcome: Literal["won", "lost"]) -> None:
    _enter_stage(call, outcome_stage(call.state, outcome))
    call.set("status", outcome)
    call.set("closedDate", w.clock.today(call.state))


class _Won(w.Input):
    finalAmount: w.fields.Field[float | None] = _amount(
        "Contracted amount in USD if it differs from the deal amount.", default=None
    )


@ACTOR.write_tool(_Won, target=OPEN_OPPORTUNITY)
def close_opportunity_won(call: w.Write[_Won]) -> dict[str, Any]:
    """Close an open opportunity as won today, optionally at the final contracted amount."""
    if call.args.finalAmount is not None:
        call.set("amount", call.args.finalAmount)
    _close(call, "won")
    call.audit("Won.")
    return {"updated": opportunity_view(call.state, call.record)}


class _Lost(w.Input):
    reason = w.fields.enum("Why the deal was lost.", LOST_REASONS)


@ACTOR.write_tool(_Lost, target=OPEN_OPPORTUNITY)
def close_opportunity_lost(call: w.Write[_Lost]) -> dict[str, Any]:
    """Close an open opportunity as lost today, with a reason."""
    _close(call, "lost")
    call.set("lostReason", call.args.reason)
    call.audit(f"Lost: {call.args.reason}.")
    return {"updated": opportunity_view(call.state, call.record)}


reassign_opportunity = reassign_tool(
    "reassign_opportunity",
    "Give an open opportunity to another owner (an active account executive or director). Only "
    "its owner, a director or sales ops may. Closed deals keep their owner as history.",
    OPEN_OPPORTUNITY,
    opportunity_view,
)
