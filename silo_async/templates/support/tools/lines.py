"""Changes to a line: suspension, roaming, plan, add-ons, SIM swaps, replacement SIMs,
cancellation. Each is made on a case whose caller is verified (barring a lost or stolen line is
the exception) and audited with the case id.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w
from silo_async.world.clock import add_days, now, today

from ..state import (
    Addon,
    Line,
    LineAddon,
    Sim,
    SimOrder,
    UnbilledCharge,
    active_hold,
    current_plan,
    next_bill_date,
    normalise_iccid,
    overdue_bills,
    scheduled_plan,
    suspension_reason,
)
from .helpers import ACTOR, LINE, CaseInput, line_case
from .views import line_addon_view, line_view

__all__ = [
    "add_line_addon",
    "cancel_line",
    "change_plan",
    "order_replacement_sim",
    "resume_line",
    "set_line_roaming",
    "suspend_line",
    "swap_sim",
]


def _not_cancelled(state: Any, line: Line) -> None:
    if line["status"] == "cancelled":
        raise silo.tool_error(
            "invalid_state",
            f"Line {line['id']} was cancelled on {line['cancelledDate']}; it cannot change.",
            {"id": line["id"], "status": "cancelled"},
        )


LIVE_LINE = LINE.guarded(_not_cancelled)


def _done(call: w.Write[Any], detail: str) -> dict[str, Any]:
    call.audit(f"{detail} (case {call.args.caseId})")
    return {"updated": line_view(call.state, call.record), "changes": call.changes}


class _Suspend(CaseInput):
    reason = w.fields.enum(
        "lost_or_stolen (allowed before the caller is verified) or customer_request.",
        ["lost_or_stolen", "customer_request"],
    )


@ACTOR.write_tool(_Suspend, target=LIVE_LINE)
def suspend_line(call: w.Write[_Suspend]) -> dict[str, Any]:
    """Suspend (bar) a line: no calls, texts or data except emergency calls. A line reported
    lost or stolen may be barred before the caller is verified.
    """
    reason = call.args.reason
    line, _ = line_case(call, verified=reason != "lost_or_stolen")
    if line["status"] == "suspended":
        raise silo.tool_error(
            "conflict",
            f"Line {line['id']} is already suspended ({suspension_reason(line)}).",
        )
    call.set("status", "suspended")
    call.set("suspension", {"reason": reason, "since": today(call.state)})
    return _done(call, f"Suspended: {reason}")


@ACTOR.write_tool(CaseInput, target=LIVE_LINE)
def resume_line(call: w.Write[CaseInput]) -> dict[str, Any]:
    """Lift a line's suspension. A line suspended for non-payment resumes only when no bill of
    the account is overdue. The phone must be restarted to pick the line up again.
    """
    line, _ = line_case(call)
    if line["status"] != "suspended":
        raise silo.tool_error(
            "invalid_state", f"Line {line['id']} is {line['status']}, not suspended."
        )
    reason = suspension_reason(line)
    overdue = overdue_bills(call.state, line["customerId"])
    if reason == "non_payment" and overdue:
        raise silo.tool_error(
            "not_allowed",
            f"Line {line['id']} is suspended for non-payment and {len(overdue)} bill(s) are still "
            f"overdue ({', '.join(b['id'] for b in overdue)}); take payment first.",
            {"overdueBillIds": [b["id"] for b in overdue]},
        )
    call.set("status", "active")
    call.set("suspension", None)
    call.set("provisioningVersion", line["provisioningVersion"] + 1)
    return _done(call, f"Suspension ({reason}) lifted")


class _Roaming(CaseInput):
    enabled = w.fields.boolean("true lifts the roaming bar, false bars roaming.")


@ACTOR.write_tool(_Roaming, target=LIVE_LINE)
def set_line_roaming(call: w.Write[_Roaming]) -> dict[str, Any]:
    """Allow or bar roaming on a line (network side; the phone's own data roaming setting is the
    customer's). A bar placed by a hold stays until that team releases the hold.
    """
    line, _ = line_case(call)
    enabled = call.args.enabled
    hold = active_hold(call.state, line["id"])
    if enabled and hold is not None:
        raise silo.tool_error(
            "not_allowed",
            f"Line {line['id']} is under a {hold['team']} hold ({hold['id']}): only the "
            f"{hold['team']} team can lift its roaming bar. Escalate the case to them.",
            {"holdId": hold["id"], "team": hold["team"]},
        )
    if line["roamingEnabled"] == enabled:
        state_word = "allowed" if enabled else "barred"
        raise silo.tool_error("conflict", f"Roaming is already {state_word} on {line['id']}.")
    call.set("roamingEnabled", enabled)
    return _done(call, "Roaming allowed" if enabled else "Roaming barred")


class _Plan(CaseInput):
    planId = w.fields.string("The new plan, e.g. PLN-004.")


@ACTOR.write_tool(_Plan, target=LIVE_LINE)
def change_plan(call: w.Write[_Plan]) -> dict[str, Any]:
    """Move a line to another plan from the next bill date (replacing any change already
    scheduled). Retired plans cannot be chosen.
    """
    line, _ = line_case(call)
    state = call.state
    plan = w.records.require_record(state, "plans", call.args.planId)
    if not plan["active"]:
        raise silo.tool_error("invalid_state", f"Plan {plan['id']} ({plan['name']}) is retired.")
    scheduled = scheduled_plan(state, line)
    if scheduled is None and current_plan(state, line)["id"] == plan["id"]:
        raise silo.tool_error("conflict", f"Line {line['id']} is already on {plan['name']}.")
    start = next_bill_date(state)
    history = [p for p in line["planHistory"] if p["start"] <= today(state)]
    call.set("planHistory", [*history, {"planId": plan["id"], "start": start}])
    return _done(call, f"Plan change to {plan['name']} from {start}")


class _AddonInput(CaseInput):
    addonId = w.fields.string("The add-on, e.g. ADD-004.")
    startDate = w.fields.date(
        "First day a roaming pass is in force (today or later; default today). Data boosts "
        "start at once.",
        default=None,
    )


@ACTOR.write_tool(_AddonInput, target=LIVE_LINE)
def add_line_addon(call: w.Write[_AddonInput]) -> dict[str, Any]:
    """Buy an add-on for a line: a roaming pass from a start date, or a data boost now. Its
    price is charged on the next bill.
    """
    line, _ = line_case(call)
    state, args = call.state, call.args
    addon: Addon = w.records.require_record(state, "addons", args.addonId)
    start = args.startDate or today(state)
    if start < today(state):
        raise w.fields.invalid("startDate", f"must be today ({today(state)}) or later", start)
    if addon["kind"] == "data_boost":
        start = today(state)
    if start > add_days(today(state), 90):
        raise w.fields.invalid("startDate", "must be within 90 days", start)
    item: LineAddon = {
        "id": w.records.next_id(state, "LAD"),
        "lineId": line["id"],
        "addonId": addon["id"],
        "startDate": start,
        "price": addon["price"],
        "addedAt": now(state),
    }
    state["lineAddons"][item["id"]] = item
    _charge(call, line, addon["name"], addon["price"])
    call.audit(f"{addon['name']} ({item['id']}) from {start} (case {args.caseId})")
    return {"added": line_addon_view(state, item)}


def _charge(call: w.Write[Any], line: Line, description: str, amount: float) -> None:
    state = call.state
    charge: UnbilledCharge = {
        "id": w.records.next_id(state, "UBC"),
        "customerId": line["customerId"],
        "lineId": line["id"],
        "description": description,
        "amount": amount,
        "date": today(state),
    }
    state["unbilledCharges"][charge["id"]] = charge


class _Swap(CaseInput):
    iccid = w.fields.string("The ICCID printed on the new SIM card (spaces allowed).")


@ACTOR.write_tool(_Swap, target=LIVE_LINE)
def swap_sim(call: w.Write[_Swap]) -> dict[str, Any]:
    """Move a line to another SIM card: the new card becomes active and the old one is
    deactivated. The new card must be inactive and not meant for another line. The phone must
    be restarted with the new card in it.
    """
    line, _ = line_case(call)
    state = call.state
    wanted = normalise_iccid(call.args.iccid)
    sim: Sim | None = next((s for s in state["sims"].values() if s["iccid"] == wanted), None)
    if sim is None:
        raise w.records.not_found("sims", wanted, "SIM card with ICCID")
    if sim["status"] != "inactive" or sim["lineId"] not in (None, line["id"]):
        raise silo.tool_error(
            "invalid_state",
            f"SIM {sim['id']} is {sim['status']}"
            + (f" and meant for {sim['lineId']}" if sim["lineId"] else "")
            + "; only a new, inactive card can take the line.",
        )
    old: Sim = state["sims"][line["simId"]]
    w.records.set_field(old, "status", "deactivated", [])
    w.records.set_field(sim, "status", "active", [])
    w.records.set_field(sim, "lineId", line["id"], [])
    call.set("simId", sim["id"])
    call.set("provisioningVersion", line["provisioningVersion"] + 1)
    return _done(call, f"SIM swapped from {old['id']} to {sim['id']}")


@ACTOR.write_tool(CaseInput, target=LIVE_LINE)
def order_replacement_sim(call: w.Write[CaseInput]) -> dict[str, Any]:
    """Post a replacement SIM card for a line to the account's address on file. The line keeps
    its current SIM until the new card is activated with swap_sim.
    """
    line, _ = line_case(call)
    state = call.state
    customer = state["customers"][line["customerId"]]
    order: SimOrder = {
        "id": w.records.next_id(state, "ORD"),
        "lineId": line["id"],
        "simId": None,
        "address": dict(customer["address"]),  # type: ignore[typeddict-item]
        "status": "pending",
        "createdAt": now(state),
    }
    state["simOrders"][order["id"]] = order
    call.audit(f"Replacement SIM {order['id']} ordered (case {call.args.caseId})")
    return {"order": order}


class _Cancel(CaseInput):
    reason = w.fields.enum(
        "customer_request (an early termination fee applies inside the minimum term) or "
        "opened_in_error (a line created by mistake: no fee).",
        ["customer_request", "opened_in_error"],
    )


@ACTOR.write_tool(_Cancel, target=LIVE_LINE)
def cancel_line(call: w.Write[_Cancel]) -> dict[str, Any]:
    """Cancel a line for good; its SIM is deactivated. Inside the minimum term a customer
    request adds the early termination fee to the next bill.
    """
    line, _ = line_case(call)
    state, reason = call.state, call.args.reason
    fee = 0.0
    term_end = line["minimumTermEnd"]
    if reason == "customer_request" and term_end is not None and today(state) < term_end:
        fee = state["policies"]["earlyTerminationFee"]
        _charge(call, line, f"Early termination fee ({line['msisdn']})", fee)
    w.records.set_field(state["sims"][line["simId"]], "status", "deactivated", [])
    call.set("status", "cancelled")
    call.set("suspension", None)
    call.set("cancelledDate", today(state))
    call.set("cancelReason", reason)
    result = _done(call, f"Cancelled: {reason}" + (f", fee {fee:.2f}" if fee else ""))
    return {**result, "earlyTerminationFee": fee}
