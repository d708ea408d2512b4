"""roaming-trip: a customer travelling within zone 1 gets their phone ready to roam.

Two sides must both allow roaming: the network (the line's roaming bar, the agent's to lift)
and the phone (its data-roaming setting, which only the customer can switch, when asked). A
line under a fraud hold keeps its bar until the fraud team releases it: the agent escalates the
case to them instead of working around the hold — and the customer is still told to switch
data roaming on for when it is lifted.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

from ..state import State, active_hold
from ._common import (
    IGNORE,
    as_staff,
    case_calls,
    chat_instruction,
    close,
    customer_user,
    open_and_verify,
    pick_staff,
    play,
    say,
    shown,
)

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A live line whose phone or network would not roam, a zone-1 trip, and who answers."""
    choices = []
    for line in sorted_by_id(world["lines"]):
        device = next(
            (d for d in sorted_by_id(world["devices"]) if d["simId"] == line["simId"]), None
        )
        if line["status"] != "active" or device is None:
            continue
        if not line["roamingEnabled"] or not device["dataRoaming"]:
            choices.append((line, device))
    if not choices:
        raise silo.NoInstance("every live line roams already")
    line, device = rng.choice(choices)
    country = rng.choice(
        [c for c in sorted_by_id(world["countries"]) if c["zone"] == 1 and c["id"] != "IE"]
    )
    staff = pick_staff(world, rng)
    hold = active_hold(world, line["id"])
    return {
        **case_calls(world, line["customerId"], staff["id"]),
        "number": shown(line["msisdn"]),
        "lineId": line["id"],
        "deviceId": device["id"],
        "country": country["name"],
        "leaving": add_days(today(world), rng.randint(1, 21)),
        "lift": not line["roamingEnabled"] and hold is None,
        "escalate": not line["roamingEnabled"] and hold is not None,
        "phone": not device["dataRoaming"],
    }


def user(p: Mapping[str, Any]) -> dict[str, Any]:
    """The customer travels; they switch data roaming on when told to."""
    opening = (
        f"Hi, I'm off to {p['country']} on {p['leaving']} and want my phone to work there, data "
        f"included. My number is {p['number']}."
    )
    switch = {"tool": "set_data_roaming", "input": {"deviceId": p["deviceId"], "enabled": True}}
    rules = [
        {
            "when": ["data roaming"],
            "do": [switch],
            "say": "OK, I've switched data roaming on in my phone's settings.",
            "once": True,
        }
    ]
    return customer_user(p, opening, rules, {"phoneNumber": p["number"], "going": p["country"]})


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Case and verification; the bar lifted (or the hold escalated); the phone switched."""
    staff, case = p["staffId"], p["caseId"]
    calls = open_and_verify(p, f"Roaming for a trip to {p['country']}")
    if p["lift"]:
        roam = {"lineId": p["lineId"], "enabled": True, "caseId": case, "actorId": staff}
        calls.append(silo.Call("set_line_roaming", roam))
    if p["phone"]:
        switch = {"deviceId": p["deviceId"], "enabled": True}
        calls.append(silo.Call("set_data_roaming", switch))
    if p["escalate"]:
        reason = "Customer travelling: roaming is barred by a fraud hold on the line."
        escalation = {"caseId": case, "team": "fraud", "reason": reason, "actorId": staff}
        calls.append(silo.Call("escalate_case", escalation))
    else:
        calls.append(close(p, f"Roaming ready for {p['country']}."))
    return calls


async def solve(ctx: silo.AgentContext, p: Mapping[str, Any]) -> str:
    """The agent's part through its tools, the phone's through the customer."""
    calls = [c for c in gold(p) if c.tool != "set_data_roaming"]
    await play(ctx, calls[:1])
    await say(ctx, "Let's get you set up. First, what's your security PIN?")
    last = 2 + int(p["lift"])
    await play(ctx, calls[1:last])
    if p["phone"]:
        await say(ctx, "Please open your phone's settings and switch data roaming on.")
    await play(ctx, calls[last:])
    await say(ctx, f"You're set for {p['country']}. Anything else I can help with?")
    return f"Roaming ready for {p['country']}."


family = silo.TaskFamily(
    id="roaming-trip",
    title="Get a traveller's phone ready to roam",
    difficulty="medium",
    sample=sample,
    instruction=chat_instruction,
    gold=gold,
    user=user,
    solve=solve,
    checks=as_staff,
    ignore=IGNORE,
)
