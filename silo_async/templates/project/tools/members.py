"""Members: who works here, their sprint capacity, and departures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world import (
    audit,
    boolean,
    define_tool,
    enum,
    get_tool,
    integer,
    list_tool,
    next_id,
    read_date,
    search_tool,
    string,
    today,
)

from ..state import Record, State, is_departed, open_items_for_member, over_capacity_by
from .helpers import ACTOR, acting_member, describe_changes, require
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
_MEMBER_ID = {"memberId": string("Member id, e.g. MEM-003.")}


def _member_filters(state: State, member: Record, input: Mapping[str, Any]) -> bool:
    return not (input.get("activeOnly") and is_departed(member)) and not (
        input.get("overCapacityOnly") and over_capacity_by(state, member["id"]) == 0
    )


list_members = list_tool(
    "list_members",
    "List members (sorted by id) with their active-sprint load, sprint capacity, remaining "
    "capacity and whether they are over capacity. Departed members are included unless "
    "activeOnly is true.",
    "members",
    filters={
        "teamId": string("Only members of this team, e.g. TEAM-001."),
        "role": enum("Only members with this role.", ROLES),
    },
    references={"teamId": "teams"},
    extra={
        "activeOnly": boolean("Leave out members who have departed."),
        "overCapacityOnly": boolean("Only members whose load exceeds their capacity."),
    },
    where=_member_filters,
    view=member_summary,
)

search_members = search_tool(
    "search_members",
    "Find members whose id, name or email contains the query (case-insensitive).",
    "members",
    ["name", "email"],
    view=member_summary,
)

get_member = get_tool(
    "get_member",
    "Read one member: profile, load, remaining capacity and every open work item they hold.",
    "members",
    "memberId",
    "MEM-003",
    view=lambda state, member: {
        **member_summary(state, member),
        "openWorkItems": [
            item_summary(state, i) for i in open_items_for_member(state, member["id"])
        ],
    },
)


@define_tool(
    "create_member",
    "Add a new member. The email must be unused; the team, if given, must exist.",
    {
        **ACTOR,
        "name": string("Full name."),
        "email": string("Work email, unique across members."),
        "role": enum("Role.", ROLES),
        "teamId": string("Team to join, e.g. TEAM-002. Omit for no team."),
        "sprintCapacityPoints": integer(
            "Story points the member can take per sprint.", minimum=0, maximum=40
        ),
    },
    ["actorId", "name", "email", "role", "sprintCapacityPoints"],
)
def create_member(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a member who joins today."""
    actor = acting_member(state, input)
    email = input["email"].strip().lower()
    if "@" not in email:
        raise silo.tool_error("invalid_input", f'"email" must be an email address; got "{email}".')
    clash = next((m for m in state["members"].values() if m["email"] == email), None)
    if clash is not None:
        raise silo.tool_error(
            "conflict",
            f"Email {email} already belongs to {clash['id']} ({clash['name']}).",
            {"memberId": clash["id"]},
        )
    team_id = input.get("teamId")
    if team_id is not None:
        require(state, "teams", team_id)
    member: Record = {
        "id": next_id(state, "MEM"),
        "name": input["name"].strip(),
        "email": email,
        "role": input["role"],
        "teamId": team_id,
        "sprintCapacityPoints": input["sprintCapacityPoints"],
        "joinedOn": today(state),
        "departedOn": None,
    }
    state["members"][member["id"]] = member
    audit_id = audit(state, actor["id"], "create_member", "member", member["id"], member["name"])
    return {"created": member_summary(state, member), "auditId": audit_id}


@define_tool(
    "update_member",
    "Change a member's role, email or sprint capacity. Departed members cannot be edited.",
    {
        **ACTOR,
        **_MEMBER_ID,
        "role": enum("New role.", ROLES),
        "email": string("New email, unique across members."),
        "sprintCapacityPoints": integer("New capacity per sprint.", minimum=0, maximum=40),
    },
    ["actorId", "memberId"],
)
def update_member(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Apply the given changes and record them."""
    actor = acting_member(state, input)
    member = require(state, "members", input["memberId"])
    if is_departed(member):
        raise silo.tool_error(
            "not_allowed",
            f"{member['id']} ({member['name']}) left on {member['departedOn']}; departed "
            "members cannot be edited.",
        )
    changes: dict[str, Any] = {
        k: input[k] for k in ("role", "email", "sprintCapacityPoints") if k in input
    }
    if not changes:
        raise silo.tool_error(
            "invalid_input", "Give at least one of role, email or sprintCapacityPoints to change."
        )
    if "email" in changes:
        changes["email"] = changes["email"].strip().lower()
        clash = next((m for m in state["members"].values() if m["email"] == changes["email"]), None)
        if clash is not None and clash["id"] != member["id"]:
            raise silo.tool_error("conflict", f"Email {changes['email']} belongs to {clash['id']}.")
    detail = describe_changes(member, changes)
    member.update(changes)
    audit_id = audit(state, actor["id"], "update_member", "member", member["id"], detail)
    return {"updated": member_summary(state, member), "auditId": audit_id}


@define_tool(
    "offboard_member",
    "Record that a member has left (their last day). They can no longer act or be assigned "
    "work. Returns the open work items they still hold, which need new owners.",
    {**ACTOR, **_MEMBER_ID, "lastDay": string("Last working day, YYYY-MM-DD.")},
    ["actorId", "memberId", "lastDay"],
)
def offboard_member(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Mark a member as departed."""
    actor = acting_member(state, input)
    member = require(state, "members", input["memberId"])
    if is_departed(member):
        raise silo.tool_error(
            "conflict",
            f"{member['id']} ({member['name']}) already left on {member['departedOn']}.",
        )
    if member["id"] == actor["id"]:
        raise silo.tool_error("not_allowed", "Members cannot offboard themselves.")
    last_day = read_date(input, "lastDay")
    if last_day > today(state) or last_day < member["joinedOn"]:
        raise silo.tool_error(
            "invalid_input",
            f"lastDay {last_day} must fall between {member['id']}'s start on "
            f"{member['joinedOn']} and today ({today(state)}); record a departure once it happens.",
        )
    lead_of = [t["id"] for t in state["teams"].values() if t["leadId"] == member["id"]]
    if lead_of:
        raise silo.tool_error(
            "invalid_state",
            f"{member['id']} still leads {', '.join(lead_of)}; set a new team lead first.",
            {"teamIds": lead_of},
        )
    member["departedOn"] = last_day
    stranded = [i["id"] for i in open_items_for_member(state, member["id"])]
    audit_id = audit(
        state, actor["id"], "offboard_member", "member", member["id"], f"Last day {last_day}."
    )
    return {
        "updated": member_summary(state, member),
        "openWorkItemIds": stranded,
        "auditId": audit_id,
    }
