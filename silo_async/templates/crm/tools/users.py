"""Users: the sales organisation (read-only here; people are managed outside the CRM)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from silo_async import world as w

from ..state import State, User, full_name
from .views import user_view

__all__ = ["get_user", "list_users", "search_users"]

_ROLES = ("director", "account_executive", "sdr", "sales_ops")


def _active_only(state: State, user: User, input: Mapping[str, Any]) -> bool:
    return not input.get("activeOnly", False) or user["active"]


USERS = w.Collection("users", "userId", "USR-002", view=user_view)
list_users = USERS.list_tool(
    "List users sorted by id, optionally by role or only active ones. Paged.",
    filters={"role": w.schema.enum("Only users with this role.", _ROLES)},
    extra={"activeOnly": w.schema.boolean("Only users who are still active (default false).")},
    where=_active_only,
)

search_users = USERS.search_tool(
    "Find users whose id, name or email contains the query (case-insensitive). Paged.",
    lambda state, u: [full_name(u), u["email"]],
)

get_user = USERS.get_tool(
    "One user with open pipeline, closed-won this year and quota attainment.",
    view=lambda state, user: user_view(state, user, with_performance=True),
)
