"""Opportunities: the staged pipeline, from first qualification to closed won or lost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world import (
    audit,
    boolean,
    date,
    define_tool,
    enum,
    get_tool,
    list_tool,
    next_id,
    number,
    read_money,
    require_record,
    require_some,
    search_tool,
    set_field,
    string,
    today,
)

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
    acting_user,
    activities_about,
    assert_opportunity_open,
    deal_owner,
    read_future_date,
    reassign_tool,
    require_open_opportunity,
    require_starting_stage,
)
from .views import activity_view, opportunity_view

__all__ = [
    "add_opportunity",
    "advance_opportunity_stage",
    "close_opportunity_lost",
    "close_opportunity_won",
    "create_opportunity",
    "get_opportunity",
    "list_opportunities",
    "list_stages",
    "move_opportunity_stage",
    "reassign_opportunity",
    "search_opportunities",
    "update_opportunity",
]

STATUSES = ("open", "won", "lost")
LOST_REASONS = ("price", "competitor", "no_budget", "no_decision", "timing", "other")


def _check_contact(state: State, contact_id: str, account_id: str) -> None:
    contact = require_record(state, "contacts", contact_id)
    if contact["status"] != "active" or contact["accountId"] != account_id:
        raise silo.tool_error(
            "invalid_input",
            f"Contact {contact_id} cannot be the deal's primary contact: it must be an active "
            f"contact of {account_id} (it is {contact['status']}, at {contact['accountId']}).",
        )


def add_opportunity(
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
    """Store a new open deal entering ``stage`` today (checks are the caller's job)."""
    opp_id = next_id(state, "OPP")
    opp: Opportunity = {
        "id": opp_id,
        "name": name.strip(),
        "accountId": account_id,
        "primaryContactId": contact_id,
        "ownerId": owner_id,
        "stageId": stage["id"],
        "amount": amount,
        "expectedCloseDate": close,
        "createdDate": today(state),
        "stageHistory": [{"stageId": stage["id"], "enteredDate": today(state)}],
        "status": "open",
        "closedDate": None,
        "lostReason": None,
        "sourceLeadId": source_lead_id,
    }
    state["opportunities"][opp_id] = opp
    return opp


def _enter_stage(
    state: State, opp: Opportunity, stage: Stage, changes: list[dict[str, Any]]
) -> None:
    set_field(opp, "stageId", stage["id"], changes)
    opp["stageHistory"].append({"stageId": stage["id"], "enteredDate": today(state)})


@define_tool("list_stages", "The pipeline stages in order, with their win probability.")
def list_stages(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """All stages in pipeline order."""
    return {"stages": pipeline(state)}


def _flags(state: State, opp: Opportunity, input: Mapping[str, Any]) -> bool:
    return (not input.get("staleOnly") or is_stale(state, opp)) and (
        not input.get("pastDueOnly") or is_past_due(state, opp)
    )


list_opportunities = list_tool(
    "list_opportunities",
    "List opportunities sorted by id with probability, weighted amount, days in stage and "
    "stale/past-due flags; filter by owner, account, stage or status, or only stale or past-due "
    "deals. Paged.",
    "opportunities",
    filters={
        "ownerId": string("Only deals owned by this user id."),
        "accountId": string("Only deals of this account."),
        "stageId": string("Only deals currently in this stage."),
        "status": enum("Only deals with this status.", STATUSES),
    },
    references=FILTERS,
    extra={
        "staleOnly": boolean("Only open deals stuck in their stage past the stale policy."),
        "pastDueOnly": boolean("Only open deals whose expected close date has passed."),
    },
    where=_flags,
    view=opportunity_view,
)

search_opportunities = search_tool(
    "search_opportunities",
    "Find opportunities whose id, name or account name contains the query (case-insensitive). "
    "Paged.",
    "opportunities",
    lambda state, o: [o["name"], state["accounts"][o["accountId"]]["name"]],
    view=opportunity_view,
)

get_opportunity = get_tool(
    "get_opportunity",
    "One opportunity with its stage history, derived figures and related activities.",
    "opportunities",
    "opportunityId",
    "OPP-004",
    view=lambda state, opp: {
        **opportunity_view(state, opp),
        "activities": [
            activity_view(state, a) for a in activities_about(state, "opportunity", opp["id"])
        ],
    },
)


@define_tool(
    "create_opportunity",
    "Create an open opportunity on an account, in an open stage (default: the first).",
    {
        "name": string("Deal name."),
        "accountId": string("Account id."),
        "ownerId": string("Owner: an active account executive or director."),
        "amount": number("Amount in USD (positive)."),
        "expectedCloseDate": date("Expected close date, today or later"),
        "stageId": string("Open stage to start in (default: the first open stage)."),
        "primaryContactId": string("An active contact of the account."),
        **ACTOR,
    },
    ["name", "accountId", "ownerId", "amount", "expectedCloseDate", "actorId"],
)
def create_opportunity(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create an opportunity."""
    actor = acting_user(state, input["actorId"])
    account = require_record(state, "accounts", input["accountId"])
    deal_owner(state, input["ownerId"], "opportunities")
    amount = read_money(input, "amount")
    close = read_future_date(state, input, "expectedCloseDate")
    stage = require_starting_stage(state, input.get("stageId"))
    if "primaryContactId" in input:
        _check_contact(state, input["primaryContactId"], account["id"])
    opp = add_opportunity(
        state,
        name=input["name"],
        account_id=account["id"],
        contact_id=input.get("primaryContactId"),
        owner_id=input["ownerId"],
        stage=stage,
        amount=amount,
        close=close,
    )
    audit(
        state,
        actor["id"],
        "create_opportunity",
        "opportunity",
        opp["id"],
        f"Created {opp['name']}.",
    )
    return {"created": opportunity_view(state, opp)}


@define_tool(
    "update_opportunity",
    "Change an open opportunity's name, amount, expected close date or primary contact.",
    {
        "opportunityId": string("Opportunity id."),
        "name": string("New name."),
        "amount": number("New amount in USD (positive)."),
        "expectedCloseDate": date("New expected close date, today or later"),
        "primaryContactId": string("New primary contact (an active contact of the account)."),
        **ACTOR,
    },
    ["opportunityId", "actorId"],
)
def update_opportunity(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Update an open opportunity."""
    actor = acting_user(state, input["actorId"])
    opp = require_open_opportunity(state, input["opportunityId"])
    require_some(input, ("name", "amount", "expectedCloseDate", "primaryContactId"))
    changes: list[dict[str, Any]] = []
    if "name" in input:
        set_field(opp, "name", input["name"].strip(), changes)
    if "amount" in input:
        set_field(opp, "amount", read_money(input, "amount"), changes)
    if "expectedCloseDate" in input:
        set_field(
            opp, "expectedCloseDate", read_future_date(state, input, "expectedCloseDate"), changes
        )
    if "primaryContactId" in input:
        _check_contact(state, input["primaryContactId"], opp["accountId"])
        set_field(opp, "primaryContactId", input["primaryContactId"], changes)
    audit(
        state,
        actor["id"],
        "update_opportunity",
        "opportunity",
        opp["id"],
        "Updated opportunity.",
        changes,
    )
    return {"updated": opportunity_view(state, opp), "changes": changes}


def _move(state: State, actor_id: str, opp: Opportunity, stage: Stage, action: str) -> Any:
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
    changes: list[dict[str, Any]] = []
    _enter_stage(state, opp, stage, changes)
    audit(state, actor_id, action, "opportunity", opp["id"], f"Moved to {stage['name']}.", changes)
    return {"updated": opportunity_view(state, opp)}


@define_tool(
    "move_opportunity_stage",
    "Move an open opportunity to another open stage (forwards or back). Resets days in stage.",
    {
        "opportunityId": string("Opportunity id."),
        "stageId": string("Target open stage id."),
        **ACTOR,
    },
    ["opportunityId", "stageId", "actorId"],
)
def move_opportunity_stage(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Set an opportunity's stage."""
    actor = acting_user(state, input["actorId"])
    opp = require_open_opportunity(state, input["opportunityId"])
    stage = require_record(state, "stages", input["stageId"])
    result: dict[str, Any] = _move(state, actor["id"], opp, stage, "move_opportunity_stage")
    return result


@define_tool(
    "advance_opportunity_stage",
    "Move an open opportunity to the next open stage in the pipeline.",
    {"opportunityId": string("Opportunity id."), **ACTOR},
    ["opportunityId", "actorId"],
)
def advance_opportunity_stage(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Advance an opportunity one stage."""
    actor = acting_user(state, input["actorId"])
    opp = require_open_opportunity(state, input["opportunityId"])
    stage = next_open_stage(state, opp["stageId"])
    if stage is None:
        current = state["stages"][opp["stageId"]]
        raise silo.tool_error(
            "invalid_state",
            f"Opportunity {opp['id']} is in {current['name']}, the last open stage; close it "
            "instead.",
        )
    result: dict[str, Any] = _move(state, actor["id"], opp, stage, "advance_opportunity_stage")
    return result


@define_tool(
    "close_opportunity_won",
    "Close an open opportunity as won today, optionally at the final contracted amount.",
    {
        "opportunityId": string("Opportunity id."),
        "finalAmount": number("Contracted amount in USD if it differs from the deal amount."),
        **ACTOR,
    },
    ["opportunityId", "actorId"],
)
def close_opportunity_won(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Close a deal as won."""
    actor = acting_user(state, input["actorId"])
    opp = require_open_opportunity(state, input["opportunityId"])
    changes: list[dict[str, Any]] = []
    if "finalAmount" in input:
        set_field(opp, "amount", read_money(input, "finalAmount"), changes)
    _enter_stage(state, opp, outcome_stage(state, "won"), changes)
    set_field(opp, "status", "won", changes)
    set_field(opp, "closedDate", today(state), changes)
    audit(state, actor["id"], "close_opportunity_won", "opportunity", opp["id"], "Won.", changes)
    return {"updated": opportunity_view(state, opp)}


@define_tool(
    "close_opportunity_lost",
    "Close an open opportunity as lost today, with a reason.",
    {
        "opportunityId": string("Opportunity id."),
        "reason": enum("Why the deal was lost.", LOST_REASONS),
        **ACTOR,
    },
    ["opportunityId", "reason", "actorId"],
)
def close_opportunity_lost(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Close a deal as lost."""
    actor = acting_user(state, input["actorId"])
    opp = require_open_opportunity(state, input["opportunityId"])
    changes: list[dict[str, Any]] = []
    _enter_stage(state, opp, outcome_stage(state, "lost"), changes)
    set_field(opp, "status", "lost", changes)
    set_field(opp, "closedDate", today(state), changes)
    set_field(opp, "lostReason", input["reason"], changes)
    audit(
        state,
        actor["id"],
        "close_opportunity_lost",
        "opportunity",
        opp["id"],
        f"Lost: {input['reason']}.",
        changes,
    )
    return {"updated": opportunity_view(state, opp)}


reassign_opportunity = reassign_tool(
    "reassign_opportunity",
    "Give an open opportunity to another owner (an active account executive or director). Only "
    "its owner, a director or sales ops may. Closed deals keep their owner as history.",
    "opportunity",
    "opportunityId",
    opportunity_view,
    assert_opportunity_open,
)
