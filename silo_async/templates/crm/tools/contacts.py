"""Contacts: the people at accounts, including finding and merging duplicate records."""

from __future__ import annotations

from typing import Any

import silo_async as silo

from ..state import (
    Contact,
    State,
    contact_references,
    duplicate_contact_groups,
    full_name,
    next_id,
    normalise_email,
    today,
)
from .contract import (
    PAGING,
    actor_property,
    boolean,
    by_id,
    crm_tool,
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
    record_change,
    require_account,
    require_contact,
)
from .views import contact_view

__all__ = [
    "create_contact",
    "find_duplicate_contacts",
    "get_contact",
    "list_contacts",
    "merge_contacts",
    "search_contacts",
    "update_contact",
]


def _require_active(contact: Contact) -> None:
    if contact["status"] != "active":
        raise silo.tool_error(
            "invalid_state",
            f"Contact {contact['id']} was merged into {contact['mergedIntoId']} and is no longer "
            "active; use that record.",
            {"id": contact["id"], "mergedIntoId": contact["mergedIntoId"]},
        )


def _assert_email_free(state: State, email: str, except_id: str | None = None) -> None:
    for other in state["contacts"].values():
        if (
            other["id"] != except_id
            and other["status"] == "active"
            and normalise_email(other["email"]) == normalise_email(email)
        ):
            raise silo.tool_error(
                "conflict",
                f"Contact {other['id']} ({full_name(other)}) already uses {other['email']}.",
                {"existingId": other["id"]},
            )


def _make_primary(state: State, contact: Contact, changes: list[dict[str, Any]]) -> None:
    # One primary contact per account: promoting one demotes the other.
    for other in state["contacts"].values():
        if other["accountId"] == contact["accountId"] and other["id"] != contact["id"]:
            other["isPrimary"] = False
    record_change(contact, "isPrimary", True, changes)


@crm_tool(
    "list_contacts",
    "List contacts sorted by id, optionally for one account. Merged duplicates are hidden "
    "unless includeMerged is true. Paged.",
    {
        "accountId": string("Only contacts of this account."),
        "includeMerged": boolean("Also list records merged into another contact (default false)."),
        **PAGING,
    },
)
def list_contacts(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Contacts matching the filters."""
    check_filters(state, input)
    contacts = [
        contact_view(state, c)
        for c in by_id(state["contacts"])
        if filters_match(input, c, ("accountId",))
        and (input.get("includeMerged", False) or c["status"] == "active")
    ]
    return paginate(contacts, input)


@crm_tool(
    "search_contacts",
    "Find contacts whose id, name, email or title contains the query (case-insensitive). Paged.",
    {"query": string("Text to look for."), **PAGING},
    ["query"],
)
def search_contacts(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Contacts matching a text query (merged records included, flagged by status)."""
    contacts = [
        contact_view(state, c)
        for c in by_id(state["contacts"])
        if matches(input["query"], c["id"], full_name(c), c["email"], c["title"])
    ]
    return paginate(contacts, input)


@crm_tool(
    "get_contact",
    "One contact, with the ids of the deals, activities and leads that refer to it.",
    {"contactId": string("Contact id, e.g. CON-004.")},
    ["contactId"],
)
def get_contact(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """A contact and what refers to it."""
    contact = require_contact(state, input["contactId"])
    return {
        **contact_view(state, contact),
        "referencedBy": contact_references(state, contact["id"]),
    }


@crm_tool(
    "create_contact",
    "Create a contact at an account. Emails are unique among active contacts.",
    {
        "accountId": string("Account id."),
        "firstName": string("First name."),
        "lastName": string("Last name."),
        "email": string("Email address."),
        "title": string("Job title."),
        "phone": string("Phone number."),
        "isPrimary": boolean("Make this the account's primary contact (default false)."),
        "actorUserId": actor_property(),
    },
    ["accountId", "firstName", "lastName", "email", "actorUserId"],
)
def create_contact(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a contact."""
    actor = acting_user(state, input["actorUserId"])
    require_account(state, input["accountId"])
    _assert_email_free(state, input["email"])
    contact_id = next_id(state, "CON")
    contact: Contact = {
        "id": contact_id,
        "accountId": input["accountId"],
        "firstName": input["firstName"].strip(),
        "lastName": input["lastName"].strip(),
        "title": input.get("title"),
        "email": input["email"].strip(),
        "phone": input.get("phone"),
        "isPrimary": False,
        "status": "active",
        "mergedIntoId": None,
        "createdDate": today(state),
    }
    state["contacts"][contact_id] = contact
    if input.get("isPrimary", False):
        _make_primary(state, contact, [])
    audit(
        state,
        actor["id"],
        "create_contact",
        "contact",
        contact_id,
        f"Created {full_name(contact)}.",
    )
    return {"created": contact_view(state, contact)}


@crm_tool(
    "update_contact",
    "Change a contact's title, phone or email, or make it the account's primary contact.",
    {
        "contactId": string("Contact id."),
        "title": string("New job title."),
        "phone": string("New phone number."),
        "email": string("New email (must stay unique among active contacts)."),
        "isPrimary": boolean("true makes this the primary contact (demoting the current one)."),
        "actorUserId": actor_property(),
    },
    ["contactId", "actorUserId"],
)
def update_contact(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Update a contact."""
    actor = acting_user(state, input["actorUserId"])
    contact = require_contact(state, input["contactId"])
    _require_active(contact)
    require_some(input, ("title", "phone", "email", "isPrimary"))
    if input.get("isPrimary") is False and contact["isPrimary"]:
        raise silo.tool_error(
            "invalid_state",
            f"Contact {contact['id']} is the primary contact of {contact['accountId']}; make "
            "another contact primary instead of unsetting it.",
        )
    changes: list[dict[str, Any]] = []
    if "email" in input:
        _assert_email_free(state, input["email"], except_id=contact["id"])
        record_change(contact, "email", input["email"].strip(), changes)
    for field in ("title", "phone"):
        if field in input:
            record_change(contact, field, input[field], changes)
    if input.get("isPrimary"):
        _make_primary(state, contact, changes)
    audit(
        state, actor["id"], "update_contact", "contact", contact["id"], "Updated contact.", changes
    )
    return {"updated": contact_view(state, contact), "changes": changes}


@crm_tool(
    "find_duplicate_contacts",
    "Groups of active contacts that share an email address (case-insensitive), oldest record "
    "first in each group.",
    {"accountId": string("Only groups involving this account.")},
)
def find_duplicate_contacts(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Possible duplicate contact records."""
    check_filters(state, input)
    groups = [
        [contact_view(state, c) for c in group]
        for group in duplicate_contact_groups(state)
        if "accountId" not in input or any(c["accountId"] == input["accountId"] for c in group)
    ]
    return {"count": len(groups), "groups": groups}


def _repoint(state: State, old: str, new: str) -> list[str]:
    moved: list[str] = []
    for opp in state["opportunities"].values():
        if opp["primaryContactId"] == old:
            opp["primaryContactId"] = new
            moved.append(opp["id"])
    for activity in state["activities"].values():
        if activity["relatedTo"] == {"type": "contact", "id": old}:
            activity["relatedTo"] = {"type": "contact", "id": new}
            moved.append(activity["id"])
    for lead in state["leads"].values():
        if lead["convertedContactId"] == old:
            lead["convertedContactId"] = new
            moved.append(lead["id"])
    return sorted(moved)


@crm_tool(
    "merge_contacts",
    "Merge a duplicate contact into the record that survives. Deals, activities and leads that "
    "refer to the duplicate are re-pointed to the survivor; blank survivor fields (title, phone) "
    "are filled from the duplicate; the duplicate is kept with status merged.",
    {
        "survivorId": string("Contact id of the record to keep."),
        "duplicateId": string("Contact id of the record to merge away."),
        "actorUserId": actor_property(),
    },
    ["survivorId", "duplicateId", "actorUserId"],
)
def merge_contacts(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Merge two contact records."""
    actor = acting_user(state, input["actorUserId"])
    if input["survivorId"] == input["duplicateId"]:
        raise silo.tool_error("invalid_input", "survivorId and duplicateId must differ.")
    survivor = require_contact(state, input["survivorId"])
    duplicate = require_contact(state, input["duplicateId"])
    _require_active(survivor)
    _require_active(duplicate)
    if survivor["accountId"] != duplicate["accountId"]:
        raise silo.tool_error(
            "invalid_state",
            f"Contact {survivor['id']} belongs to {survivor['accountId']} and {duplicate['id']} "
            f"to {duplicate['accountId']}; only contacts of the same account can be merged.",
        )
    moved = _repoint(state, duplicate["id"], survivor["id"])
    survivor_changes: list[dict[str, Any]] = []
    for field in ("title", "phone"):
        if not survivor[field] and duplicate[field]:
            record_change(survivor, field, duplicate[field], survivor_changes)
    if duplicate["isPrimary"]:
        _make_primary(state, survivor, survivor_changes)
    duplicate_changes: list[dict[str, Any]] = []
    record_change(duplicate, "isPrimary", False, duplicate_changes)
    record_change(duplicate, "status", "merged", duplicate_changes)
    record_change(duplicate, "mergedIntoId", survivor["id"], duplicate_changes)
    repointed = ", ".join(moved) or "nothing"
    detail = f"Merged {duplicate['id']} into {survivor['id']}; re-pointed {repointed}."
    audit(
        state, actor["id"], "merge_contacts", "contact", duplicate["id"], detail, duplicate_changes
    )
    if survivor_changes:
        audit(
            state,
            actor["id"],
            "merge_contacts",
            "contact",
            survivor["id"],
            f"Filled from {duplicate['id']}.",
            survivor_changes,
        )
    return {
        "survivor": contact_view(state, survivor),
        "merged": contact_view(state, duplicate),
        "repointed": moved,
    }
