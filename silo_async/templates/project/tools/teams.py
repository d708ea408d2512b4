"""Teams: who belongs where and who leads."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State, is_departed, member_load, teams_led_by
from .helpers import ACTOR, TEAM, TEAM_ID, NewLead, assert_assignable, commit, new_lead, require
from .views import member_summary

__all__ = ["create_team", "get_team", "list_teams", "move_member_to_team", "set_team_lead"]


def _team_summary(state: State, team: Record) -> dict[str, Any]:
    members = [m for m in state["members"].values() if m["teamId"] == team["id"]]
    active = [m for m in members if not is_departed(m)]
    return {
        **team,
        "memberCount": len(active),
        "sprintCapacityPoints": sum(int(m["sprintCapacityPoints"]) for m in active),
        "loadPoints": sum(member_load(state, m["id"]) for m in active),
    }


TEAMS = w.Collection("teams", "teamId", "TEAM-001", view=_team_summary)
list_teams = TEAMS.list_tool("List teams with their active headcount, capacity and load.")

get_team = TEAMS.get_tool(
    "Read one team with every member (departed ones included, flagged active=false).",
    view=lambda state, team: {
        **_team_summary(state, team),
        "members": [
            member_summary(state, m) for m in state["members"].values() if m["teamId"] == team["id"]
        ],
    },
)


class _NewTeam(w.Input):
    name = w.fields.string("Team name.", raw=True)
    leadId = w.fields.string("Member id of the lead.", default=None, raw=True)


@ACTOR.write_tool(_NewTeam)
def create_team(call: w.Write[_NewTeam]) -> dict[str, Any]:
    """Create a team. The name must be unused; the lead, if given, must be an active member and
    joins the team.
    """
    state = call.state
    name = call.args.name.strip()
    if any(t["name"].lower() == name.lower() for t in state["teams"].values()):
        raise silo.tool_error("conflict", f'A team named "{name}" already exists.')
    lead_id = call.args.leadId
    if lead_id is not None:
        assert_assignable(require(state, "members", lead_id), "lead a team")
        led = teams_led_by(state, lead_id)
        if led:
            raise silo.tool_error(
                "invalid_state",
                f"{lead_id} already leads {', '.join(led)}; a member leads one team at most.",
            )
    team: Record = {"id": w.records.next_id(state, "TEAM"), "name": name, "leadId": lead_id}
    audit_id = call.add(TEAM, team, name)
    if lead_id is not None:
        state["members"][lead_id]["teamId"] = team["id"]
    return {"created": _team_summary(state, team), "auditId": audit_id}


@ACTOR.write_tool(NewLead, target=TEAM)
def set_team_lead(call: w.Write[NewLead]) -> dict[str, Any]:
    """Make an active member of the team its lead."""
    team, member = call.record, new_lead(call, "lead a team")
    if member["teamId"] != team["id"]:
        raise silo.tool_error(
            "invalid_state",
            f"{member['id']} ({member['name']}) is in {member['teamId']}, not {team['id']}; "
            "move them to the team first.",
        )
    detail = f"Lead {team['leadId']} -> {member['id']}"
    return commit(call, _team_summary, detail, {"leadId": member["id"]})


class _Team(w.Input):
    teamId = TEAM_ID


@ACTOR.write_tool(
    _Team, target=w.Target("members", "memberId", w.fields.string("Member id.", raw=True), "member")
)
def move_member_to_team(call: w.Write[_Team]) -> dict[str, Any]:
    """Move an active member to another team. A team's lead cannot be moved away."""
    state, member = call.state, call.record
    team = TEAM.find(state, call.input)
    assert_assignable(member, "change teams")
    if member["teamId"] == team["id"]:
        raise silo.tool_error("conflict", f"{member['id']} is already in {team['id']}.")
    leads = teams_led_by(state, member["id"])
    if leads:
        raise silo.tool_error(
            "invalid_state",
            f"{member['id']} leads {', '.join(leads)}; set a new lead before moving them.",
        )
    detail = f"Team {member['teamId']} -> {team['id']}"
    return commit(call, member_summary, detail, {"teamId": team["id"]})
