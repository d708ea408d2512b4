"""Members: who works here, their sprint capacity, and departures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import (
    Record,
    State,
    is_departed,
    open_items_for_member,
    over_capacity_by,
    teams_led_by,
)
from .helpers import ACTOR, MEMBER, commit, describe_changes, require
from .views import item_summary, member_summary

__all__ = [
    "create_member",
    "get_member",
    "list_members",
    "offboard_member",
    "search_members",
    "update_member",
]

ROLES = ("engineer", "lead", "manager", "qa", "designer")


def _member_filters(state: State, member: Record, input: Mapping[str, Any]) -> bool:
    return not (input.get("activeOnly") and is_departed(member)) and not (
        input.get("overCapacityOnly") and over_capacity_by(state, member["id"]) == 0
    )


MEMBERS = w.Collection("members", "memberId", "MEM-003", view=member_summary)
list_members = MEMBERS.list_tool(
    "List members (sorted by id) with their active-sprint load, sprint capacity, remaining "
    "capacity and whether they are over capacity. Departed members are included unless "
    "activeOnly is true.",
    filters={
        "teamId": w.schema.string("Only members of this team, e.g. TEAM-001."),
        "role": w.schema.enum("Only members with this role.", ROLES),
    },
    references={"teamId": "teams"},
    extra={
        "activeOnly": w.schema.boolean("Leave out members who have departed."),
        "overCapacityOnly": w.schema.boolean("Only members whose load exceeds their capacity."),
    },
    where=_member_filters,
)

search_members = MEMBERS.search_tool(
    "Find members whose id, name or email contains the query (case-insensitive).", ["name", "email"]
)

get_member = MEMBERS.get_tool(
    "Read one member: profile, load, remaining capacity and every open work item they hold.",
    view=lambda state, member: {
        **member_summary(state, member),
        "openWorkItems": [
            item_summary(state, i) for i in open_items_for_member(state, member["id"])
        ],
    },
)


def _email_owner(state: State, email: str) -> Record | None:
    return next((m for m in state["members"].values() if m["email"] == email), None)


class _NewMember(w.Input):
    name = w.fields.string("Full name.", raw=True)
    email = w.fields.string("Work email, unique across members.", raw=True)
    role = w.fields.enum("Role.", ROLES)
    teamId = w.fields.string(
        "Team to join, e.g. TEAM-002. Omit for no team.", default=None, raw=True
    )
    sprintCapacityPoints = w.fields.integer(
        "Story points the member can take per sprint.", minimum=0, maximum=40, raw=True
    )


@ACTOR.write_tool(_NewMember)
def create_member(call: w.Write[_NewMember]) -> dict[str, Any]:
    """Add a new member. The email must be unused; the team, if given, must exist."""
    state, args = call.state, call.args
    email = args.email.strip().lower()
    if "@" not in email:
        raise silo.tool_error("invalid_input", f'"email" must be an email address; got "{email}".')
    clash = _email_owner(state, email)
    if clash is not None:
        raise silo.tool_error(
            "conflict",
            f"Email {email} already belongs to {clash['id']} ({clash['name']}).",
            {"memberId": clash["id"]},
        )
    team_id = args.teamId
    if team_id is not None:
        require(state, "teams", team_id)
    member: Record = {
        "id": w.records.next_id(state, "MEM"),
        "name": args.name.strip(),
        "email": email,
        "role": args.role,
        "teamId": team_id,
        "sprintCapacityPoints": args.sprintCapacityPoints,
        "joinedOn": w.clock.today(state),
        "departedOn": None,
    }
    audit_id = call.add(MEMBER, member, member["name"])
    return {"created": member_summary(state, member), "auditId": audit_id}


class _MemberChanges(w.Input):
    role = w.fields.enum("New role.", ROLES, default=None)
    email = w.fields.string("New email, unique across members.", default=None, raw=True)
    sprintCapacityPoints = w.fields.integer(
        "New capacity per sprint.", minimum=0, maximum=40, default=None, raw=True
    )


@ACTOR.write_tool(_MemberChanges, target=MEMBER)
def update_member(call: w.Write[_MemberChanges]) -> dict[str, Any]:
    """Change a member's role, email or sprint capacity. Departed members cannot be edited."""
    args, member = call.args, call.record
    if is_departed(member):
        raise silo.tool_error(
            "not_allowed",
            f"{member['id']} ({member['name']}) left on {member['departedOn']}; departed "
            "members cannot be edited.",
        )
    changes: dict[str, Any] = {k: getattr(args, k) for k in w.fields.given(args)}
    if not changes:
        raise silo.tool_error(
            "invalid_input", "Give at least one of role, email or sprintCapacityPoints to change."
        )
    if "email" in changes:
        changes["email"] = changes["email"].strip().lower()
        clash = _email_owner(call.state, changes["email"])
        if clash is not None and clash["id"] != member["id"]:
            raise silo.tool_error("conflict", f"Email {changes['email']} belongs to {clash['id']}.")
    return commit(call, member_summary, describe_changes(member, changes), changes)


class _Departure(w.Input):
    lastDay: w.fields.Field[str] = w.fields.field(
        w.schema.string("Last working day, YYYY-MM-DD."), read=w.fields.read_date
    )


@ACTOR.write_tool(_Departure, target=MEMBER)
def offboard_member(call: w.Write[_Departure]) -> dict[str, Any]:
    """Record that a member has left (their last day). They can no longer act or be assigned work.
    Returns the open work items they still hold, which need new owners.
    """
    state, member = call.state, call.record
    if is_departed(member):
        raise silo.tool_error(
            "conflict",
            f"{member['id']} ({member['name']}) already left on {member['departedOn']}.",
        )
    if member["id"] == call.actor["id"]:
        raise silo.tool_error("not_allowed", "Members cannot offboard themselves.")
    last_day = call.args.lastDay
    if last_day > w.clock.today(state) or last_day < member["joinedOn"]:
        raise silo.tool_error(
            "invalid_input",
            f"lastDay {last_day} must fall between {member['id']}'s start on "
            f"{member['joinedOn']} and today ({w.clock.today(state)}); record a departure once it "
            "happens.",
        )
    lead_of = teams_led_by(state, member["id"])
    if lead_of:
        raise silo.tool_error(
            "invalid_state",
            f"{member['id']} still leads {', '.join(lead_of)}; set a new team lead first.",
            {"teamIds": lead_of},
        )
    member["departedOn"] = last_day
    stranded = [i["id"] for i in open_items_for_member(state, member["id"])]
    audit_id = call.audit(f"Last day {last_day}.")
    return {
        "updated": member_summary(state, member),
        "openWorkItemIds": stranded,
        "auditId": audit_id,
    }
