"""Accounts: the customer and prospect organisations, and who owns them."""

from __future__ import annotations

from typing import Any, get_args

import silo_async as silo
from silo_async import world as w

from ..state import Account, State, Tier, open_opportunities, total_amount, total_weighted
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

TIERS: tuple[Tier, ...] = get_args(Tier)


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


class _NewAccount(w.Input):
    name = w.fields.string("Organisation name.", raw=True)
    industry = w.fields.string("Industry, e.g. clinical_lab, pharma, food_safety.", raw=True)
    tier = w.fields.enum("Size tier.", TIERS)
    ownerId = w.fields.string("User id of the owner.", raw=True)
    website = w.fields.string("Website URL.", default=None, raw=True)
    city = w.fields.string("City.", default=None, raw=True)
    country = w.fields.string("Two-letter country code, e.g. DE.", default=None, raw=True)


@ACTOR.write_tool(_NewAccount)
def create_account(call: w.Write[_NewAccount]) -> dict[str, Any]:
    """Create an account. Names are unique; the owner must be an active director or account
    executive.
    """
    state, args = call.state, call.args
    deal_owner(state, args.ownerId, "accounts")
    assert_name_free(state, args.name)
    account: Account = {
        "id": w.records.next_id(state, "ACC"),
        "name": args.name.strip(),
        "industry": args.industry,
        "tier": args.tier,
        "ownerId": args.ownerId,
        "website": args.website,
        "city": args.city,
        "country": args.country,
        "createdDate": w.clock.today(state),
    }
    call.add(ACCOUNT, account, f"Created {args.name}.")
    return {"created": account_view(state, account)}


class _AccountChanges(w.Input):
    name = w.fields.string("New name (must stay unique).", default=None, raw=True)
    industry = w.fields.string("New industry.", default=None, raw=True)
    tier = w.fields.enum("New tier.", TIERS, default=None)
    website = w.fields.string("New website URL.", default=None, raw=True)
    city = w.fields.string("New city.", default=None, raw=True)
    country = w.fields.string("New two-letter country code.", default=None, raw=True)


@update_tool(_AccountChanges, ACCOUNT, account_view)
def update_account(call: w.Write[_AccountChanges]) -> None:
    """Change an account's name, industry, tier, website, city or country (not its owner: use
    reassign_account).

    A new name must be free (another spelling of the same name is not a clash).
    """
    name, account = call.args.name, call.record
    if name is not None and name.strip().lower() != account["name"].lower():
        assert_name_free(call.state, name)
    call.set_given(tuple(w.fields.fields_of(_AccountChanges)))


reassign_account = reassign_tool(
    "reassign_account",
    "Give an account to another owner (an active director or account executive). Only the "
    "current owner, a director or sales ops may do this. The account's deals are not moved.",
    ACCOUNT,
    account_view,
)
