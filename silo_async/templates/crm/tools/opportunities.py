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
    read_future_date,
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


def _enter_stage(call: w.Write, stage: Stage) -> None:
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


@ACTOR.write_tool(
    {
        "name": w.schema.string("Deal name."),
        "accountId": w.schema.string("Account id."),
        "ownerId": w.schema.string("Owner: an active account executive or director."),
        "amount": w.schema.number("Amount in USD (positive)."),
        "expectedCloseDate": w.schema.date("Expected close date, today or later"),
        "stageId": w.schema.string("Open stage to start in (default: the first open stage)."),
        "primaryContactId": w.schema.string("An active contact of the account."),
    },
    ["name", "accountId", "ownerId", "amount", "expectedCloseDate"],
)
def create_opportunity(call: w.Write) -> dict[str, Any]:
    """Create an open opportunity on an account, in an open stage (default: the first)."""
    state, input = call.state, call.input
    account = w.records.require_record(state, "accounts", input["accountId"])
    deal_owner(state, input["ownerId"], "opportunities")
    amount = w.fields.read_money(input, "amount")
    close = read_future_date(state, input, "expectedCloseDate")
    stage = require_starting_stage(state, input.get("stageId"))
    if "primaryContactId" in input:
        _check_contact(state, input["primaryContactId"], account["id"])
    opp = new_opportunity(
        state,
        name=input["name"],
        account_id=account["id"],
        contact_id=input.get("primaryContactId"),
        owner_id=input["ownerId"],
        stage=stage,
        amount=amount,
        close=close,
    )
    call.add(OPPORTUNITY, opp, f"Created {opp['name']}.")
    return {"created": opportunity_view(state, opp)}


@update_tool(
    {
        "name": w.schema.string("New name."),
        "amount": w.schema.number("New amount in USD (positive)."),
        "expectedCloseDate": w.schema.date("New expected close date, today or later"),
        "primaryContactId": w.schema.string(
            "New primary contact (an active contact of the account)."
        ),
    },
    OPEN_OPPORTUNITY,
    opportunity_view,
)
def update_opportunity(call: w.Write) -> None:
    """Change an open opportunity's name, amount, expected close date or primary contact.

    Amounts are money, close dates not in the past, contacts of the deal's account.
    """
    state, input = call.state, call.input
    if "name" in input:
        call.set("name", input["name"].strip())
    if "amount" in input:
        call.set("amount", w.fields.read_money(input, "amount"))
    if "expectedCloseDate" in input:
        call.set("expectedCloseDate", read_future_date(state, input, "expectedCloseDate"))
    if "primaryContactId" in input:
        _check_contact(state, input["primaryContactId"], call.record["accountId"])
        call.set("primaryContactId", input["primaryContactId"])


def _move(call: w.Write, stage: Stage) -> dict[str, Any]:
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


@ACTOR.write_tool(
    {"stageId": w.schema.string("Target open stage id.")}, ["stageId"], target=OPEN_OPPORTUNITY
)
def move_opportunity_stage(call: w.Write) -> dict[str, Any]:
    """Move an open opportunity to another open stage (forwards or back). Resets days in stage."""
    return _move(call, w.records.require_record(call.state, "stages", call.input["stageId"]))


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


def _close(call: w.Write, outcome: Literal["won", "lost"]) -> None:
    _enter_stage(call, outcome_stage(call.state, outcome))
    call.set("status", outcome)
    call.set("closedDate", w.clock.today(call.state))


@ACTOR.write_tool(
    {
        "finalAmount": w.schema.number(
            "Contracted amount in USD if it differs from the deal amount."
        )
    },
    target=OPEN_OPPORTUNITY,
)
def close_opportunity_won(call: w.Write) -> dict[str, Any]:
    """Close an open opportunity as won today, optionally at the final contracted amount."""
    if "finalAmount" in call.input:
        call.set("amount", w.fields.read_money(call.input, "finalAmount"))
    _close(call, "won")
    call.audit("Won.")
    return {"updated": opportunity_view(call.state, call.record)}


@ACTOR.write_tool(
    {"reason": w.schema.enum("Why the deal was lost.", LOST_REASONS)},
    ["reason"],
    target=OPEN_OPPORTUNITY,
)
def close_opportunity_lost(call: w.Write) -> dict[str, Any]:
    """Close an open opportunity as lost today, with a reason."""
    _close(call, "lost")
    call.set("lostReason", call.input["reason"])
    call.audit(f"Lost: {call.input['reason']}.")
    return {"updated": opportunity_view(call.state, call.record)}


reassign_opportunity = reassign_tool(
    "reassign_opportunity",
    "Give an open opportunity to another owner (an active account executive or director). Only "
    "its owner, a director or sales ops may. Closed deals keep their owner as history.",
    OPEN_OPPORTUNITY,
    opportunity_view,
)
