"""Accounts: the customer and prospect organisations, and who owns them."""

from __future__ import annotations

from typing import Any

import silo_async as silo

from ..state import State, next_id, open_opportunities, today, total_amount, total_weighted
from .contract import (
    PAGING,
    actor_property,
    by_id,
    crm_tool,
    enum,
    filters_match,
    matches,
    paginate,
    require_some,
    string,
)
from .helpers import (
    acting_user,
    audit,
    check_filters,
    deal_owner,
    reassign_owner,
    record_change,
    require_account,
)
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


@crm_tool(
    "list_accounts",
    "List accounts sorted by id, optionally by owner, tier or industry. Paged.",
    {
        "ownerId": string("Only accounts owned by this user id."),
        "tier": enum("Only accounts in this tier.", TIERS),
        "industry": string("Only accounts in this industry, e.g. pharma."),
        **PAGING,
    },
)
def list_accounts(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Accounts matching the filters."""
    check_filters(state, input)
    accounts = [
        account_view(state, a)
        for a in by_id(state["accounts"])
        if filters_match(input, a, ("ownerId", "tier", "industry"))
    ]
    return paginate(accounts, input)


@crm_tool(
    "search_accounts",
    "Find accounts whose id, name, website or city contains the query (case-insensitive). Paged.",
    {"query": string("Text to look for."), **PAGING},
    ["query"],
)
def search_accounts(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Accounts matching a text query."""
    accounts = [
        account_view(state, a)
        for a in by_id(state["accounts"])
        if matches(input["query"], a["id"], a["name"], a["website"], a["city"])
    ]
    return paginate(accounts, input)


@crm_tool(
    "get_account",
    "One account with its contacts, all its opportunities and its open pipeline totals.",
    {"accountId": string("Account id, e.g. ACC-001.")},
    ["accountId"],
)
def get_account(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """An account and everything attached to it."""
    account = require_account(state, input["accountId"])
    opps = sorted(
        (o for o in state["opportunities"].values() if o["accountId"] == account["id"]),
        key=lambda o: o["id"],
    )
    open_opps = [o for o in open_opportunities(state) if o["accountId"] == account["id"]]
    contacts = sorted(
        (c for c in state["contacts"].values() if c["accountId"] == account["id"]),
        key=lambda c: c["id"],
    )
    return {
        **account_view(state, account),
        "contacts": [contact_view(state, c) for c in contacts],
        "opportunities": [opportunity_view(state, o) for o in opps],
        "openPipelineAmount": total_amount(open_opps),
        "openPipelineWeighted": total_weighted(state, open_opps),
    }


@crm_tool(
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
        "actorUserId": actor_property(),
    },
    ["name", "industry", "tier", "ownerId", "actorUserId"],
)
def create_account(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create an account."""
    actor = acting_user(state, input["actorUserId"])
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


@crm_tool(
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
        "actorUserId": actor_property(),
    },
    ["accountId", "actorUserId"],
)
def update_account(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Update an account's descriptive fields."""
    actor = acting_user(state, input["actorUserId"])
    account = require_account(state, input["accountId"])
    fields = ("name", "industry", "tier", "website", "city", "country")
    require_some(input, fields)
    if "name" in input and input["name"].strip().lower() != account["name"].lower():
        assert_name_free(state, input["name"])
    changes: list[dict[str, Any]] = []
    for field in fields:
        if field in input:
            record_change(account, field, input[field], changes)
    audit(
        state, actor["id"], "update_account", "account", account["id"], "Updated account.", changes
    )
    return {"updated": account_view(state, account), "changes": changes}


@crm_tool(
    "reassign_account",
    "Give an account to another owner (an active director or account executive). Only the "
    "current owner, a director or sales ops may do this. The account's deals are not moved.",
    {
        "accountId": string("Account id."),
        "newOwnerId": string("User id of the new owner."),
        "actorUserId": actor_property(),
    },
    ["accountId", "newOwnerId", "actorUserId"],
)
def reassign_account(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Change an account's owner."""
    actor = acting_user(state, input["actorUserId"])
    account = require_account(state, input["accountId"])
    reassign_owner(state, actor, account, "account", input["newOwnerId"])
    return {"updated": account_view(state, account)}
