"""Leads: prospective buyers, from first touch to qualification and conversion."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import (
    Account,
    Contact,
    Lead,
    State,
    User,
    can_own_deals,
    full_name,
    normalise_email,
)
from .accounts import assert_name_free
from .helpers import (
    ACCOUNT,
    ACTOR,
    CONTACT,
    FILTERS,
    LEAD,
    OPPORTUNITY,
    activities_about,
    deal_owner,
    future_date,
    is_lead_open,
    reassign_tool,
    require_starting_stage,
    update_tool,
    work_owner,
)
from .opportunities import new_opportunity
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


def _require_open(state: State, lead: Lead) -> None:
    if not is_lead_open(lead):
        when = lead["convertedDate"] if lead["status"] == "converted" else None
        suffix = f" on {when}" if when else ""
        raise silo.tool_error(
            "invalid_state",
            f"Lead {lead['id']} is {lead['status']}{suffix}; only new, working or qualified "
            "leads can change.",
            {"id": lead["id"], "status": lead["status"]},
        )


#: A lead that is still being worked: anything else is history.
OPEN_LEAD = LEAD.guarded(_require_open)

LEADS = w.Collection("leads", "leadId", "LEAD-003", view=lead_view)
list_leads = LEADS.list_tool(
    "List leads sorted by id, optionally by status, owner or source. Paged.",
    filters={
        "status": w.schema.enum("Only leads with this status.", STATUSES),
        "ownerId": w.schema.string("Only leads owned by this user id."),
        "source": w.schema.enum("Only leads from this source.", SOURCES),
    },
    references=FILTERS,
)

search_leads = LEADS.search_tool(
    "Find leads whose id, name, company or email contains the query (case-insensitive). Paged.",
    lambda state, lead: [full_name(lead), lead["company"], lead["email"]],
)

get_lead = LEADS.get_tool(
    "One lead with its age, days since last contact and its activities.",
    view=lambda state, lead: {
        **lead_view(state, lead),
        "activities": activities_about(state, "lead", lead["id"]),
    },
)


class _NewLead(w.Input):
    firstName = w.fields.string("First name.", raw=True)
    lastName = w.fields.string("Last name.", raw=True)
    company = w.fields.string("Company name.", raw=True)
    email = w.fields.string("Email address.", raw=True)
    source = w.fields.enum("Where the lead came from.", SOURCES)
    ownerId = w.fields.string("User id of the owner (any active user).", raw=True)
    title = w.fields.string("Job title.", default=None, raw=True)
    phone = w.fields.string("Phone number.", default=None, raw=True)


@ACTOR.write_tool(_NewLead)
def create_lead(call: w.Write[_NewLead]) -> dict[str, Any]:
    """Create a lead (status new). Emails are unique among open leads."""
    state, args = call.state, call.args
    work_owner(state, args.ownerId, "leads")
    for other in state["leads"].values():
        if is_lead_open(other) and normalise_email(other["email"]) == normalise_email(args.email):
            raise silo.tool_error(
                "conflict",
                f"Open lead {other['id']} ({full_name(other)}) already uses {other['email']}.",
                {"existingId": other["id"]},
            )
    lead_id = w.records.next_id(state, "LEAD")
    lead: Lead = {
        "id": lead_id,
        "firstName": args.firstName.strip(),
        "lastName": args.lastName.strip(),
        "company": args.company.strip(),
        "title": args.title,
        "email": args.email.strip(),
        "phone": args.phone,
        "source": args.source,
        "status": "new",
        "ownerId": args.ownerId,
        "createdDate": w.clock.today(state),
        "lastContactedDate": None,
        "disqualifyReason": None,
        "convertedDate": None,
        "convertedAccountId": None,
        "convertedContactId": None,
        "convertedOpportunityId": None,
    }
    call.add(LEAD, lead, f"Created lead {full_name(lead)}.")
    return {"created": lead_view(state, lead)}


class _LeadChanges(w.Input):
    title = w.fields.string("New job title.", default=None, raw=True)
    phone = w.fields.string("New phone number.", default=None, raw=True)
    email = w.fields.string("New email address.", default=None, raw=True)
    markContacted = w.fields.boolean("true records a contact today.", default=False)


def _something_to_update(args: _LeadChanges) -> None:
    if not any((args.title, args.phone, args.email, args.markContacted)):
        raise silo.tool_error(
            "invalid_input",
            "Nothing to update: give title, phone, email or markContacted: true.",
        )


@update_tool(_LeadChanges, OPEN_LEAD, lead_view, _something_to_update)
def update_lead(call: w.Write[_LeadChanges]) -> None:
    """Change an open lead's title, phone or email, or record that it was contacted today (a new
    lead then becomes working).

    A contact today moves a new lead to working.
    """
    call.set_given(("title", "phone", "email"))
    if call.args.markContacted:
        call.set("lastContactedDate", w.clock.today(call.state))
        if call.record["status"] == "new":
            call.set("status", "working")


reassign_lead = reassign_tool(
    "reassign_lead",
    "Give an open lead to another active user. Only its owner, a director or sales ops may.",
    OPEN_LEAD,
    lead_view,
)


def _qualifiable(state: State, lead: Lead) -> None:
    if lead["status"] not in ("new", "working"):
        raise silo.tool_error(
            "invalid_state",
            f"Lead {lead['id']} is {lead['status']}; only new or working leads can be qualified.",
            {"id": lead["id"], "status": lead["status"]},
        )


@ACTOR.write_tool(target=LEAD.guarded(_qualifiable))
def qualify_lead(call: w.Write) -> dict[str, Any]:
    """Mark a new or working lead as qualified (ready to convert)."""
    call.set("status", "qualified")
    call.audit("Qualified.")
    return {"updated": lead_view(call.state, call.record)}


class _Disqualification(w.Input):
    reason = w.fields.string("Why the lead is not a fit.", raw=True)


@ACTOR.write_tool(_Disqualification, target=OPEN_LEAD)
def disqualify_lead(call: w.Write[_Disqualification]) -> dict[str, Any]:
    """Disqualify an open lead with a reason."""
    call.set("status", "disqualified")
    call.set("disqualifyReason", call.args.reason.strip())
    call.audit(call.args.reason)
    return {"updated": lead_view(call.state, call.record)}


def _conversion_owner(state: State, lead: Lead, owner_id: str | None) -> User:
    if owner_id is not None:
        return deal_owner(state, owner_id, "opportunities")
    owner = state["users"][lead["ownerId"]]
    if not owner["active"] or not can_own_deals(owner):
        raise silo.tool_error(
            "not_allowed",
            f"Lead owner {full_name(owner)} ({owner['id']}, {owner['role']}"
            f"{'' if owner['active'] else ', deactivated'}) cannot own the new opportunity; "
            "pass ownerId with an active account executive or director.",
            {"leadOwnerId": owner["id"], "role": owner["role"], "active": owner["active"]},
        )
    return owner


def _conversion_account(
    call: w.Write[_Conversion], lead: Lead, account_id: str | None, owner: User
) -> tuple[Account, bool]:
    state = call.state
    if account_id is not None:
        return w.records.require_record(state, "accounts", account_id), False
    assert_name_free(state, lead["company"])
    new_id = w.records.next_id(state, "ACC")
    account: Account = {
        "id": new_id,
        "name": lead["company"],
        "industry": "unknown",
        "tier": "smb",
        "ownerId": owner["id"],
        "website": None,
        "city": None,
        "country": None,
        "createdDate": w.clock.today(state),
    }
    call.add(ACCOUNT, account, f"Created from {lead['id']}.")
    return account, True


def _conversion_contact(
    call: w.Write[_Conversion], lead: Lead, account: Account
) -> tuple[Contact, bool]:
    state = call.state
    # An active contact at the account with the lead's email is the same person: reuse it.
    for existing in w.tools.sorted_by_id(state["contacts"]):
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
    new_id = w.records.next_id(state, "CON")
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
        "createdDate": w.clock.today(state),
    }
    call.add(CONTACT, contact, f"Created from {lead['id']}.")
    return contact, True


def _convertible(state: State, lead: Lead) -> None:
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


class _Conversion(w.Input):
    amount: w.fields.Field[float] = w.fields.field(
        w.schema.number("Opportunity amount in USD (positive)."), read=w.fields.read_money
    )
    expectedCloseDate = w.fields.date("Expected close date, today or later")
    opportunityName = w.fields.string(
        "Name of the new opportunity (default: '<company> opportunity').", default=None, raw=True
    )
    accountId = w.fields.string(
        "Attach the lead to this existing account instead of creating one.",
        default=None,
        raw=True,
    )
    ownerId = w.fields.string("User id who will own the opportunity.", default=None, raw=True)
    stageId = w.fields.string(
        "Open stage to start in (default: the first open stage).", default=None, raw=True
    )


@ACTOR.write_tool(
    _Conversion,
    target=w.Target(
        "leads",
        "leadId",
        w.fields.string("Lead id (must be qualified).", raw=True),
        "lead",
        _convertible,
    ),
)
def convert_lead(call: w.Write[_Conversion]) -> dict[str, Any]:
    """Convert a qualified lead into a customer record and an opportunity. Without accountId a new
    account is created from the lead's company (names must be unique); with accountId the lead
    joins that existing account. The contact is reused when the account already has one with the
    lead's email. The opportunity starts at the first open stage unless stageId is given and is
    owned by ownerId, or by the lead's owner when that is an active account executive or
    director.
    """
    state, args, lead = call.state, call.args, call.record
    amount = args.amount
    close = future_date(state, "expectedCloseDate", args.expectedCloseDate)
    stage = require_starting_stage(state, args.stageId)
    if args.accountId is not None:
        w.records.require_record(state, "accounts", args.accountId)
    owner = _conversion_owner(state, lead, args.ownerId)
    account, account_created = _conversion_account(call, lead, args.accountId, owner)
    contact, contact_created = _conversion_contact(call, lead, account)
    name = args.opportunityName
    opp = new_opportunity(
        state,
        name=f"{lead['company']} opportunity" if name is None else name,
        account_id=account["id"],
        contact_id=contact["id"],
        owner_id=owner["id"],
        stage=stage,
        amount=amount,
        close=close,
        source_lead_id=lead["id"],
    )
    opp_id = opp["id"]
    call.add(OPPORTUNITY, opp, f"Created from {lead['id']}.")
    call.set("status", "converted")
    call.set("convertedDate", w.clock.today(state))
    call.set("convertedAccountId", account["id"])
    call.set("convertedContactId", contact["id"])
    call.set("convertedOpportunityId", opp_id)
    call.audit(f"Converted into {account['id']} / {contact['id']} / {opp_id}.")
    return {
        "lead": lead_view(state, lead),
        "account": account_view(state, account),
        "accountCreated": account_created,
        "contact": contact_view(state, contact),
        "contactCreated": contact_created,
        "opportunity": opportunity_view(state, opp),
    }
