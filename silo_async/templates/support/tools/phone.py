"""The customer's own tools: their phone's settings and their banking app.

These belong to the user of a conversational task (its ``user.tools``): the agent never gets
them and learns what they show only by asking. Each acts on the customer's phone (found by its
id) or on the payment requests waiting in their banking app (found by the card). They are not
audited: the carrier's log records what its staff do, not what a customer taps on their phone.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w
from silo_async.world.clock import now

from ..state import Device, Payment, State, restarted_version, service_of

__all__ = [
    "USER_TOOLS",
    "approve_card_payment",
    "check_phone_status",
    "read_text_messages",
    "restart_phone",
    "set_airplane_mode",
    "set_apn",
    "set_data_roaming",
    "set_mobile_data",
]

_SIGNAL = {
    "registered": "4G",
    "registered_roaming": "4G (roaming)",
    "emergency_only": "SOS only",
    "not_registered": "No service",
    "rejected": "No service",
}
_SIM_SHOWN = {"no_sim": "No SIM card", "sim_not_provisioned": "SIM not provisioned"}


def phone_view(state: State, device: Device) -> dict[str, Any]:
    """What the customer sees on their phone's screen and settings."""
    service = service_of(state, device)
    sim = state["sims"].get(device["simId"] or "")
    country = state["countries"][device["country"]]["name"]
    return {
        "deviceId": device["id"],
        "model": device["model"],
        "signal": "" if device["airplaneMode"] else _SIGNAL[service.registration],
        "statusBar": "Airplane mode"
        if device["airplaneMode"]
        else _SIM_SHOWN.get(service.cause, ""),
        "airplaneMode": device["airplaneMode"],
        "mobileData": device["mobileData"],
        "dataRoaming": device["dataRoaming"],
        "apn": device["apn"],
        "simCardIccid": None if sim is None else sim["iccid"],
        "internetWorks": service.data_works,
        "location": f"{device['area']}, {country}",
    }


class _Phone(w.Input):
    deviceId = w.fields.string("Your phone, e.g. DEV-001.")


def _phone(state: State, args: _Phone) -> Device:
    device: Device = w.records.require_record(state, "devices", args.deviceId, "Phone")
    return device


@w.define_tool(_Phone)
def check_phone_status(state: State, args: _Phone) -> dict[str, Any]:
    """Look at your phone: the signal, the status bar, the settings and whether internet works."""
    return phone_view(state, _phone(state, args))


@w.define_tool(_Phone)
def read_text_messages(state: State, args: _Phone) -> dict[str, Any]:
    """Read the text messages on your phone, newest first."""
    device = _phone(state, args)
    found = [m for m in state["messages"].values() if m["deviceId"] == device["id"]]
    found.sort(key=lambda m: (m["receivedAt"], m["id"]), reverse=True)
    return {"messages": [{k: m[k] for k in ("sender", "text", "receivedAt")} for m in found]}


class _Switch(_Phone):
    enabled = w.fields.boolean("true switches it on, false off.")


def _setting(field: str, what: str) -> silo.Tool:
    name, description = f"set_{what.replace(' ', '_')}", f"Switch {what} on or off on your phone."

    @w.define_tool(name, description, _Switch)
    def set_switch(state: State, args: _Switch) -> dict[str, Any]:
        device = _phone(state, args)
        device[field] = args.enabled  # type: ignore[literal-required]
        return phone_view(state, device)

    return set_switch


set_airplane_mode = _setting("airplaneMode", "airplane mode")
set_mobile_data = _setting("mobileData", "mobile data")
set_data_roaming = _setting("dataRoaming", "data roaming")


class _Apn(_Phone):
    apn = w.fields.string("The access point name to type in, e.g. as your carrier told you.")


@w.define_tool(_Apn)
def set_apn(state: State, args: _Apn) -> dict[str, Any]:
    """Type a new access point name (APN) into your phone's mobile network settings."""
    device = _phone(state, args)
    device["apn"] = args.apn
    return phone_view(state, device)


@w.define_tool(_Phone)
def restart_phone(state: State, args: _Phone) -> dict[str, Any]:
    """Switch your phone off and on again: it attaches to the network afresh."""
    device = _phone(state, args)
    device["attachedVersion"] = restarted_version(state, device)
    return phone_view(state, device)


class _Bank(w.Input):
    cardId = w.fields.string("Your card, e.g. CRD-021.")


@w.define_tool(_Bank)
def approve_card_payment(state: State, args: _Bank) -> dict[str, Any]:
    """Approve, in your banking app, the payment requests waiting on one of your cards."""
    card = w.records.require_record(state, "cards", args.cardId)
    waiting: list[Payment] = [
        p
        for p in w.tools.sorted_by_id(state["payments"])
        if p["cardId"] == card["id"] and p["status"] == "awaiting_approval"
    ]
    if not waiting:
        raise silo.tool_error(
            "invalid_state",
            f"No payment is waiting for approval on the {card['brand']} ending {card['last4']}.",
        )
    for payment in waiting:
        payment["status"] = "settled"
        payment["settledAt"] = now(state)
    return {"approved": [{k: p[k] for k in ("id", "amount", "billId")} for p in waiting]}


#: The tools a customer has, in the order a conversational task lists them (``user.tools``).
USER_TOOLS: list[silo.Tool] = [
    check_phone_status,
    read_text_messages,
    set_airplane_mode,
    set_mobile_data,
    set_data_roaming,
    set_apn,
    restart_phone,
    approve_card_payment,
]
