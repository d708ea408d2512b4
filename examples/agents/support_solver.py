"""A scripted agent that solves every task of the ``support`` template through its tools.

Every support task is a conversation: the customer opens it, and only they know some facts
(their security PIN, where they are, what their screen shows, the card they want to use, the
number printed on their new SIM) and only they can act on their phone and banking app. This
agent recognises the task from the customer's opening message, then works only through
``ctx.call_tool``: the carrier's tools, and ``message_user`` to ask, explain and ask the
customer to act. Every id, amount and date it uses comes from a tool output or from what the
customer said, never from the seed files. The template's tests require it to pass every task with
reward 1.0 against the tasks' scripted customers.

Run it: ``silo-async run --env support --task TASK-005 --agent examples/agents/support_solver.py``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Awaitable, Callable
from typing import Any

import silo_async as silo

Solver = Callable[["Chat"], Awaitable[str]]

_MONTH_NAMES = "january february march april may june july august september october november"
MONTHS = {name: n for n, name in enumerate([*_MONTH_NAMES.split(), "december"], 1)}


class ToolFailed(RuntimeError):
    """A tool rejected a call the script expected to succeed."""


def shown(msisdn: str) -> str:
    """A number as a customer writes it: ``+353875550199`` -> ``087 555 0199``."""
    national = "0" + msisdn.removeprefix("+353")
    return f"{national[:3]} {national[3:6]} {national[6:]}"


def money(amount: float) -> str:
    """EUR 26.4 -> ``€26.40``."""
    return f"€{amount:,.2f}"


def day_text(date: str) -> str:
    """``2026-10-12`` -> ``12 October``."""
    parsed = dt.date.fromisoformat(date)
    return f"{parsed.day} {parsed.strftime('%B')}"


class Chat:
    """One conversation: the agent context, the staff member acting and what was learnt."""

    def __init__(self, ctx: silo.AgentContext) -> None:
        self.ctx = ctx
        found = re.search(r"\bSTF-\d+\b", ctx.task)
        if found is None:
            raise ValueError("The instruction names no staff id.")
        self.actor = found.group(0)
        self.opening = ctx.task.split("User:", 1)[-1]
        self.case_id = ""
        self.line: dict[str, Any] = {}

    async def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        """Call a tool; raise if it was rejected."""
        result = await self.ctx.call_tool(name, args or {})
        if result.is_error:
            raise ToolFailed(f"{name}: {result.output}")
        return result.output

    async def write(self, name: str, args: dict[str, Any]) -> Any:
        """Call a write tool as the staff member, on the open case."""
        return await self.call(name, {**args, "caseId": self.case_id, "actorId": self.actor})

    async def say(self, text: str) -> str:
        """Send the customer a message and return their reply."""
        return str((await self.call("message_user", {"text": text}))["reply"])

    async def find_line(self, text: str) -> dict[str, Any]:
        """The line whose number appears in ``text``."""
        found = re.search(r"(?:\+353|0)[\d ]{8,13}\d", text)
        if found is None:
            raise ValueError(f"No phone number in {text!r}.")
        self.line = await self.call("find_line", {"phoneNumber": found.group(0)})
        return self.line

    async def open_case(self, subject: str, customer_id: str | None = None) -> None:
        """Open the case this contact is recorded on."""
        created = await self.call(
            "open_case",
            {
                "customerId": customer_id or self.line["customerId"],
                "subject": subject,
                "actorId": self.actor,
            },
        )
        self.case_id = created["created"]["id"]

    async def verify_by_pin(self) -> bool:
        """Ask for the security PIN and check it; False when the customer cannot give one."""
        reply = await self.say("To protect your account, could you tell me your security PIN?")
        pin = re.search(r"\b\d{4}\b", reply)
        if pin is None:
            return False
        out = await self.write("verify_caller", {"method": "pin", "secret": pin.group(0)})
        return bool(out["verified"])

    async def diagnose(self) -> dict[str, Any]:
        """The network's view of the line."""
        return dict(await self.call("run_line_diagnostics", {"lineId": self.line["id"]}))

    async def close(self, summary: str) -> str:
        """Resolve the case, tell the customer what was done and let them end the chat."""
        await self.write("resolve_case", {"resolution": summary})
        await self.say(f"{summary} Is there anything else I can help you with?")
        return summary


# --- the phone side -----------------------------------------------------------------------------


async def no_service(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    report = await chat.diagnose()
    await chat.open_case("No service on the phone")
    if report["registration"] == "not_registered":
        seen = await chat.say(
            "I can see your phone isn't connected to our network. What does the top of your "
            "screen show?"
        )
        if "airplane" in seen.lower():
            await chat.say(
                "That symbol means airplane mode is on. Please switch airplane mode off."
            )
    report = await chat.diagnose()
    if report["registration"] not in ("registered", "registered_roaming"):
        raise ToolFailed(f"Still not registered: {report}")
    return await chat.close("Your phone is connected to our network again.")


async def wrong_apn(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    report = await chat.diagnose()
    apn = (await chat.call("get_network_settings"))["apn"]
    await chat.open_case("Mobile data not working")
    asked = re.search(r"unknown APN '([^']*)'", report["dataDetail"])
    if asked is not None:
        await chat.say(
            f"Your phone asks our network for the APN '{asked.group(1)}', which we don't "
            "recognise. Please open Settings > Mobile network > Access point names and set the "
            f"APN to {apn}."
        )
    report = await chat.diagnose()
    if report["dataSession"] != "active":
        raise ToolFailed(f"Data still not working: {report}")
    return await chat.close("Mobile data is working again with the right APN.")


async def roaming_abroad(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    report = await chat.diagnose()
    await chat.open_case("No service abroad")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    country = report.get("attemptedCountry") or report.get("servingCountry")
    zone = await chat.call("get_country", {"countryCode": country})
    if not chat.line["roamingEnabled"]:
        await chat.say(
            f"Roaming is barred on your line, which is why your phone can't connect in "
            f"{zone['name']}. {zone['name']} is in roaming zone {zone['zone']}, so you roam like "
            "at home at no extra cost. Shall I allow roaming on your line?"
        )
        await chat.write("set_line_roaming", {"lineId": chat.line["id"], "enabled": True})
    report = await chat.diagnose()
    if report["dataSession"] == "none" and "data roaming" in report["dataDetail"]:
        await chat.say(
            "Roaming is now allowed and your phone has connected. To use mobile internet "
            "abroad, please open your phone's mobile network settings and switch on data roaming."
        )
    report = await chat.diagnose()
    if report["dataSession"] != "active":
        raise ToolFailed(f"Data still not working abroad: {report}")
    return await chat.close("Roaming is allowed on your line and your mobile data works abroad.")


async def new_sim(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Replacement SIM not working")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    reply = await chat.say(
        "Thanks. To activate the new card, please read me the long number printed on it "
        "(its ICCID)."
    )
    iccid = "".join(re.findall(r"\d", reply))
    await chat.write("swap_sim", {"lineId": chat.line["id"], "iccid": iccid})
    report = await chat.diagnose()
    if "restart" in report["registrationDetail"]:
        await chat.say(
            "Your new SIM is now active on your number. Please restart your phone so it picks "
            "up the new card."
        )
    report = await chat.diagnose()
    if report["registration"] != "registered":
        raise ToolFailed(f"Still not registered: {report}")
    return await chat.close("Your new SIM card is active and your phone is back on the network.")


async def outage(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.diagnose()
    await chat.open_case("No signal")
    reply = await chat.say(
        "I'm sorry about that. Where are you at the moment? There may be a local problem."
    )
    incidents = (await chat.call("list_incidents", {"status": "open", "limit": 500}))["results"]
    here = next(i for i in incidents if i["area"].lower() in reply.lower())
    await chat.write(
        "subscribe_line_to_incident", {"lineId": chat.line["id"], "incidentId": here["id"]}
    )
    eta = dt.datetime.fromisoformat(here["etaAt"].replace("Z", "+00:00"))
    await chat.say(
        f"There's a network outage in {here['area']} since {day_text(here['startedAt'][:10])}; "
        f"our engineers expect to fix it by {eta:%H:%M} on {day_text(here['etaAt'][:10])}. "
        "I've set up a text to your number for when service is back."
    )
    return await chat.close(f"Subscribed to the update of the {here['area']} outage.")


# --- accounts and billing -----------------------------------------------------------------------


def cheapest(passes: list[dict[str, Any]], days: int) -> list[dict[str, Any]]:
    """The cheapest run of passes covering ``days`` days (ties: fewer passes)."""
    best: list[tuple[float, list[dict[str, Any]]]] = [(0.0, [])]
    for covered in range(1, days + 1):
        options = [
            (
                best[max(0, covered - p["days"])][0] + p["price"],
                [*best[max(0, covered - p["days"])][1], p],
            )
            for p in passes
        ]
        best.append(min(options, key=lambda o: (round(o[0], 2), len(o[1]))))
    return best[days][1]


def dates_in(text: str, year: int) -> list[str]:
    """``12 October`` style dates in ``text``, in order."""
    found = re.findall(r"\b(\d{1,2}) (" + "|".join(MONTHS) + r")\b", text.lower())
    return [dt.date(year, MONTHS[m], int(d)).isoformat() for d, m in found]


async def trip_pass(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Data abroad")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    reply = await chat.say("Where are you travelling to, and how long will you be away?")
    countries = (await chat.call("list_countries", {"limit": 500}))["results"]
    country = next(c for c in countries if c["name"].lower() in reply.lower())
    today = (await chat.call("get_current_time"))["today"]
    leaves, returns = dates_in(reply, int(today[:4]))[:2]
    days = (dt.date.fromisoformat(returns) - dt.date.fromisoformat(leaves)).days + 1
    if country["zone"] <= 1:
        return await chat.close(f"{country['name']} is included in your plan once you're there.")
    passes = (await chat.call("list_addons", {"kind": "roaming_pass", "zone": country["zone"]}))[
        "results"
    ]
    plan = cheapest(passes, days)
    names = " and ".join(p["name"] for p in plan)
    cost = sum(p["price"] for p in plan)
    await chat.say(
        f"{country['name']} is in roaming zone {country['zone']}, which your plan doesn't "
        f"include. The cheapest way to cover all {days} days is the {names} at {money(cost)}, "
        f"starting on {day_text(leaves)}. Shall I add the pass?"
    )
    start = leaves
    for item in plan:
        await chat.write(
            "add_line_addon",
            {"lineId": chat.line["id"], "addonId": item["id"], "startDate": start},
        )
        start = (dt.date.fromisoformat(start) + dt.timedelta(days=item["days"])).isoformat()
    return await chat.close(
        f"The {names} is on your line from {day_text(leaves)}; {money(cost)} will be on your "
        "next bill. Remember to switch on data roaming on your phone when you land."
    )


async def unpaid_bill(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.diagnose()
    customer = chat.line["customerId"]
    await chat.open_case("Suspended for non-payment")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    overdue = (await chat.call("list_bills", {"customerId": customer, "status": "overdue"}))[
        "results"
    ]
    cards = (await chat.call("list_cards", {"customerId": customer}))["results"]
    owed = sum(b["balance"] for b in overdue)
    listed = " and ".join(f"a {c['brand']} ending {c['last4']}" for c in cards)
    reply = await chat.say(
        f"You have {money(owed)} overdue. Which card would you like to pay with? We have "
        f"{listed} on file."
    )
    card = next(c for c in cards if c["last4"] in reply and not c["expired"])
    payments = []
    for bill in overdue:
        out = await chat.write(
            "request_card_payment",
            {"billId": bill["id"], "cardId": card["id"], "amount": bill["balance"]},
        )
        payments.append(out["payment"]["id"])
    await chat.say(
        f"I've sent a payment request of {money(owed)} to your {card['brand']} ending "
        f"{card['last4']}. Please approve it in your banking app."
    )
    for payment_id in payments:
        if (await chat.call("get_payment", {"paymentId": payment_id}))["status"] != "settled":
            raise ToolFailed(f"Payment {payment_id} was not approved.")
    await chat.write("resume_line", {"lineId": chat.line["id"]})
    report = await chat.diagnose()
    if "restart" in report["registrationDetail"]:
        await chat.say(
            "Payment received, and your line is active again. Please restart your phone so it "
            "reconnects."
        )
    report = await chat.diagnose()
    if report["registration"] != "registered":
        raise ToolFailed(f"Still not registered: {report}")
    return await chat.close(f"You paid {money(owed)}, and your line is back in service.")


async def bill_of(chat: Chat, period_word: str) -> dict[str, Any]:
    """The customer's bill for the month named (e.g. September)."""
    bills = (await chat.call("list_bills", {"customerId": chat.line["customerId"], "limit": 500}))[
        "results"
    ]
    month = MONTHS[period_word.lower()]
    return next(b for b in bills if int(b["period"][5:7]) == month)


async def duplicate_boost(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Data boost charges")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    bill = await bill_of(chat, "September")
    bought = (await chat.call("list_line_addons", {"lineId": chat.line["id"]}))["results"]
    await chat.say("How many data boosts did you buy in September?")
    extra: dict[str, Any] | None = None
    for item in bought:
        charges = [
            c
            for c in bill["charges"]
            if c["kind"] == "addon"
            and c["description"] == item["name"]
            and c["date"] == item["startDate"]
        ]
        if len(charges) > 1:
            extra = charges[-1]
    if extra is None:
        raise ToolFailed("No duplicate charge found.")
    await chat.write(
        "issue_credit",
        {
            "billId": bill["id"],
            "chargeId": extra["id"],
            "amount": extra["amount"],
            "reason": "duplicate_charge",
            "note": f"{extra['description']} of {extra['date']} was charged twice.",
        },
    )
    return await chat.close(
        f"The {extra['description']} of {day_text(extra['date'])} was charged twice; I've "
        f"credited {money(extra['amount'])} back to your September bill."
    )


async def old_plan_price(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Bill higher than expected")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    bill = await bill_of(chat, "September")
    plans = {
        p["id"]: p for p in (await chat.call("list_plans", {"includeRetired": True}))["results"]
    }
    charge = next(
        c for c in bill["charges"] if c["kind"] == "plan" and c["lineId"] == chat.line["id"]
    )
    in_force = [p for p in chat.line["planHistory"] if p["start"] <= charge["date"]][-1]
    plan = plans[in_force["planId"]]
    over = round(charge["amount"] - plan["monthlyFee"], 2)
    await chat.write(
        "issue_credit",
        {
            "billId": bill["id"],
            "chargeId": charge["id"],
            "amount": over,
            "reason": "billing_error",
            "note": f"Charged {charge['description']} instead of {plan['name']}.",
        },
    )
    await chat.say(
        f"You're right: since {day_text(in_force['start'])} you're on {plan['name']} at "
        f"{money(plan['monthlyFee'])} a month, but September charged {charge['description']} "
        f"of {money(charge['amount'])}. I've credited the {money(over)} difference."
    )
    return await chat.close(f"A credit of {money(over)} corrects your September bill.")


async def duplicate_line(chat: Chat) -> str:
    reply = await chat.say("I can help with that. What's the mobile number you use?")
    await chat.find_line(reply)
    own = chat.line
    lines = (await chat.call("list_lines", {"customerId": own["customerId"]}))["results"]
    others = [line for line in lines if line["id"] != own["id"] and line["status"] != "cancelled"]
    unused = []
    for line in others:
        report = await chat.call("run_line_diagnostics", {"lineId": line["id"]})
        if (
            "never" in report["registrationDetail"]
            or "not been seen" in report["registrationDetail"]
        ):
            unused.append(line)
    await chat.open_case("Billed for a line not in use")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    line = unused[0]
    await chat.say(
        f"Your account also has the line {shown(line['msisdn'])}, opened on "
        f"{day_text(line['openedDate'])}, whose SIM card has never been used. Do you recognise it?"
    )
    await chat.write("cancel_line", {"lineId": line["id"], "reason": "opened_in_error"})
    bill = await bill_of(chat, "September")
    total = 0.0
    for charge in bill["charges"]:
        if charge["lineId"] == line["id"]:
            total += charge["amount"]
            await chat.write(
                "issue_credit",
                {
                    "billId": bill["id"],
                    "chargeId": charge["id"],
                    "amount": charge["amount"],
                    "reason": "billing_error",
                    "note": f"{line['msisdn']} was opened in error.",
                },
            )
    return await chat.close(
        f"I've cancelled {shown(line['msisdn'])} as opened in error, with no fee, and credited "
        f"its {money(total)} of September charges."
    )


async def plan_upgrade(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Plan change")
    await chat.write("send_verification_code", {"lineId": chat.line["id"]})
    reply = await chat.say(
        "Since you don't have your PIN, I've texted a one-time code to "
        f"{shown(chat.line['msisdn'])}. Could you read it back to me?"
    )
    code = re.search(r"\b\d{6}\b", reply)
    if (
        code is None
        or not (await chat.write("verify_caller", {"method": "sms_code", "secret": code.group(0)}))[
            "verified"
        ]
    ):
        raise ToolFailed("The customer could not be verified.")
    plans = (await chat.call("list_plans"))["results"]
    wanted = max(
        (p for p in plans if p["name"].lower() in chat.opening.lower()),
        key=lambda p: len(p["name"]),
    )
    line = await chat.call("get_line", {"lineId": chat.line["id"]})
    await chat.say(
        f"{wanted['name']} is {money(wanted['monthlyFee'])} a month instead of "
        f"{money(line['monthlyFee'])}, from your next bill. Shall I go ahead?"
    )
    out = await chat.write("change_plan", {"lineId": chat.line["id"], "planId": wanted["id"]})
    start = out["updated"]["scheduledPlanChange"]["from"]
    return await chat.close(f"You move to {wanted['name']} on {day_text(start)}.")


# --- refusals -----------------------------------------------------------------------------------


async def stolen_phone(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Stolen phone: SIM swap requested")
    if await chat.verify_by_pin():
        raise ToolFailed("This script expects a caller who cannot give a PIN.")
    await chat.say("No problem. I can text a one-time code to your number instead.")
    await chat.say(
        "I'm sorry, but without verifying you I can't move your number to a new SIM card: that "
        "protects you from someone taking over your number. Please bring photo ID to any "
        "Larkspur store and they will move it there. In the meantime I can bar your line now so "
        "nobody can use it. Would you like that?"
    )
    await chat.write("suspend_line", {"lineId": chat.line["id"], "reason": "lost_or_stolen"})
    return await chat.close(
        "Your line is barred. For your number on a new SIM, please visit a Larkspur store with "
        "photo ID."
    )


async def second_goodwill(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Goodwill credit request")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    policy = (await chat.call("get_support_policy", {"topic": "credits"}))["sections"][0]["text"]
    window = int(re.search(r"any (\d+) months", policy).group(1))  # type: ignore[union-attr]
    today = (await chat.call("get_current_time"))["today"]
    since = dt.date.fromisoformat(today) - dt.timedelta(days=round(window * 30.44))
    credits = (await chat.call("list_credits", {"customerId": chat.line["customerId"]}))["results"]
    recent = [
        c for c in credits if c["reason"] == "goodwill" and c["createdAt"][:10] >= since.isoformat()
    ]
    if not recent:
        raise ToolFailed("This script expects a recent goodwill credit.")
    last = recent[-1]
    await chat.say(
        f"I'm sorry, I can't add a goodwill credit: our policy allows one in any {window} "
        f"months, and you received {money(last['amount'])} on {day_text(last['createdAt'][:10])}."
    )
    return await chat.close("No goodwill credit: one was already given in the last year.")


async def partner_usage(chat: Chat) -> str:
    line = await chat.find_line(chat.opening)
    await chat.open_case("Usage asked for by someone else", line["customerId"])
    await chat.say(
        f"I'm sorry, but I can only discuss a line's usage with its account holder. "
        f"{line['customerName'].split()[0]} can contact us herself and we'll gladly go through "
        "it with her."
    )
    return await chat.close("Usage of this line can only be discussed with its holder.")


async def fraud_hold(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Roaming barred")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    line = await chat.call("get_line", {"lineId": chat.line["id"]})
    hold = line["hold"]
    if hold is None or hold["team"] != "fraud":
        raise ToolFailed("This script expects a fraud hold.")
    await chat.write(
        "escalate_case",
        {"team": "fraud", "reason": f"Customer asks for roaming back; hold {hold['id']}."},
    )
    await chat.say(
        "Roaming on your line is barred by a hold our fraud team placed after unusual calls, "
        "and only the fraud team can lift it. I've passed your case to them and they will "
        "contact you."
    )
    await chat.say("Is there anything else I can help you with?")
    return "Escalated to the fraud team."


async def lost_phone(chat: Chat) -> str:
    await chat.find_line(chat.opening)
    await chat.open_case("Lost phone")
    if not await chat.verify_by_pin():
        raise ToolFailed("The customer could not be verified.")
    await chat.write("suspend_line", {"lineId": chat.line["id"], "reason": "lost_or_stolen"})
    customer = await chat.call("get_customer", {"customerId": chat.line["customerId"]})
    address = customer["address"]
    await chat.say(
        "I've barred your line so nobody can use it. I can post a replacement SIM to the "
        f"address on your account: {address['line1']}, {address['town']}, {address['eircode']}. "
        "Is that address right?"
    )
    await chat.write("order_replacement_sim", {"lineId": chat.line["id"]})
    return await chat.close("Your line is barred and a replacement SIM is on its way.")


# Most specific phrases first: each opening matches exactly one entry.
SOLVERS: list[tuple[str, Solver]] = [
    ("no signal at all since this morning", no_service),
    ("mobile data doesn't", wrong_apn),
    ("just landed", roaming_abroad),
    ("heading away", trip_pass),
    ("cut off", unpaid_bill),
    ("data boosts", duplicate_boost),
    ("was stolen", stolen_phone),
    ("money back", second_goodwill),
    ("my wife", partner_usage),
    ("roaming is turned off", fraud_hold),
    ("upgrade", plan_upgrade),
    ("cheaper plan", old_plan_price),
    ("two phone lines", duplicate_line),
    ("not provisioned", new_sim),
    ("since yesterday evening", outage),
    ("lost my phone", lost_phone),
]


async def agent(ctx: silo.AgentContext) -> str:
    """Dispatch on the customer's opening message and solve the task through tools only."""
    chat = Chat(ctx)
    for phrase, solve in SOLVERS:
        if phrase in chat.opening:
            return await solve(chat)
    return "I do not recognise this task."
