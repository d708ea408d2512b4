"""The company, its departments, roles, people, and who may approve what."""

from __future__ import annotations

from typing import Any

from silo_async import world as w

from ..state import (
    APPROVAL_KINDS,
    State,
    approval_limit,
    authorised_approvers,
    full_name,
    is_authorised,
)
from .common import named

__all__ = [
    "check_approval_authority",
    "get_company_profile",
    "get_department",
    "get_role",
    "get_user",
    "list_departments",
    "list_roles",
    "list_users",
    "search_users",
    "user_view",
]


def user_view(state: State, user: Any) -> dict[str, Any]:
    """A user with their name, role and approval limits."""
    role = state["roles"][user["roleId"]]
    return {
        **user,
        "name": full_name(user),
        "roleName": role["name"],
        "approvalLimits": dict(role["approvalLimits"]),
    }


@w.define_tool()
def get_company_profile(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """The company (name, currency, fiscal year) and its policies: VAT rate, three-way match
    tolerances, the receipt rule for expenses, payment terms and which roles may do what.

    ``{company, policies}``.
    """
    return {"company": state["company"], "policies": state["policies"]}


DEPARTMENTS = w.Collection("departments", "departmentId", "DEP-004")
list_departments = DEPARTMENTS.list_tool(
    "List departments (each is a cost centre) with their manager. Paged."
)
get_department = DEPARTMENTS.get_tool(
    "One department with its people and budgets.",
    view=lambda state, dep: {
        **dep,
        "userIds": sorted(
            u["id"] for u in state["users"].values() if u["departmentId"] == dep["id"]
        ),
        "budgetIds": sorted(
            b["id"] for b in state["budgets"].values() if b["departmentId"] == dep["id"]
        ),
    },
)
ROLES = w.Collection("roles", "roleId", "buyer")
list_roles = ROLES.list_tool(
    "List roles with their approval limits per kind of document (EUR; a kind not listed "
    "cannot be approved by the role). Paged."
)
get_role = ROLES.get_tool(
    "One role with its approval limits and the users who hold it.",
    view=lambda state, role: {
        **role,
        "userIds": sorted(u["id"] for u in state["users"].values() if u["roleId"] == role["id"]),
    },
)
USERS = w.Collection("users", "userId", "USR-003", view=user_view)
list_users = USERS.list_tool(
    "List users sorted by id with role, department and approval limits; filter by role, "
    "department or whether they are active. Paged.",
    filters={
        "roleId": w.schema.string("Only users with this role, e.g. buyer."),
        "departmentId": w.schema.string("Only users of this department."),
        "active": w.schema.boolean("Only active (true) or departed (false) users."),
    },
    references={"roleId": "roles", "departmentId": "departments"},
)
search_users = USERS.search_tool(
    "Find users whose id, name or email contains the query. Paged.",
    lambda state, u: [full_name(u), u["email"]],
)
get_user = USERS.get_tool("One user.")


class _Authority(w.Input):
    userId = w.fields.string("The user to check.")
    documentType = w.fields.enum("The kind of document.", APPROVAL_KINDS)
    amount = w.fields.money("The amount to approve.", allow_zero=True)


@w.define_tool(_Authority)
def check_approval_authority(state: State, args: _Authority) -> dict[str, Any]:
    """Whether a user may approve an amount of one kind of document, and if not, the active users
    who may (lowest limit first). Limits compare with net amounts for requisitions and purchase
    orders and with the amount payable for vendor invoices and payments.

    ``{authorised, limit, escalateTo}``.
    """
    user = named(state, "users", args.userId)
    kind, amount = args.documentType, args.amount
    others = authorised_approvers(state, kind, amount, [user["id"]])
    return {
        "userId": user["id"],
        "documentType": kind,
        "amount": amount,
        "limit": approval_limit(state, user, kind),
        "active": user["active"],
        "authorised": is_authorised(state, user, kind, amount),
        "escalateTo": [
            {
                "userId": u["id"],
                "name": full_name(u),
                "roleId": u["roleId"],
                "limit": approval_limit(state, u, kind),
            }
            for u in others
        ],
    }
