"""Lookups, the rules about who may act and own, and the audit log: shared by every tool area.

Messages name the rule and the current state, so an agent can recover from a rejection without
guessing (``Opportunity OPP-007 is lost, not open.``).
"""

from __future__ import annotations

from typing import Any

import silo_async as silo

from ..state import (
    OPEN_LEAD_STATUSES,
    Account,
    Activity,
    Contact,
    Lead,
    Opportunity,
    Stage,
    State,
    User,
    can_own_deals,
    full_name,
    next_id,
    now,
)

__all__ = [
    "MANAGING_ROLES",
    "acting_user",
    "assert_may_reassign",
    "audit",
    "check_filters",
    "deal_owner",
    "record_change",
    "require_account",
    "require_activity",
    "require_contact",
    "require_lead",
    "require_open_opportunity",
    "require_opportunity",
    "require_stage",
    "require_user",
    "work_owner",
]

#: Roles that may move other people's work (besides the current owner).
MANAGING_ROLES: tuple[str, ...] = ("director", "sales_ops")


def _not_found(label: str, record_id: str, collection: str) -> silo.ToolError:
    return silo.tool_error(
        "not_found",
        f'{label} "{record_id}" was not found.',
        {"collection": collection, "id": record_id},
    )


def require_user(state: State, user_id: str) -> User:
    """The user with this id, or ``not_found``."""
    user = state["users"].get(user_id)
    if user is None:
        raise _not_found("User", user_id, "users")
    return user


def require_account(state: State, account_id: str) -> Account:
    """The account with this id, or ``not_found``."""
    account = state["accounts"].get(account_id)
    if account is None:
        raise _not_found("Account", account_id, "accounts")
    return account


def require_contact(state: State, contact_id: str) -> Contact:
    """The contact with this id, or ``not_found``."""
    contact = state["contacts"].get(contact_id)
    if contact is None:
        raise _not_found("Contact", contact_id, "contacts")
    return contact


def require_lead(state: State, lead_id: str) -> Lead:
    """The lead with this id, or ``not_found``."""
    lead = state["leads"].get(lead_id)
    if lead is None:
        raise _not_found("Lead", lead_id, "leads")
    return lead


def require_opportunity(state: State, opportunity_id: str) -> Opportunity:
    """The opportunity with this id, or ``not_found``."""
    opp = state["opportunities"].get(opportunity_id)
    if opp is None:
        raise _not_found("Opportunity", opportunity_id, "opportunities")
    return opp


def require_open_opportunity(state: State, opportunity_id: str) -> Opportunity:
    """An open opportunity, or ``invalid_state`` naming its current status."""
    opp = require_opportunity(state, opportunity_id)
    if opp["status"] != "open":
        raise silo.tool_error(
            "invalid_state",
            f"Opportunity {opp['id']} is {opp['status']} (closed {opp['closedDate']}), not open.",
            {"id": opp["id"], "status": opp["status"], "closedDate": opp["closedDate"]},
        )
    return opp


def require_stage(state: State, stage_id: str) -> Stage:
    """The stage with this id, or ``not_found``."""
    stage = state["stages"].get(stage_id)
    if stage is None:
        raise _not_found("Stage", stage_id, "stages")
    return stage


def require_activity(state: State, activity_id: str) -> Activity:
    """The activity with this id, or ``not_found``."""
    activity = state["activities"].get(activity_id)
    if activity is None:
        raise _not_found("Activity", activity_id, "activities")
    return activity


_FILTERS = {
    "ownerId": ("User", "users"),
    "accountId": ("Account", "accounts"),
    "stageId": ("Stage", "stages"),
}


def check_filters(state: State, input: dict[str, Any]) -> None:
    """Ids given as list filters must exist: an unknown id is a mistake, not an empty page."""
    for key, (label, collection) in _FILTERS.items():
        value = input.get(key)
        records: dict[str, Any] = state[collection]  # type: ignore[literal-required]
        if value is not None and value not in records:
            raise _not_found(label, value, collection)


def acting_user(state: State, user_id: str) -> User:
    """The user performing a write: must exist and be active (``not_allowed`` otherwise)."""
    user = require_user(state, user_id)
    if not user["active"]:
        raise silo.tool_error(
            "not_allowed",
            f"User {user['id']} ({full_name(user)}) is deactivated (left {user['endDate']}) "
            "and cannot act.",
            {"id": user["id"], "active": False},
        )
    return user


def _assignable(state: State, user_id: str, what: str) -> User:
    user = require_user(state, user_id)
    if not user["active"]:
        raise silo.tool_error(
            "not_allowed",
            f"User {user['id']} ({full_name(user)}) is deactivated and cannot be given {what}.",
            {"id": user["id"], "active": False},
        )
    return user


def deal_owner(state: State, user_id: str, what: str = "accounts or opportunities") -> User:
    """A valid owner for accounts and deals: active, and a director or account executive."""
    user = _assignable(state, user_id, what)
    if not can_own_deals(user):
        raise silo.tool_error(
            "not_allowed",
            f"User {user['id']} ({full_name(user)}) is {user['role']}; only directors and "
            f"account executives can own {what}.",
            {"id": user["id"], "role": user["role"]},
        )
    return user


def work_owner(state: State, user_id: str, what: str) -> User:
    """A valid owner for leads and activities: any active user."""
    return _assignable(state, user_id, what)


def assert_may_reassign(actor: User, current_owner_id: str, label: str) -> None:
    """Only the current owner, a director or sales ops may move someone's work."""
    if actor["id"] != current_owner_id and actor["role"] not in MANAGING_ROLES:
        raise silo.tool_error(
            "not_allowed",
            f"{full_name(actor)} ({actor['id']}, {actor['role']}) cannot reassign {label}: "
            f"it is owned by {current_owner_id}; only its owner, a director or sales ops can.",
            {"actor": actor["id"], "owner": current_owner_id},
        )


def record_change(record: Any, field: str, value: Any, changes: list[dict[str, Any]]) -> None:
    """Set ``record[field]`` and remember the change for the audit log (no-op when equal)."""
    before = record[field]
    if before != value:
        record[field] = value
        changes.append({"field": field, "from": before, "to": value})


def audit(
    state: State,
    actor_id: str,
    action: str,
    entity_type: str,
    entity_id: str,
    detail: str,
    changes: list[dict[str, Any]] | None = None,
) -> str:
    """Append one event to the audit log and return its id (``AUD-NNNN``)."""
    event_id = next_id(state, "AUD")
    state["auditLog"].append(
        {
            "id": event_id,
            "at": now(state),
            "actorUserId": actor_id,
            "action": action,
            "entityType": entity_type,
            "entityId": entity_id,
            "detail": detail,
            "changes": list(changes or []),
        }
    )
    return event_id


def is_lead_open(lead: Lead) -> bool:
    """A lead still being worked (not converted or disqualified)."""
    return lead["status"] in OPEN_LEAD_STATUSES
