"""Leads: prospective buyers, from first touch to qualification and conversion."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async.world import (
    audit,
    boolean,
    date,
    define_tool,
    enum,
    get_tool,
    list_tool,
    next_id,
    number,
    read_money,
    require_record,
    search_tool,
    set_field,
    sorted_by_id,
    string,
    today,
)

from ..state import Account, Contact, Lead, State, User, full_name, normalise_email
from .accounts import assert_name_free
from .helpers import (
    ACTOR,
    FILTERS,
    acting_user,
    activities_about,
    deal_owner,
    is_lead_open,
    read_future_date,
    reassign_tool,
    require_starting_stage,
    work_owner,
)
from .opportunities import add_opportunity
from .views import account_view, contact_view, lead_view, opportunity_view

__all__ = [
    "convert_lead",
    "create_lead",
    "disqualify_lead",
    "get_lead",
    "list_leads",
    "qualify_lead",
    "reassign_lead",
    "search_leads",
    "update_lead",
]

STATUSES = ("new", "working", "qualified", "disqualified", "converted")
SOURCES = ("web_form", "referral", "event", "outbound", "partner", "inbound_call")


def _require_open(lead: Lead) -> None:
    if not is_lead_open(lead):
        when = lead["convertedDate"] if lead["status"] == "converted" else None
        suffix = f" on {when}" if when else ""
        raise silo.tool_error(
            "invalid_state",
            f"Lead {lead['id']} is {lead['status']}{suffix}; only new, working or qualified "
            "leads can change.",
            {"id": lead["id"], "status": lead["status"]},
        )


list_leads = list_tool(
    "list_leads",
    "List leads sorted by id, optionally by status, owner or source. Paged.",
    "leads",
    filters={
        "status": enum("Only leads with this status.", STATUSES),
        "ownerId": string("Only leads owned by this user id."),
        "source": enum("Only leads from this source.", SOURCES),
    },
    references=FILTERS,
    view=lead_view,
)

search_leads = search_tool(
    "search_leads",
    "Find leads whose id, name, company or email contains the query (case-insensitive). Paged.",
    "leads",
    lambda state, lead: [full_name(lead), lead["company"], lead["email"]],
    view=lead_view,
)

get_lead = get_tool(
    "get_lead",
    "One lead with its age, days since last contact and its activities.",
    "leads",
    "leadId",
    "LEAD-003",
    view=lambda state, lead: {
        **lead_view(state, lead),
        "activities": activities_about(state, "lead", lead["id"]),
    },
)


@define_tool(
    "create_lead",
    "Create a lead (status new). Emails are unique among open leads.",
    {
        "firstName": string("First name."),
        "lastName": string("Last name."),
        "company": string("Company name."),
        "email": string("Email address."),
        "source": enum("Where the lead came from.", SOURCES),
        "ownerId": string("User id of the owner (any active user)."),
        "title": string("Job title."),
        "phone": string("Phone number."),
        **ACTOR,
    },
    ["firstName", "lastName", "company", "email", "source", "ownerId", "actorId"],
)
def create_lead(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a lead."""
    actor = acting_user(state, input["actorId"])
    work_owner(state, input["ownerId"], "leads")
    for other in state["leads"].values():
        if is_lead_open(other) and normalise_email(other["email"]) == normalise_email(
            input["email"]
        ):
            raise silo.tool_error(
                "conflict",
                f"Open lead {other['id']} ({full_name(other)}) already uses {other['email']}.",
                {"existingId": other["id"]},
            )
    lead_id = next_id(state, "LEAD")
    lead: Lead = {
        "id": lead_id,
        "firstName": input["firstName"].strip(),
        "lastName": input["lastName"].strip(),
        "company": input["company"].strip(),
        "title": input.get("title"),
        "email": input["email"].strip(),
        "phone": input.get("phone"),
        "source": input["source"],
        "status": "new",
        "ownerId": input["ownerId"],
        "createdDate": today(state),
        "lastContactedDate": None,
        "disqualifyReason": None,
        "convertedDate": None,
        "convertedAccountId": None,
        "convertedContactId": None,
        "convertedOpportunityId": None,
    }
    state["leads"][lead_id] = lead
    audit(state, actor["id"], "create_lead", "lead", lead_id, f"Created lead {full_name(lead)}.")
    return {"created": lead_view(state, lead)}


@define_tool(
    "update_lead",
    "Change an open lead's title, phone or email, or record that it was contacted today (a new "
    "lead then becomes working).",
    {
        "leadId": string("Lead id."),
        "title": string("New job title."),
        "phone": string("New phone number."),
        "email": string("New email address."),
        "markContacted": boolean("true records a contact today."),
        **ACTOR,
    },
    ["leadId", "actorId"],
)
def update_lead(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Update an open lead."""
    actor = acting_user(state, input["actorId"])
    lead = require_record(state, "leads", input["leadId"])
    _require_open(lead)
    if not any(input.get(f) for f in ("title", "phone", "email", "markContacted")):
        raise silo.tool_error(
            "invalid_input",
            "Nothing to update: give title, phone, email or markContacted: true.",
        )
    changes: list[dict[str, Any]] = []
    for field in ("title", "phone", "email"):
        if field in input:
            set_field(lead, field, input[field], changes)
    if input.get("markContacted"):
        set_field(lead, "lastContactedDate", today(state), changes)
        if lead["status"] == "new":
            set_field(lead, "status", "working", changes)
    audit(state, actor["id"], "update_lead", "lead", lead["id"], "Updated lead.", changes)
    return {"updated": lead_view(state, lead), "changes": changes}


reassign_lead = reassign_tool(
    "reassign_lead",
    "Give an open lead to another active user. Only its owner, a director or sales ops may.",
    "lead",
    "leadId",
    lead_view,
    _require_open,
)


@define_tool(
    "qualify_lead",
    "Mark a new or working lead as qualified (ready to convert).",
    {"leadId": string("Lead id."), **ACTOR},
    ["leadId", "actorId"],
)
def qualify_lead(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Qualify a lead."""
    actor = acting_user(state, input["actorId"])
    lead = require_record(state, "leads", input["leadId"])
    if lead["status"] not in ("new", "working"):
        raise silo.tool_error(
            "invalid_state",
            f"Lead {lead['id']} is {lead['status']}; only new or working leads can be qualified.",
            {"id": lead["id"], "status": lead["status"]},
        )
    changes: list[dict[str, Any]] = []
    set_field(lead, "status", "qualified", changes)
    audit(state, actor["id"], "qualify_lead", "lead", lead["id"], "Qualified.", changes)
    return {"updated": lead_view(state, lead)}


@define_tool(
    "disqualify_lead",
    "Disqualify an open lead with a reason.",
    {
        "leadId": string("Lead id."),
        "reason": string("Why the lead is not a fit."),
        **ACTOR,
    },
    ["leadId", "reason", "actorId"],
)
def disqualify_lead(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Disqualify a lead."""
    actor = acting_user(state, input["actorId"])
    lead = require_record(state, "leads", input["leadId"])
    _require_open(lead)
    changes: list[dict[str, Any]] = []
    set_field(lead, "status", "disqualified", changes)
    set_field(lead, "disqualifyReason", input["reason"].strip(), changes)
    audit(state, actor["id"], "disqualify_lead", "lead", lead["id"], input["reason"], changes)
    return {"updated": lead_view(state, lead)}


def _conversion_owner(state: State, lead: Lead, owner_id: str | None) -> User:
    if owner_id is not None:
        return deal_owner(state, owner_id, "opportunities")
    owner = state["users"][lead["ownerId"]]
    if not owner["active"] or owner["role"] not in ("director", "account_executive"):
        raise silo.tool_error(
            "not_allowed",
            f"Lead owner {full_name(owner)} ({owner['id']}, {owner['role']}"
            f"{'' if owner['active'] else ', deactivated'}) cannot own the new opportunity; "
            "pass ownerId with an active account executive or director.",
            {"leadOwnerId": owner["id"], "role": owner["role"], "active": owner["active"]},
        )
    return owner


def _conversion_account(
    state: State, lead: Lead, account_id: str | None, owner: User, actor_id: str
) -> tuple[Account, bool]:
    if account_id is not None:
        return require_record(state, "accounts", account_id), False
    assert_name_free(state, lead["company"])
    new_id = next_id(state, "ACC")
    account: Account = {
        "id": new_id,
        "name": lead["company"],
        "industry": "unknown",
        "tier": "smb",
        "ownerId": owner["id"],
        "website": None,
        "city": None,
        "country": None,
        "createdDate": today(state),
    }
    state["accounts"][new_id] = account
    audit(state, actor_id, "convert_lead", "account", new_id, f"Created from {lead['id']}.")
    return account, True


def _conversion_contact(
    state: State, lead: Lead, account: Account, actor_id: str
) -> tuple[Contact, bool]:
    # An active contact at the account with the lead's email is the same person: reuse it.
    for existing in sorted_by_id(state["contacts"]):
        if (
            existing["accountId"] == account["id"]
            and existing["status"] == "active"
            and normalise_email(existing["email"]) == normalise_email(lead["email"])
        ):
            return existing, False
    has_primary = any(
        c["accountId"] == account["id"] and c["isPrimary"] and c["status"] == "active"
        for c in state["contacts"].values()
    )
    new_id = next_id(state, "CON")
    contact: Contact = {
        "id": new_id,
        "accountId": account["id"],
        "firstName": lead["firstName"],
        "lastName": lead["lastName"],
        "title": lead["title"],
        "email": lead["email"],
        "phone": lead["phone"],
        "isPrimary": not has_primary,
        "status": "active",
        "mergedIntoId": None,
        "createdDate": today(state),
    }
    state["contacts"][new_id] = contact
    audit(state, actor_id, "convert_lead", "contact", new_id, f"Created from {lead['id']}.")
    return contact, True


@define_tool(
    "convert_lead",
    "Convert a qualified lead into a customer record and an opportunity. Without accountId a new "
    "account is created from the lead's company (names must be unique); with accountId the lead "
    "joins that existing account. The contact is reused when the account already has one with "
    "the lead's email. The opportunity starts at the first open stage unless stageId is given and "
    "is owned by ownerId, or by the lead's owner when that is an active account executive or "
    "director.",
    {
        "leadId": string("Lead id (must be qualified)."),
        "amount": number("Opportunity amount in USD (positive)."),
        "expectedCloseDate": date("Expected close date, today or later"),
        "opportunityName": string(
            "Name of the new opportunity (default: '<company> opportunity')."
        ),
        "accountId": string("Attach the lead to this existing account instead of creating one."),
        "ownerId": string("User id who will own the opportunity."),
        "stageId": string("Open stage to start in (default: the first open stage)."),
        **ACTOR,
    },
    ["leadId", "amount", "expectedCloseDate", "actorId"],
)
def convert_lead(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Convert a qualified lead."""
    actor = acting_user(state, input["actorId"])
    lead = require_record(state, "leads", input["leadId"])
    if lead["status"] == "converted":
        raise silo.tool_error(
            "invalid_state",
            f"Lead {lead['id']} was already converted on {lead['convertedDate']} (opportunity "
            f"{lead['convertedOpportunityId']}); a lead converts once.",
            {"id": lead["id"], "status": "converted"},
        )
    if lead["status"] != "qualified":
        raise silo.tool_error(
            "invalid_state",
            f"Lead {lead['id']} is {lead['status']}, not qualified; only qualified leads convert.",
            {"id": lead["id"], "status": lead["status"]},
        )
    amount = read_money(input, "amount")
    close = read_future_date(state, input, "expectedCloseDate")
    stage = require_starting_stage(state, input.get("stageId"))
    if "accountId" in input:
        require_record(state, "accounts", input["accountId"])
    owner = _conversion_owner(state, lead, input.get("ownerId"))
    account, account_created = _conversion_account(
        state, lead, input.get("accountId"), owner, actor["id"]
    )
    contact, contact_created = _conversion_contact(state, lead, account, actor["id"])
    opp = add_opportunity(
        state,
        name=input.get("opportunityName", f"{lead['company']} opportunity"),
        account_id=account["id"],
        contact_id=contact["id"],
        owner_id=owner["id"],
        stage=stage,
        amount=amount,
        close=close,
        source_lead_id=lead["id"],
    )
    opp_id = opp["id"]
    audit(state, actor["id"], "convert_lead", "opportunity", opp_id, f"Created from {lead['id']}.")
    changes: list[dict[str, Any]] = []
    set_field(lead, "status", "converted", changes)
    set_field(lead, "convertedDate", today(state), changes)
    set_field(lead, "convertedAccountId", account["id"], changes)
    set_field(lead, "convertedContactId", contact["id"], changes)
    set_field(lead, "convertedOpportunityId", opp_id, changes)
    audit(
        state,
        actor["id"],
        "convert_lead",
        "lead",
        lead["id"],
        f"Converted into {account['id']} / {contact['id']} / {opp_id}.",
        changes,
    )
    return {
        "lead": lead_view(state, lead),
        "account": account_view(state, account),
        "accountCreated": account_created,
        "contact": contact_view(state, contact),
        "contactCreated": contact_created,
        "opportunity": opportunity_view(state, opp),
    }
