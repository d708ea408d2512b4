"""Accounts: the customer and prospect organisations, and who owns them."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async.world import (
    audit,
    define_tool,
    enum,
    get_tool,
    list_tool,
    next_id,
    require_record,
    require_some,
    search_tool,
    set_field,
    sorted_by_id,
    string,
    today,
)

from ..state import Account, State, open_opportunities, total_amount, total_weighted
from .helpers import ACTOR, FILTERS, acting_user, deal_owner, reassign_tool
from .views import account_view, contact_view, opportunity_view

__all__ = [
    "create_account",
    "get_account",
    "list_accounts",
    "reassign_account",
    "search_accounts",
    "update_account",
]

TIERS = ("enterprise", "mid_market", "smb")


def assert_name_free(state: State, name: str) -> None:
    """Account names are unique (case-insensitive): a second record would split the history."""
    for account in state["accounts"].values():
        if account["name"].strip().lower() == name.strip().lower():
            raise silo.tool_error(
                "conflict",
                f'An account named "{account["name"]}" already exists ({account["id"]}).',
                {"existingId": account["id"]},
            )


list_accounts = list_tool(
    "list_accounts",
    "List accounts sorted by id, optionally by owner, tier or industry. Paged.",
    "accounts",
    filters={
        "ownerId": string("Only accounts owned by this user id."),
        "tier": enum("Only accounts in this tier.", TIERS),
        "industry": string("Only accounts in this industry, e.g. pharma."),
    },
    references=FILTERS,
    view=account_view,
)

search_accounts = search_tool(
    "search_accounts",
    "Find accounts whose id, name, website or city contains the query (case-insensitive). Paged.",
    "accounts",
    ["name", "website", "city"],
    view=account_view,
)


def _account_detail(state: State, account: Account) -> dict[str, Any]:
    opps = [o for o in sorted_by_id(state["opportunities"]) if o["accountId"] == account["id"]]
    open_opps = [o for o in open_opportunities(state) if o["accountId"] == account["id"]]
    contacts = [c for c in sorted_by_id(state["contacts"]) if c["accountId"] == account["id"]]
    return {
        **account_view(state, account),
        "contacts": [contact_view(state, c) for c in contacts],
        "opportunities": [opportunity_view(state, o) for o in opps],
        "openPipelineAmount": total_amount(open_opps),
        "openPipelineWeighted": total_weighted(state, open_opps),
    }


get_account = get_tool(
    "get_account",
    "One account with its contacts, all its opportunities and its open pipeline totals.",
    "accounts",
    "accountId",
    "ACC-001",
    view=_account_detail,
)


@define_tool(
    "create_account",
    "Create an account. Names are unique; the owner must be an active director or account "
    "executive.",
    {
        "name": string("Organisation name."),
        "industry": string("Industry, e.g. clinical_lab, pharma, food_safety."),
        "tier": enum("Size tier.", TIERS),
        "ownerId": string("User id of the owner."),
        "website": string("Website URL."),
        "city": string("City."),
        "country": string("Two-letter country code, e.g. DE."),
        **ACTOR,
    },
    ["name", "industry", "tier", "ownerId", "actorId"],
)
def create_account(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create an account."""
    actor = acting_user(state, input["actorId"])
    deal_owner(state, input["ownerId"], "accounts")
    assert_name_free(state, input["name"])
    account_id = next_id(state, "ACC")
    state["accounts"][account_id] = {
        "id": account_id,
        "name": input["name"].strip(),
        "industry": input["industry"],
        "tier": input["tier"],
        "ownerId": input["ownerId"],
        "website": input.get("website"),
        "city": input.get("city"),
        "country": input.get("country"),
        "createdDate": today(state),
    }
    audit(state, actor["id"], "create_account", "account", account_id, f"Created {input['name']}.")
    return {"created": account_view(state, state["accounts"][account_id])}


@define_tool(
    "update_account",
    "Change an account's name, industry, tier, website, city or country (not its owner: use "
    "reassign_account).",
    {
        "accountId": string("Account id."),
        "name": string("New name (must stay unique)."),
        "industry": string("New industry."),
        "tier": enum("New tier.", TIERS),
        "website": string("New website URL."),
        "city": string("New city."),
        "country": string("New two-letter country code."),
        **ACTOR,
    },
    ["accountId", "actorId"],
)
def update_account(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Update an account's descriptive fields."""
    actor = acting_user(state, input["actorId"])
    account = require_record(state, "accounts", input["accountId"])
    fields = ("name", "industry", "tier", "website", "city", "country")
    require_some(input, fields)
    if "name" in input and input["name"].strip().lower() != account["name"].lower():
        assert_name_free(state, input["name"])
    changes: list[dict[str, Any]] = []
    for field in fields:
        if field in input:
            set_field(account, field, input[field], changes)
    audit(
        state, actor["id"], "update_account", "account", account["id"], "Updated account.", changes
    )
    return {"updated": account_view(state, account), "changes": changes}


reassign_account = reassign_tool(
    "reassign_account",
    "Give an account to another owner (an active director or account executive). Only the "
    "current owner, a director or sales ops may do this. The account's deals are not moved.",
    "account",
    "accountId",
    account_view,
)
