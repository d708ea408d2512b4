"""lost-phone: a lost or stolen phone's line is barred and a new SIM posted.

Barring protects the account holder, so it may happen before verification; a replacement SIM
goes only to a verified caller, at the account's address. The agent bars the line as lost or
stolen, verifies the caller by PIN, orders the replacement and resolves the case.
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

_HOW = (
    "I left my phone on the train this morning",
    "my phone was stolen from my bag at lunch",
    "I lost my phone on a night out",
    "my phone fell out of my pocket on the bus",
)


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A live line, how the phone went, and who answers the chat."""
    lines = [line for line in sorted_by_id(world["lines"]) if line["status"] == "active"]
    line = rng.choice(lines)
    staff = pick_staff(world, rng)
    return {
        **case_calls(world, line["customerId"], staff["id"]),
        "number": shown(line["msisdn"]),
        "lineId": line["id"],
        "how": rng.choice(_HOW),
        # The id the replacement order gets: the world numbers them.
        "orderId": f"ORD-{world['sequences']['ORD'] + 1:03d}",
    }


def user(p: Mapping[str, Any]) -> dict[str, Any]:
    """The customer reports the phone gone and asks for a new SIM."""
    opening = f"Hi, {p['how']}. Can you block my number {p['number']} and send me a new SIM card?"
    return customer_user(p, opening, knows={"phoneNumber": p["number"]})


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Case and verification, the bar, the replacement, resolution."""
    staff, case = p["staffId"], p["caseId"]
    line = {"lineId": p["lineId"], "caseId": case, "actorId": staff}
    return [
        *open_and_verify(p, "Lost or stolen phone"),
        silo.Call("suspend_line", {**line, "reason": "lost_or_stolen"}),
        silo.Call("order_replacement_sim", line),
        close(p, "Line barred; a replacement SIM is on its way to the address on file."),
    ]


async def solve(ctx: silo.AgentContext, p: Mapping[str, Any]) -> str:
    """Verify, bar, order, offer more help."""
    calls = gold(p)
    await play(ctx, calls[:1])
    await say(ctx, "I'm sorry to hear that. Before I send a SIM: what's your security PIN?")
    await play(ctx, calls[1:])
    await say(ctx, "Your line is barred and a new SIM is on its way to you. Anything else?")
    return f"Barred {p['number']} and ordered a replacement SIM."


family = silo.TaskFamily(
    id="lost-phone",
    title="Bar a lost phone's line and send a new SIM",
    difficulty="easy",
    sample=sample,
    instruction=chat_instruction,
    gold=gold,
    user=user,
    solve=solve,
    checks=as_staff,
    ignore=IGNORE,
)
