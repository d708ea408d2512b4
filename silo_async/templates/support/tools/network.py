"""The network: a line's diagnostics, the network settings, and incidents (outages)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Incident, Line, State, active_hold, device_with_sim, service_of
from .helpers import ACTOR, LINE, CaseInput, case_for
from .views import incident_view

__all__ = [
    "get_incident",
    "get_network_settings",
    "list_incidents",
    "run_line_diagnostics",
    "subscribe_line_to_incident",
]


class _Line(w.Input):
    lineId = w.fields.string("Line id, e.g. LIN-004.")


def diagnostics(state: State, line: Line) -> dict[str, Any]:
    """What the network sees of a line and of the phone holding its SIM (not its settings)."""
    sim = state["sims"][line["simId"]]
    report: dict[str, Any] = {
        "lineId": line["id"],
        "msisdn": line["msisdn"],
        "lineStatus": line["status"],
        "suspension": line["suspension"],
        "roamingEnabled": line["roamingEnabled"],
        "hold": None if (hold := active_hold(state, line["id"])) is None else hold["id"],
        "sim": {"id": sim["id"], "iccid": sim["iccid"], "status": sim["status"]},
    }
    device = device_with_sim(state, line["simId"])
    if device is None:
        return {
            **report,
            "registration": "not_registered",
            "registrationDetail": "This line's SIM card has not been seen on the network.",
            "dataSession": "none",
            "dataDetail": "No phone is using this line's SIM card.",
        }
    service = service_of(state, device)
    report.update(
        registration=service.registration,
        registrationDetail=service.registration_detail,
        dataSession=service.data,
        dataDetail=service.data_detail,
    )
    if service.in_service and service.registration == "registered_roaming":
        report["servingCountry"] = device["country"]
    elif service.cause == "roaming_barred":
        report["attemptedCountry"] = device["country"]
    return report


@w.define_tool(_Line)
def run_line_diagnostics(state: State, args: _Line) -> dict[str, Any]:
    """Network diagnostics for a line: its status, SIM, roaming bar and hold, whether a phone
    with its SIM is registered on the network (and where, when roaming) and whether a data
    session works. The network cannot see the phone's own settings.
    """
    line: Line = w.records.require_record(state, "lines", args.lineId)
    return diagnostics(state, line)


class _Nothing(w.Input):
    pass


@w.define_tool(_Nothing)
def get_network_settings(state: State, args: _Nothing) -> dict[str, Any]:
    """The settings a phone needs on the Larkspur network (the APN for mobile data)."""
    return {"apn": state["policies"]["apn"], "network": state["company"]["name"]}


def _in_area(state: State, incident: Incident, input: Mapping[str, Any]) -> bool:
    area = input.get("area")
    return area is None or w.tools.matches_text(area, incident["area"])


INCIDENTS = w.Collection("incidents", "incidentId", "INC-007", view=incident_view)
list_incidents = INCIDENTS.list_tool(
    "List network incidents (outages) sorted by id, optionally only open or resolved ones, or "
    "those whose area contains a text (e.g. a town). Paged.",
    filters={"status": w.fields.enum("Only this status.", ["open", "resolved"], default=None)},
    extra={"area": w.schema.string("Only incidents whose area contains this text.")},
    where=_in_area,
)
get_incident = INCIDENTS.get_tool("One network incident: where, since when, and its ETA.")


class _Subscribe(CaseInput):
    incidentId = w.fields.string("Incident id, e.g. INC-007.")


@ACTOR.write_tool(_Subscribe, target=LINE)
def subscribe_line_to_incident(call: w.Write[_Subscribe]) -> dict[str, Any]:
    """Text a line when an open incident is fixed. Needs an open case of the line's holder
    (verification not needed: the text only tells them service is back).
    """
    line: Line = call.record
    case_for(call.state, call.args, line["customerId"], verified=False)
    incident: Incident = w.records.require_record(call.state, "incidents", call.args.incidentId)
    if incident["status"] != "open":
        raise silo.tool_error(
            "invalid_state",
            f"Incident {incident['id']} is {incident['status']}; only open incidents send updates.",
        )
    if line["id"] in incident["subscriberLineIds"]:
        raise silo.tool_error(
            "conflict", f"Line {line['id']} already gets the update of {incident['id']}."
        )
    incident["subscriberLineIds"].append(line["id"])
    call.audit(
        f"Subscribed to {incident['id']} on case {call.args.caseId}.",
        [{"field": "subscriberLineIds", "from": None, "to": line["id"]}],
        entity="incident",
        entity_id=incident["id"],
    )
    return {"incident": incident_view(call.state, incident), "lineId": line["id"]}
