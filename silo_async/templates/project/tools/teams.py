"""Teams: who belongs where and who leads."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async.world import audit, define_tool, get_tool, list_tool, next_id, string

from ..state import Record, State, is_departed, member_load
from .helpers import ACTOR, acting_member, assert_assignable, require
from .views import member_summary

__all__ = ["create_team", "get_team", "list_teams", "move_member_to_team", "set_team_lead"]

_TEAM_ID = {"teamId": string("Team id, e.g. TEAM-001.")}


def _team_summary(state: State, team: Record) -> dict[str, Any]:
    members = [m for m in state["members"].values() if m["teamId"] == team["id"]]
    active = [m for m in members if not is_departed(m)]
    return {
        **team,
        "memberCount": len(active),
        "sprintCapacityPoints": sum(int(m["sprintCapacityPoints"]) for m in active),
        "loadPoints": sum(member_load(state, m["id"]) for m in active),
    }


list_teams = list_tool(
    "list_teams",
    "List teams with their active headcount, capacity and load.",
    "teams",
    view=_team_summary,
)

get_team = get_tool(
    "get_team",
    "Read one team with every member (departed ones included, flagged active=false).",
    "teams",
    "teamId",
    "TEAM-001",
    view=lambda state, team: {
        **_team_summary(state, team),
        "members": [
            member_summary(state, m) for m in state["members"].values() if m["teamId"] == team["id"]
        ],
    },
)


@define_tool(
    "create_team",
    "Create a team. The name must be unused; the lead, if given, must be an active member and "
    "joins the team.",
    {**ACTOR, "name": string("Team name."), "leadId": string("Member id of the lead.")},
    ["actorId", "name"],
)
def create_team(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a team."""
    actor = acting_member(state, input)
    name = input["name"].strip()
    if any(t["name"].lower() == name.lower() for t in state["teams"].values()):
        raise silo.tool_error("conflict", f'A team named "{name}" already exists.')
    lead_id = input.get("leadId")
    if lead_id is not None:
        assert_assignable(require(state, "members", lead_id), "lead a team")
        led = [t["id"] for t in state["teams"].values() if t["leadId"] == lead_id]
        if led:
            raise silo.tool_error(
                "invalid_state",
                f"{lead_id} already leads {', '.join(led)}; a member leads one team at most.",
            )
    team: Record = {"id": next_id(state, "TEAM"), "name": name, "leadId": lead_id}
    state["teams"][team["id"]] = team
    if lead_id is not None:
        state["members"][lead_id]["teamId"] = team["id"]
    audit_id = audit(state, actor["id"], "create_team", "team", team["id"], name)
    return {"created": _team_summary(state, team), "auditId": audit_id}


@define_tool(
    "set_team_lead",
    "Make an active member of the team its lead.",
    {**ACTOR, **_TEAM_ID, "memberId": string("Member id of the new lead.")},
    ["actorId", "teamId", "memberId"],
)
def set_team_lead(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Change a team's lead."""
    actor = acting_member(state, input)
    team = require(state, "teams", input["teamId"])
    member = require(state, "members", input["memberId"])
    assert_assignable(member, "lead a team")
    if team["leadId"] == member["id"]:
        raise silo.tool_error("conflict", f"{member['id']} already leads {team['id']}.")
    if member["teamId"] != team["id"]:
        raise silo.tool_error(
            "invalid_state",
            f"{member['id']} ({member['name']}) is in {member['teamId']}, not {team['id']}; "
            "move them to the team first.",
        )
    previous = team["leadId"]
    team["leadId"] = member["id"]
    detail = f"Lead {previous} -> {member['id']}"
    audit_id = audit(state, actor["id"], "set_team_lead", "team", team["id"], detail)
    return {"updated": _team_summary(state, team), "auditId": audit_id}


@define_tool(
    "move_member_to_team",
    "Move an active member to another team. A team's lead cannot be moved away.",
    {**ACTOR, "memberId": string("Member id."), **_TEAM_ID},
    ["actorId", "memberId", "teamId"],
)
def move_member_to_team(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Change a member's team."""
    actor = acting_member(state, input)
    member = require(state, "members", input["memberId"])
    team = require(state, "teams", input["teamId"])
    assert_assignable(member, "change teams")
    if member["teamId"] == team["id"]:
        raise silo.tool_error("conflict", f"{member['id']} is already in {team['id']}.")
    leads = [t["id"] for t in state["teams"].values() if t["leadId"] == member["id"]]
    if leads:
        raise silo.tool_error(
            "invalid_state",
            f"{member['id']} leads {', '.join(leads)}; set a new lead before moving them.",
        )
    detail = f"Team {member['teamId']} -> {team['id']}"
    member["teamId"] = team["id"]
    audit_id = audit(state, actor["id"], "move_member_to_team", "member", member["id"], detail)
    return {"updated": member_summary(state, member), "auditId": audit_id}
