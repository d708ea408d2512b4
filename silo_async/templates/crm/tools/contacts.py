"""Contacts: the people at accounts, including finding and merging duplicate records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import (
    Contact,
    State,
    contact_references,
    duplicate_contact_groups,
    full_name,
    normalise_email,
)
from .helpers import ACTOR, CONTACT, FILTERS, update_tool
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


def _require_active(state: State, contact: Contact) -> None:
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


def _make_primary(state: State, contact: Contact, changes: list[w.records.Change]) -> None:
    # One primary contact per account: promoting one demotes the other.
    for other in state["contacts"].values():
        if other["accountId"] == contact["accountId"] and other["id"] != contact["id"]:
            other["isPrimary"] = False
    w.records.set_field(contact, "isPrimary", True, changes)


def _include_merged(state: State, contact: Contact, input: Mapping[str, Any]) -> bool:
    return bool(input.get("includeMerged", False)) or contact["status"] == "active"


CONTACTS = w.Collection("contacts", "contactId", "CON-004", view=contact_view)
list_contacts = CONTACTS.list_tool(
    "List contacts sorted by id, optionally for one account. Merged duplicates are hidden "
    "unless includeMerged is true. Paged.",
    filters={"accountId": w.schema.string("Only contacts of this account.")},
    references=FILTERS,
    extra={
        "includeMerged": w.schema.boolean(
            "Also list records merged into another contact (default false)."
        )
    },
    where=_include_merged,
)

search_contacts = CONTACTS.search_tool(
    "Find contacts whose id, name, email or title contains the query (case-insensitive); merged "
    "records are included, flagged by status. Paged.",
    lambda state, c: [full_name(c), c["email"], c["title"]],
)

get_contact = CONTACTS.get_tool(
    "One contact, with the ids of the deals, activities and leads that refer to it.",
    view=lambda state, c: {
        **contact_view(state, c),
        "referencedBy": contact_references(state, c["id"]),
    },
)


#: An active contact: a merged record is kept as history only.
ACTIVE_CONTACT = CONTACT.guarded(_require_active)


@ACTOR.write_tool(
    {
        "accountId": w.schema.string("Account id."),
        "firstName": w.schema.string("First name."),
        "lastName": w.schema.string("Last name."),
        "email": w.schema.string("Email address."),
        "title": w.schema.string("Job title."),
        "phone": w.schema.string("Phone number."),
        "isPrimary": w.schema.boolean("Make this the account's primary contact (default false)."),
    },
    ["accountId", "firstName", "lastName", "email"],
)
def create_contact(call: w.Write) -> dict[str, Any]:
    """Create a contact at an account. Emails are unique among active contacts."""
    state, input = call.state, call.input
    w.records.require_record(state, "accounts", input["accountId"])
    _assert_email_free(state, input["email"])
    contact_id = w.records.next_id(state, "CON")
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
        "createdDate": w.clock.today(state),
    }
    if input.get("isPrimary", False):
        _make_primary(state, contact, [])
    call.add(CONTACT, contact, f"Created {full_name(contact)}.")
    return {"created": contact_view(state, contact)}


@update_tool(
    {
        "title": w.schema.string("New job title."),
        "phone": w.schema.string("New phone number."),
        "email": w.schema.string("New email (must stay unique among active contacts)."),
        "isPrimary": w.schema.boolean(
            "true makes this the primary contact (demoting the current one)."
        ),
    },
    ACTIVE_CONTACT,
    contact_view,
)
def update_contact(call: w.Write) -> None:
    """Change a contact's title, phone or email, or make it the account's primary contact.

    Emails stay unique; the primary contact is replaced, never unset.
    """
    state, input, contact = call.state, call.input, call.record
    if input.get("isPrimary") is False and contact["isPrimary"]:
        raise silo.tool_error(
            "invalid_state",
            f"Contact {contact['id']} is the primary contact of {contact['accountId']}; make "
            "another contact primary instead of unsetting it.",
        )
    if "email" in input:
        _assert_email_free(state, input["email"], except_id=contact["id"])
        call.set("email", input["email"].strip())
    call.set_given(("title", "phone"))
    if input.get("isPrimary"):
        _make_primary(state, contact, call.changes)


@w.define_tool({"accountId": w.schema.string("Only groups involving this account.")})
def find_duplicate_contacts(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Groups of active contacts that share an email address (case-insensitive), oldest record first
    in each group.
    """
    w.records.check_references(state, input, FILTERS)
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


@ACTOR.write_tool(
    {
        "survivorId": w.schema.string("Contact id of the record to keep."),
        "duplicateId": w.schema.string("Contact id of the record to merge away."),
    },
    ["survivorId", "duplicateId"],
)
def merge_contacts(call: w.Write) -> dict[str, Any]:
    """Merge a duplicate contact into the record that survives. Deals, activities and leads that
    refer to the duplicate are re-pointed to the survivor; blank survivor fields (title, phone)
    are filled from the duplicate; the duplicate is kept with status merged.
    """
    state, input = call.state, call.input
    if input["survivorId"] == input["duplicateId"]:
        raise silo.tool_error("invalid_input", "survivorId and duplicateId must differ.")
    survivor = w.records.require_record(state, "contacts", input["survivorId"])
    duplicate = w.records.require_record(state, "contacts", input["duplicateId"])
    _require_active(state, survivor)
    _require_active(state, duplicate)
    if survivor["accountId"] != duplicate["accountId"]:
        raise silo.tool_error(
            "invalid_state",
            f"Contact {survivor['id']} belongs to {survivor['accountId']} and {duplicate['id']} "
            f"to {duplicate['accountId']}; only contacts of the same account can be merged.",
        )
    moved = _repoint(state, duplicate["id"], survivor["id"])
    filled: list[w.records.Change] = []
    for field in ("title", "phone"):
        if not survivor[field] and duplicate[field]:
            w.records.set_field(survivor, field, duplicate[field], filled)
    if duplicate["isPrimary"]:
        _make_primary(state, survivor, filled)
    call.set("isPrimary", False, duplicate)
    call.set("status", "merged", duplicate)
    call.set("mergedIntoId", survivor["id"], duplicate)
    repointed = ", ".join(moved) or "nothing"
    detail = f"Merged {duplicate['id']} into {survivor['id']}; re-pointed {repointed}."
    call.audit(detail, entity="contact", entity_id=duplicate["id"])
    if filled:
        call.audit(
            f"Filled from {duplicate['id']}.", filled, entity="contact", entity_id=survivor["id"]
        )
    return {
        "survivor": contact_view(state, survivor),
        "merged": contact_view(state, duplicate),
        "repointed": moved,
    }
