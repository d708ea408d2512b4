"""What the support families share: a chat that opens a case, verifies the caller and closes.

Every family is a conversation with a scripted customer built from the instance's params: they
know their number and security PIN, answer a question about the PIN with it, act on their own
phone when asked, and end the chat when offered "anything else". The gold calls always open a
case for the contact, verify the caller by PIN, make the family's changes on that case and
resolve it; ``solve`` plays the same through the chat (the customer acts only when asked).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import silo_async as silo
from silo_async.world.grade import written_by
from silo_async.world.tools import sorted_by_id

from ..state import State

__all__ = [
    "IGNORE",
    "as_staff",
    "case_calls",
    "chat_instruction",
    "close",
    "customer_user",
    "open_and_verify",
    "pick_staff",
    "play",
    "say",
    "shown",
]

#: What the comparison leaves out: the agent's own words on the case, the order of its work.
IGNORE = ("auditLog", "sequences", "cases.*.subject", "cases.*.resolution", "cases.*.notes")
_PERSONAS = (
    "friendly and a little rushed, not technical; does what she is asked on her phone",
    "polite and precise; answers exactly what is asked and no more",
    "chatty and relaxed; happy to follow instructions step by step",
    "busy between meetings; short answers, but cooperative",
)


def shown(msisdn: str) -> str:
    """A number as a customer writes it: ``+353872104411`` -> ``087 210 4411``."""
    national = "0" + msisdn.removeprefix("+353")
    return f"{national[:3]} {national[3:6]} {national[6:]}"


def pick_staff(world: State, rng: random.Random, credit: float = 0) -> dict[str, Any]:
    """An active staff member (who may credit at least ``credit`` at a time)."""
    staff = [s for s in sorted_by_id(world["staff"]) if s["active"] and s["creditLimit"] >= credit]
    if not staff:
        raise silo.NoInstance(f"no active staff member may credit {credit}")
    return dict(rng.choice(staff))


def case_calls(world: State, customer_id: str, staff_id: str) -> dict[str, Any]:
    """The params every family carries: the staff member, the customer and the case id."""
    customer = world["customers"][customer_id]
    return {
        "staff": world["staff"][staff_id]["name"],
        "staffId": staff_id,
        "customer": f"{customer['firstName']} {customer['lastName']}",
        "customerId": customer_id,
        "pin": customer["securityPin"],
        # The id the contact's case gets: the world numbers them (every change names it).
        "caseId": f"CAS-{world['sequences']['CAS'] + 1:04d}",
        "persona": random.Random(customer_id).choice(_PERSONAS),
    }


def chat_instruction(p: Mapping[str, Any]) -> str:
    """What the agent reads (the customer's first message follows it)."""
    return (
        f"You are {p['staff']} (staff id {p['staffId']}) on Larkspur Mobile's customer chat. "
        "A customer has just written in: help them as far as Larkspur's support policy allows, "
        "and talk to them through the chat."
    )


def customer_user(
    p: Mapping[str, Any],
    opening: str,
    rules: Sequence[Mapping[str, Any]] = (),
    knows: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The instance's scripted customer: the family's rules between the PIN and the goodbye."""
    return {
        "opening": opening,
        "persona": f"{p['customer']}, {p['persona']}.",
        "knows": {"securityPin": p["pin"], **(knows or {})},
        "script": [
            {"when": ["anything else"], "say": "No, that's everything. Thanks!", "end": True},
            {"when": ["pin"], "say": f"Sure, my PIN is {p['pin']}."},
            *rules,
        ],
        "otherwise": {"say": "Sorry, I'm not sure what you mean."},
        "tools": [
            "check_phone_status",
            "read_text_messages",
            "set_airplane_mode",
            "set_mobile_data",
            "set_data_roaming",
            "set_apn",
            "restart_phone",
            "approve_card_payment",
        ],
        "maxTurns": 12,
    }


def open_and_verify(p: Mapping[str, Any], subject: str) -> list[silo.Call]:
    """The case for the contact, and the caller verified by the PIN they gave."""
    staff = p["staffId"]
    return [
        silo.Call(
            "open_case", {"customerId": p["customerId"], "subject": subject, "actorId": staff}
        ),
        silo.Call(
            "verify_caller",
            {"caseId": p["caseId"], "method": "pin", "secret": p["pin"], "actorId": staff},
        ),
    ]


def close(p: Mapping[str, Any], resolution: str) -> silo.Call:
    """The case resolved."""
    return silo.Call(
        "resolve_case", {"caseId": p["caseId"], "resolution": resolution, "actorId": p["staffId"]}
    )


async def play(ctx: silo.AgentContext, calls: Sequence[silo.Call]) -> None:
    """Make ``calls`` through the context, as the gold solution states them (raise if one fails)."""
    for call in calls:
        result = await ctx.call_tool(call.tool, call.input)
        if result.is_error:
            raise RuntimeError(f"{call.tool} was refused: {result.output}")


async def say(ctx: silo.AgentContext, text: str) -> str:
    """A message to the customer, and their reply."""
    result = await ctx.call_tool("message_user", {"text": text})
    if result.is_error:
        raise RuntimeError(f"message_user was refused: {result.output}")
    return str(result.output["reply"])


def as_staff(
    final: State, initial: State, ctx: silo.VerifierContext, p: Mapping[str, Any]
) -> list[silo.Check]:
    """Every change was made as the staff member the instruction names."""
    label = f"every change was made as {p['staff']}"
    return [written_by(final, initial, p["staffId"], label=label)]
