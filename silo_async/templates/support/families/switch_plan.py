"""switch-plan: a customer moves their line to another plan, by the plan's name.

The agent finds the line from the number the customer gives, opens a case, verifies the caller
by PIN before touching the account, moves the line to the plan named (plans are found by name;
a retired plan is not offered) from the next bill date, and resolves the case.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..state import State
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
    """A live line, an active plan it is not on, and who answers the chat."""
    lines = [line for line in sorted_by_id(world["lines"]) if line["status"] == "active"]
    line = rng.choice(lines)
    current = line["planHistory"][-1]["planId"]
    plans = [p for p in sorted_by_id(world["plans"]) if p["active"] and p["id"] != current]
    plan = rng.choice(plans)
    staff = pick_staff(world, rng)
    return {
        **case_calls(world, line["customerId"], staff["id"]),
        "number": shown(line["msisdn"]),
        "lineId": line["id"],
        "plan": plan["name"],
        "planId": plan["id"],
    }


def user(p: Mapping[str, Any]) -> dict[str, Any]:
    """The customer asks for the plan by name."""
    opening = f"Hi, I'd like to move my number {p['number']} to the {p['plan']} plan please."
    return customer_user(p, opening, knows={"phoneNumber": p["number"], "wants": p["plan"]})


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Case, verification, the plan change on the case, resolution."""
    change = {"lineId": p["lineId"], "planId": p["planId"], "caseId": p["caseId"]}
    return [
        *open_and_verify(p, f"Plan change to {p['plan']}"),
        silo.Call("change_plan", {**change, "actorId": p["staffId"]}),
        close(p, f"Moved to {p['plan']} from the next bill."),
    ]


async def solve(ctx: silo.AgentContext, p: Mapping[str, Any]) -> str:
    """Ask for the PIN, make the change, offer more help."""
    calls = gold(p)
    await play(ctx, calls[:1])
    await say(ctx, "Happy to help. To protect your account, what's your security PIN?")
    await play(ctx, calls[1:])
    await say(ctx, f"Done: you move to {p['plan']} from your next bill. Anything else?")
    return f"Moved {p['number']} to {p['plan']}."


family = silo.TaskFamily(
    id="switch-plan",
    title="Move a customer's line to another plan",
    difficulty="medium",
    sample=sample,
    instruction=chat_instruction,
    gold=gold,
    user=user,
    solve=solve,
    checks=as_staff,
    ignore=IGNORE,
)
