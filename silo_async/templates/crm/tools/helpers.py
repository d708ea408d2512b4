"""Lookups, the rules about who may act and own, and the audit log: shared by every tool area.

Messages name the rule and the current state, so an agent can recover from a rejection without
guessing (``Opportunity OPP-007 is lost, not open.``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

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
    open_stages,
)

__all__ = [
    "MANAGING_ROLES",
    "acting_user",
    "activities_about",
    "assert_may_reassign",
    "audit",
    "check_filters",
    "deal_owner",
    "not_found",
    "reassign_owner",
    "record_change",
    "require_account",
    "require_activity",
    "require_contact",
    "require_lead",
    "require_open_opportunity",
    "require_opportunity",
    "require_stage",
    "require_starting_stage",
    "require_user",
    "work_owner",
]

#: Roles that may move other people's work (besides the current owner).
MANAGING_ROLES: tuple[str, ...] = ("director", "sales_ops")

T = TypeVar("T")
#: The records that have an owner and can be reassigned.
Owned = Account | Lead | Opportunity | Activity
OwnedKind = Literal["account", "opportunity", "lead", "activity"]


def not_found(label: str, record_id: str, collection: str) -> silo.ToolError:
    """The ``not_found`` error for ``record_id`` in ``collection`` (``label`` names its kind)."""
    return silo.tool_error(
        "not_found",
        f'{label} "{record_id}" was not found.',
        {"collection": collection, "id": record_id},
    )


def _require(records: Mapping[str, T], record_id: str, label: str, collection: str) -> T:
    record = records.get(record_id)
    if record is None:
        raise not_found(label, record_id, collection)
    return record


def require_user(state: State, user_id: str) -> User:
    """The user with this id, or ``not_found``."""
    return _require(state["users"], user_id, "User", "users")


def require_account(state: State, account_id: str) -> Account:
    """The account with this id, or ``not_found``."""
    return _require(state["accounts"], account_id, "Account", "accounts")


def require_contact(state: State, contact_id: str) -> Contact:
    """The contact with this id, or ``not_found``."""
    return _require(state["contacts"], contact_id, "Contact", "contacts")


def require_lead(state: State, lead_id: str) -> Lead:
    """The lead with this id, or ``not_found``."""
    return _require(state["leads"], lead_id, "Lead", "leads")


def require_opportunity(state: State, opportunity_id: str) -> Opportunity:
    """The opportunity with this id, or ``not_found``."""
    return _require(state["opportunities"], opportunity_id, "Opportunity", "opportunities")


def require_stage(state: State, stage_id: str) -> Stage:
    """The stage with this id, or ``not_found``."""
    return _require(state["stages"], stage_id, "Stage", "stages")


def require_activity(state: State, activity_id: str) -> Activity:
    """The activity with this id, or ``not_found``."""
    return _require(state["activities"], activity_id, "Activity", "activities")


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


def require_starting_stage(state: State, stage_id: str | None) -> Stage:
    """The open stage a new deal starts in: ``stage_id``, or the first open stage when None.

    Raises:
        ToolError: ``not_found`` for an unknown stage, ``invalid_input`` for a closed one.
    """
    stage = require_stage(state, open_stages(state)[0]["id"] if stage_id is None else stage_id)
    if stage["isClosed"]:
        raise silo.tool_error(
            "invalid_input",
            f"Stage {stage['id']} ({stage['name']}) is closed; a new opportunity starts in an "
            "open stage.",
        )
    return stage


def activities_about(state: State, related_type: str, related_id: str) -> list[Activity]:
    """The activities attached to one record, sorted by id."""
    return sorted(
        (
            a
            for a in state["activities"].values()
            if a["relatedTo"] == {"type": related_type, "id": related_id}
        ),
        key=lambda a: a["id"],
    )


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
            raise not_found(label, value, collection)


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


#: Each kind of owned record: what its plural is called in messages, and who may own it.
_OWNERSHIP: dict[OwnedKind, tuple[str, Callable[[State, str, str], User]]] = {
    "account": ("accounts", deal_owner),
    "opportunity": ("opportunities", deal_owner),
    "lead": ("leads", work_owner),
    "activity": ("activities", work_owner),
}


def reassign_owner(
    state: State, actor: User, record: Owned, kind: OwnedKind, new_owner_id: str
) -> None:
    """Give ``record`` (an account, opportunity, lead or activity) to a new owner, audited.

    The checks run in this order: the actor may move it, the new owner may own this ``kind``
    (see ``_OWNERSHIP``), and the owner really changes. The audit action is ``reassign_<kind>``.

    Raises:
        ToolError: ``not_allowed`` from the checks, ``conflict`` when nothing would change.
    """
    what, valid_owner = _OWNERSHIP[kind]
    assert_may_reassign(actor, record["ownerId"], f"{kind} {record['id']}")
    valid_owner(state, new_owner_id, what)
    if record["ownerId"] == new_owner_id:
        raise silo.tool_error(
            "conflict", f"{kind.capitalize()} {record['id']} is already owned by {new_owner_id}."
        )
    changes: list[dict[str, Any]] = []
    record_change(record, "ownerId", new_owner_id, changes)
    audit(
        state,
        actor["id"],
        f"reassign_{kind}",
        kind,
        record["id"],
        f"Owner changed to {new_owner_id}.",
        changes,
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
