"""Who may act and own, and the domain rules every tool area shares.

Messages name the rule and the current state, so an agent can recover from a rejection without
guessing (``Opportunity OPP-007 is lost, not open.``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import silo_async as silo
from silo_async import world as w

from ..state import (
    OPEN_LEAD_STATUSES,
    Activity,
    Lead,
    Opportunity,
    Stage,
    State,
    User,
    can_own_deals,
    full_name,
    open_stages,
)

__all__ = [
    "ACCOUNT",
    "ACTIVITY",
    "ACTOR",
    "CONTACT",
    "FILTERS",
    "LEAD",
    "MANAGING_ROLES",
    "OPPORTUNITY",
    "acting_user",
    "activities_about",
    "assert_may_reassign",
    "assert_opportunity_open",
    "deal_owner",
    "future_date",
    "is_lead_open",
    "reassign_owner",
    "reassign_tool",
    "require_starting_stage",
    "update_tool",
    "work_owner",
]

I = TypeVar("I", bound=w.Input)  # noqa: E741 (an update tool's Input)

#: Roles that may move other people's work (besides the current owner).
MANAGING_ROLES: tuple[str, ...] = ("director", "sales_ops")


def assert_opportunity_open(state: State, opp: Opportunity) -> None:
    """``invalid_state`` unless the deal is still open (closed deals are history)."""
    if opp["status"] != "open":
        raise silo.tool_error(
            "invalid_state",
            f"Opportunity {opp['id']} is {opp['status']} (closed {opp['closedDate']}), not open.",
            {"id": opp["id"], "status": opp["status"], "closedDate": opp["closedDate"]},
        )


def require_starting_stage(state: State, stage_id: str | None) -> Stage:
    """The open stage a new deal starts in: ``stage_id``, or the first open stage when None.

    Raises:
        ToolError: ``not_found`` for an unknown stage, ``invalid_input`` for a closed one.
    """
    stage: Stage = w.records.require_record(
        state, "stages", open_stages(state)[0]["id"] if stage_id is None else stage_id
    )
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


#: List filters naming another record, and the collection each must name a record in.
FILTERS = {"ownerId": "users", "accountId": "accounts", "stageId": "stages"}


def acting_user(state: State, user_id: str) -> User:
    """The user performing a write: must exist and be active (``not_allowed`` otherwise)."""
    user: User = w.records.require_record(state, "users", user_id)
    if not user["active"]:
        raise silo.tool_error(
            "not_allowed",
            f"User {user['id']} ({full_name(user)}) is deactivated (left {user['endDate']}) "
            "and cannot act.",
            {"id": user["id"], "active": False},
        )
    return user


#: Every write names its actor: an active user, resolved before anything else.
#: crm reads its ids and texts as given (schema-checked, not stripped): ``raw=True``.
ACTOR = w.Actor(
    w.fields.string(
        "Id of the user making this change, e.g. USR-002. Must be an active user.", raw=True
    ),
    acting_user,
)
#: The records writes act on, looked up by their id input.
ACCOUNT = w.Target("accounts", "accountId", w.fields.string("Account id.", raw=True), "account")
CONTACT = w.Target("contacts", "contactId", w.fields.string("Contact id.", raw=True), "contact")
LEAD = w.Target("leads", "leadId", w.fields.string("Lead id.", raw=True), "lead")
OPPORTUNITY = w.Target(
    "opportunities", "opportunityId", w.fields.string("Opportunity id.", raw=True), "opportunity"
)
ACTIVITY = w.Target(
    "activities", "activityId", w.fields.string("Activity id.", raw=True), "activity"
)


def _assignable(state: State, user_id: str, what: str) -> User:
    user: User = w.records.require_record(state, "users", user_id)
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
_OWNERSHIP: dict[str, tuple[str, Callable[[State, str, str], User]]] = {
    "account": ("accounts", deal_owner),
    "opportunity": ("opportunities", deal_owner),
    "lead": ("leads", work_owner),
    "activity": ("activities", work_owner),
}


def reassign_owner(call: w.Write, kind: str, new_owner_id: str) -> None:
    """Give the call's ``kind`` of record (account, opportunity, lead, activity) a new owner.

    The checks run in this order: the actor may move it, the new owner may own this kind of
    record (see ``_OWNERSHIP``), and the owner really changes. The change is audited.

    Raises:
        ToolError: ``not_allowed`` from the checks, ``conflict`` when nothing would change.
    """
    record = call.record
    what, valid_owner = _OWNERSHIP[kind]
    assert_may_reassign(call.actor, record["ownerId"], f"{kind} {record['id']}")
    valid_owner(call.state, new_owner_id, what)
    if record["ownerId"] == new_owner_id:
        raise silo.tool_error(
            "conflict", f"{kind.capitalize()} {record['id']} is already owned by {new_owner_id}."
        )
    call.set("ownerId", new_owner_id)
    call.audit(f"Owner changed to {new_owner_id}.")


class _NewOwner(w.Input):
    newOwnerId = w.fields.string("User id of the new owner.", raw=True)


def reassign_tool(
    name: str, description: str, target: w.Target, view: Callable[[State, Any], dict[str, Any]]
) -> silo.Tool:
    """The ``reassign_<kind>`` tool: ``{<id>, newOwnerId, actorId}`` -> ``{updated: view}``.

    Args:
        name: the tool name.
        description: what the agent reads.
        target: the kind of record (its ``entity`` is the kind :func:`reassign_owner` checks),
            guarded when the record may not change any more (closed, converted, done).
        view: what the agent sees of the record afterwards.
    """

    @ACTOR.write_tool(name, description, _NewOwner, target=target)
    def reassign(call: w.Write[_NewOwner]) -> dict[str, Any]:
        reassign_owner(call, target.entity, call.args.newOwnerId)
        return {"updated": view(call.state, call.record)}

    return reassign


def update_tool(
    changes: type[I],
    target: w.Target,
    view: Callable[[State, Any], dict[str, Any]],
    require: Callable[[I], None] | None = None,
) -> Callable[[Callable[[w.Write[I]], None]], silo.Tool]:
    """Decorate ``apply(call)`` as the ``update_<kind>`` tool: ``{updated: view, changes}``.

    A call must give at least one of the fields of ``changes`` (``require``, by default
    :func:`w.fields.require_some` over them); ``apply`` checks and sets the fields through the
    :class:`w.Write`, and the changes are audited as ``Updated <kind>.``.

    The tool is named after ``apply`` and described by its docstring, like any write tool.

    Args:
        changes: the fields the tool may change (none of them required).
        target: the kind of record, guarded when it may not change any more.
        view: what the agent sees of the record afterwards.
        require: refuses an input that changes nothing.
    """
    fields = tuple(w.fields.fields_of(changes))

    def make(apply: Callable[[w.Write[I]], None]) -> silo.Tool:
        @ACTOR.write_tool(changes, target=target)
        @functools.wraps(apply)
        def update(call: w.Write[I]) -> dict[str, Any]:
            if require is None:
                w.fields.require_some(call.args, fields)
            else:
                require(call.args)
            apply(call)
            call.audit(f"Updated {target.entity}.")
            return {"updated": view(call.state, call.record), "changes": call.changes}

        return update

    return make


def is_lead_open(lead: Lead) -> bool:
    """A lead still being worked (not converted or disqualified)."""
    return lead["status"] in OPEN_LEAD_STATUSES


def future_date(state: State, key: str, value: str) -> str:
    """``value``, the date field ``key`` (a real ``YYYY-MM-DD`` date), if it is today or later.

    Raises:
        ToolError: ``invalid_input`` for a date in the past.
    """
    if value < w.clock.today(state):
        raise w.fields.invalid(key, f"must be today ({w.clock.today(state)}) or later", value)
    return value
