"""Accounts: the customer and prospect organisations, and who owns them."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Account, State, open_opportunities, total_amount, total_weighted
from .helpers import ACCOUNT, ACTOR, FILTERS, deal_owner, reassign_tool, update_tool
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


ACCOUNTS = w.Collection("accounts", "accountId", "ACC-001", view=account_view)
list_accounts = ACCOUNTS.list_tool(
    "List accounts sorted by id, optionally by owner, tier or industry. Paged.",
    filters={
        "ownerId": w.schema.string("Only accounts owned by this user id."),
        "tier": w.schema.enum("Only accounts in this tier.", TIERS),
        "industry": w.schema.string("Only accounts in this industry, e.g. pharma."),
    },
    references=FILTERS,
)

search_accounts = ACCOUNTS.search_tool(
    "Find accounts whose id, name, website or city contains the query (case-insensitive). Paged.",
    ["name", "website", "city"],
)


def _account_detail(state: State, account: Account) -> dict[str, Any]:
    opps = [
        o for o in w.tools.sorted_by_id(state["opportunities"]) if o["accountId"] == account["id"]
    ]
    open_opps = [o for o in open_opportunities(state) if o["accountId"] == account["id"]]
    contacts = [
        c for c in w.tools.sorted_by_id(state["contacts"]) if c["accountId"] == account["id"]
    ]
    return {
        **account_view(state, account),
        "contacts": [contact_view(state, c) for c in contacts],
        "opportunities": [opportunity_view(state, o) for o in opps],
        "openPipelineAmount": total_amount(open_opps),
        "openPipelineWeighted": total_weighted(state, open_opps),
    }


get_account = ACCOUNTS.get_tool(
    "One account with its contacts, all its opportunities and its open pipeline totals.",
    view=_account_detail,
)


@ACTOR.write_tool(
    {
        "name": w.schema.string("Organisation name."),
        "industry": w.schema.string("Industry, e.g. clinical_lab, pharma, food_safety."),
        "tier": w.schema.enum("Size tier.", TIERS),
        "ownerId": w.schema.string("User id of the owner."),
        "website": w.schema.string("Website URL."),
        "city": w.schema.string("City."),
        "country": w.schema.string("Two-letter country code, e.g. DE."),
    },
    ["name", "industry", "tier", "ownerId"],
)
def create_account(call: w.Write) -> dict[str, Any]:
    """Create an account. Names are unique; the owner must be an active director or account
    executive.
    """
    state, input = call.state, call.input
    deal_owner(state, input["ownerId"], "accounts")
    assert_name_free(state, input["name"])
    account: Account = {
        "id": w.records.next_id(state, "ACC"),
        "name": input["name"].strip(),
        "industry": input["industry"],
        "tier": input["tier"],
        "ownerId": input["ownerId"],
        "website": input.get("website"),
        "city": input.get("city"),
        "country": input.get("country"),
        "createdDate": w.clock.today(state),
    }
    call.add(ACCOUNT, account, f"Created {input['name']}.")
    return {"created": account_view(state, account)}


#: What update_account may change.
_DESCRIPTIVE = ("name", "industry", "tier", "website", "city", "country")


@update_tool(
    {
        "name": w.schema.string("New name (must stay unique)."),
        "industry": w.schema.string("New industry."),
        "tier": w.schema.enum("New tier.", TIERS),
        "website": w.schema.string("New website URL."),
        "city": w.schema.string("New city."),
        "country": w.schema.string("New two-letter country code."),
    },
    ACCOUNT,
    account_view,
)
def update_account(call: w.Write) -> None:
    """Change an account's name, industry, tier, website, city or country (not its owner: use
    reassign_account).

    A new name must be free (another spelling of the same name is not a clash).
    """
    input, account = call.input, call.record
    if "name" in input and input["name"].strip().lower() != account["name"].lower():
        assert_name_free(call.state, input["name"])
    call.set_given(_DESCRIPTIVE)


reassign_account = reassign_tool(
    "reassign_account",
    "Give an account to another owner (an active director or account executive). Only the "
    "current owner, a director or sales ops may do this. The account's deals are not moved.",
    ACCOUNT,
    account_view,
)
