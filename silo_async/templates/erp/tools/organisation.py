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


list_departments = w.list_tool(
    "list_departments",
    "List departments (each is a cost centre) with their manager. Paged.",
    "departments",
)
get_department = w.get_tool(
    "get_department",
    "One department with its people and budgets.",
    "departments",
    "departmentId",
    "DEP-004",
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
list_roles = w.list_tool(
    "list_roles",
    "List roles with their approval limits per kind of document (EUR; a kind not listed "
    "cannot be approved by the role). Paged.",
    "roles",
)
get_role = w.get_tool(
    "get_role",
    "One role with its approval limits and the users who hold it.",
    "roles",
    "roleId",
    "buyer",
    view=lambda state, role: {
        **role,
        "userIds": sorted(u["id"] for u in state["users"].values() if u["roleId"] == role["id"]),
    },
)
list_users = w.list_tool(
    "list_users",
    "List users sorted by id with role, department and approval limits; filter by role, "
    "department or whether they are active. Paged.",
    "users",
    filters={
        "roleId": w.string("Only users with this role, e.g. buyer."),
        "departmentId": w.string("Only users of this department."),
        "active": w.boolean("Only active (true) or departed (false) users."),
    },
    references={"roleId": "roles", "departmentId": "departments"},
    view=user_view,
)
search_users = w.search_tool(
    "search_users",
    "Find users whose id, name or email contains the query. Paged.",
    "users",
    lambda state, u: [full_name(u), u["email"]],
    view=user_view,
)
get_user = w.get_tool("get_user", "One user.", "users", "userId", "USR-003", view=user_view)


@w.define_tool(
    {
        "userId": w.string("The user to check."),
        "documentType": w.enum("The kind of document.", APPROVAL_KINDS),
        "amount": w.money("The amount to approve."),
    },
    ["userId", "documentType", "amount"],
)
def check_approval_authority(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Whether a user may approve an amount of one kind of document, and if not, the active users
    who may (lowest limit first). Limits compare with net amounts for requisitions and purchase
    orders and with the amount payable for vendor invoices and payments.

    ``{authorised, limit, escalateTo}``.
    """
    user = w.require_record(state, "users", w.read_string(input, "userId"))
    kind = w.read_enum(input, "documentType", APPROVAL_KINDS)
    amount = w.read_money(input, "amount", allow_zero=True)
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
