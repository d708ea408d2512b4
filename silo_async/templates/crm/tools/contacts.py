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


class _NewContact(w.Input):
    accountId = w.fields.string("Account id.", raw=True)
    firstName = w.fields.string("First name.", raw=True)
    lastName = w.fields.string("Last name.", raw=True)
    email = w.fields.string("Email address.", raw=True)
    title = w.fields.string("Job title.", default=None, raw=True)
    phone = w.fields.string("Phone number.", default=None, raw=True)
    isPrimary = w.fields.boolean(
        "Make this the account's primary contact (default false).", default=False
    )


@ACTOR.write_tool(_NewContact)
def create_contact(call: w.Write[_NewContact]) -> dict[str, Any]:
    """Create a contact at an account. Emails are unique among active contacts."""
    state, args = call.state, call.args
    w.records.require_record(state, "accounts", args.accountId)
    _assert_email_free(state, args.email)
    contact_id = w.records.next_id(state, "CON")
    contact: Contact = {
        "id": contact_id,
        "accountId": args.accountId,
        "firstName": args.firstName.strip(),
        "lastName": args.lastName.strip(),
        "title": args.title,
        "email": args.email.strip(),
        "phone": args.phone,
        "isPrimary": False,
        "status": "active",
        "mergedIntoId": None,
        "createdDate": w.clock.today(state),
    }
    if args.isPrimary:
        _make_primary(state, contact, [])
    call.add(CONTACT, contact, f"Created {full_name(contact)}.")
    return {"created": contact_view(state, contact)}


class _ContactChanges(w.Input):
    title = w.fields.string("New job title.", default=None, raw=True)
    phone = w.fields.string("New phone number.", default=None, raw=True)
    email = w.fields.string(
        "New email (must stay unique among active contacts).", default=None, raw=True
    )
    isPrimary = w.fields.boolean(
        "true makes this the primary contact (demoting the current one).", default=None
    )


@update_tool(_ContactChanges, ACTIVE_CONTACT, contact_view)
def update_contact(call: w.Write[_ContactChanges]) -> None:
    """Change a contact's title, phone or email, or make it the account's primary contact.

    Emails stay unique; the primary contact is replaced, never unset.
    """
    state, args, contact = call.state, call.args, call.record
    if args.isPrimary is False and contact["isPrimary"]:
        raise silo.tool_error(
            "invalid_state",
            f"Contact {contact['id']} is the primary contact of {contact['accountId']}; make "
            "another contact primary instead of unsetting it.",
        )
    if args.email is not None:
        _assert_email_free(state, args.email, except_id=contact["id"])
        call.set("email", args.email.strip())
    call.set_given(("title", "phone"))
    if args.isPrimary:
        _make_primary(state, contact, call.changes)


class _AccountFilter(w.Input):
    accountId = w.fields.string("Only groups involving this account.", default=None, raw=True)


@w.define_tool(_AccountFilter)
def find_duplicate_contacts(state: State, args: _AccountFilter) -> dict[str, Any]:
    """Groups of active contacts that share an email address (case-insensitive), oldest record first
    in each group.
    """
    w.records.check_references(state, args, FILTERS)
    account_id = args.accountId
    groups = [
        [contact_view(state, c) for c in group]
        for group in duplicate_contact_groups(state)
        if account_id is None or any(c["accountId"] == account_id for c in group)
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


class _Merge(w.Input):
    survivorId = w.fields.string("Contact id of the record to keep.", raw=True)
    duplicateId = w.fields.string("Contact id of the record to merge away.", raw=True)


@ACTOR.write_tool(_Merge)
def merge_contacts(call: w.Write[_Merge]) -> dict[str, Any]:
    """Merge a duplicate contact into the record that survives. Deals, activities and leads that
    refer to the duplicate are re-pointed to the survivor; blank survivor fields (title, phone)
    are filled from the duplicate; the duplicate is kept with status merged.
    """
    state, args = call.state, call.args
    if args.survivorId == args.duplicateId:
        raise silo.tool_error("invalid_input", "survivorId and duplicateId must differ.")
    survivor = w.records.require_record(state, "contacts", args.survivorId)
    duplicate = w.records.require_record(state, "contacts", args.duplicateId)
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
