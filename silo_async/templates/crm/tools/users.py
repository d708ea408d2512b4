"""Users: the sales organisation (read-only here; people are managed outside the CRM)."""

from __future__ import annotations

from typing import Any

from ..state import State, full_name
from .contract import (
    PAGING,
    boolean,
    by_id,
    crm_tool,
    enum,
    filters_match,
    matches,
    paginate,
    string,
)
from .helpers import require_user
from .views import user_view

__all__ = ["get_user", "list_users", "search_users"]

_ROLES = ("director", "account_executive", "sdr", "sales_ops")


@crm_tool(
    "list_users",
    "List users sorted by id, optionally by role or only active ones. Paged.",
    {
        "role": enum("Only users with this role.", _ROLES),
        "activeOnly": boolean("Only users who are still active (default false)."),
        **PAGING,
    },
)
def list_users(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Users matching the filters."""
    users = [
        user_view(state, u)
        for u in by_id(state["users"])
        if filters_match(input, u, ("role",))
        and (not input.get("activeOnly", False) or u["active"])
    ]
    return paginate(users, input)


@crm_tool(
    "search_users",
    "Find users whose id, name or email contains the query (case-insensitive). Paged.",
    {"query": string("Text to look for."), **PAGING},
    ["query"],
)
def search_users(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Users matching a text query."""
    users = [
        user_view(state, u)
        for u in by_id(state["users"])
        if matches(input["query"], u["id"], full_name(u), u["email"])
    ]
    return paginate(users, input)


@crm_tool(
    "get_user",
    "One user with open pipeline, closed-won this year and quota attainment.",
    {"userId": string("User id, e.g. USR-002.")},
    ["userId"],
)
def get_user(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """A user and their performance."""
    return user_view(state, require_user(state, input["userId"]), with_performance=True)
