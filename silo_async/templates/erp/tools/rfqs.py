"""Requests for quotation: draft -> sent (vendors may quote) -> closed or awarded / cancelled."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State
from .common import ACTOR, acting_user, require_permission
from .quotations import quotation_view

__all__ = [
    "cancel_rfq",
    "close_rfq",
    "create_rfq",
    "get_rfq",
    "invite_vendor_to_rfq",
    "list_rfqs",
    "send_rfq",
]

STATUSES = ("draft", "sent", "closed", "awarded", "cancelled")


def _rfq_view(state: State, rfq: Any) -> dict[str, Any]:
    return {
        **rfq,
        "quotations": [
            quotation_view(state, q)
            for q in w.sorted_by_id(state["quotations"])
            if q["rfqId"] == rfq["id"]
        ],
    }


list_rfqs = w.list_tool(
    "list_rfqs",
    "List RFQs sorted by id; filter by status. Paged.",
    "rfqs",
    filters={"status": w.enum("Only RFQs with this status.", STATUSES)},
)
get_rfq = w.get_tool(
    "get_rfq", "One RFQ with its quotations.", "rfqs", "rfqId", "RFQ-001", view=_rfq_view
)


def _buyer(state: State, input: dict[str, Any]) -> Record:
    actor = acting_user(state, input)
    require_permission(state, actor, "purchasing")
    return actor


def _invitable(state: State, vendor_id: str) -> Record:
    vendor: Record = w.require_record(state, "vendors", vendor_id)
    if vendor["status"] in ("blocked", "merged"):
        raise silo.tool_error(
            "not_allowed",
            f"Vendor {vendor['id']} is {vendor['status']} and cannot be invited to quote.",
            {"vendorId": vendor["id"], "status": vendor["status"]},
        )
    return vendor


@w.define_tool(
    "create_rfq",
    "Create a draft RFQ, from an approved requisition (its lines are copied) or from lines "
    "given here, optionally inviting vendors (not blocked).",
    {
        "title": w.string("What is being bought."),
        "requisitionId": w.string("An approved requisition without an RFQ yet."),
        "lines": w.array(
            "Products and quantities (when there is no requisition).",
            w.closed_object(
                {"productId": w.string("The product."), "quantity": w.integer("Units.", minimum=1)},
                ["productId", "quantity"],
            ),
        ),
        "vendorIds": w.array("Vendors to invite.", w.string("A vendor id."), unique=True),
        "responseDueDate": w.date("When quotations are due"),
        **ACTOR,
    },
    ["title", "responseDueDate", "actorId"],
)
def create_rfq(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a draft RFQ."""
    actor = _buyer(state, input)
    requisition_id = w.read_string(input, "requisitionId", None)
    if requisition_id is not None:
        requisition = w.require_record(state, "requisitions", requisition_id)
        w.require_status(requisition, "requisitions", ("approved",), "request quotations")
        if requisition["rfqId"] is not None:
            raise silo.tool_error(
                "conflict", f"{requisition_id} already has {requisition['rfqId']}."
            )
        lines = [
            {"lineNo": ln["lineNo"], "productId": ln["productId"], "quantity": ln["quantity"]}
            for ln in requisition["lines"]
        ]
    else:
        items = w.read_objects(input, "lines")
        lines = [
            {
                "lineNo": i + 1,
                "productId": w.require_record(
                    state, "products", w.read_string(it, "productId", path=f"lines[{i}]")
                )["id"],
                "quantity": w.read_int(it, "quantity", minimum=1, path=f"lines[{i}]"),
            }
            for i, it in enumerate(items)
        ]
    vendors = [_invitable(state, v)["id"] for v in w.read_strings(input, "vendorIds", [])]
    rfq_id = w.next_id(state, "RFQ")
    state["rfqs"][rfq_id] = {
        "id": rfq_id,
        "title": w.read_string(input, "title"),
        "requisitionId": requisition_id,
        "status": "draft",
        "lines": lines,
        "invitedVendorIds": vendors,
        "createdBy": actor["id"],
        "createdAt": w.now(state),
        "sentAt": None,
        "responseDueDate": w.read_date(input, "responseDueDate"),
        "awardedQuotationId": None,
    }
    if requisition_id is not None:
        state["requisitions"][requisition_id]["rfqId"] = rfq_id
    audit_id = w.audit(state, actor["id"], "create_rfq", "rfq", rfq_id, "Created.")
    return {"created": _rfq_view(state, state["rfqs"][rfq_id]), "auditId": audit_id}


def _rfq(state: State, input: dict[str, Any]) -> Record:
    rfq: Record = w.require_record(state, "rfqs", w.read_string(input, "rfqId"))
    return rfq


@w.define_tool(
    "invite_vendor_to_rfq",
    "Invite one more vendor (not blocked) to a draft or sent RFQ.",
    {"rfqId": w.string("The RFQ."), "vendorId": w.string("The vendor."), **ACTOR},
    ["rfqId", "vendorId", "actorId"],
)
def invite_vendor_to_rfq(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Add a vendor to the invitation list."""
    actor = _buyer(state, input)
    rfq = _rfq(state, input)
    w.require_status(rfq, "rfqs", ("draft", "sent"), "invite vendors", label="RFQ")
    vendor = _invitable(state, w.read_string(input, "vendorId"))
    if vendor["id"] in rfq["invitedVendorIds"]:
        raise silo.tool_error("conflict", f"{vendor['id']} is already invited to {rfq['id']}.")
    rfq["invitedVendorIds"].append(vendor["id"])
    audit_id = w.audit(
        state, actor["id"], "invite_vendor_to_rfq", "rfq", rfq["id"], f"Invited {vendor['id']}."
    )
    return {"updated": _rfq_view(state, rfq), "auditId": audit_id}


def _move(
    state: State, input: dict[str, Any], wanted: tuple[str, ...], to: str, action: str
) -> Any:
    actor = _buyer(state, input)
    rfq = _rfq(state, input)
    w.require_status(rfq, "rfqs", wanted, f"become {to}", label="RFQ")
    if to == "sent" and (not rfq["invitedVendorIds"] or not rfq["lines"]):
        raise silo.tool_error(
            "invalid_state", f"{rfq['id']} needs at least one line and one invited vendor."
        )
    reason: str | None = w.read_string(input, "reason", None)
    changes: list[w.Change] = []
    w.set_field(rfq, "status", to, changes)
    if to == "sent":
        w.set_field(rfq, "sentAt", w.now(state), changes)
    if to == "cancelled" and rfq["requisitionId"] is not None:
        state["requisitions"][rfq["requisitionId"]]["rfqId"] = None
    audit_id = w.audit(
        state,
        actor["id"],
        action,
        "rfq",
        rfq["id"],
        reason or f"Now {to}.",
        changes,
    )
    return {"updated": _rfq_view(state, rfq), "auditId": audit_id}


_RFQ_ONLY = {"rfqId": w.string("The RFQ."), **ACTOR}


@w.define_tool(
    "send_rfq", "Send a draft RFQ to its invited vendors.", _RFQ_ONLY, ["rfqId", "actorId"]
)
def send_rfq(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Draft -> sent."""
    result: dict[str, Any] = _move(state, input, ("draft",), "sent", "send_rfq")
    return result


@w.define_tool(
    "close_rfq", "Stop accepting quotations on a sent RFQ.", _RFQ_ONLY, ["rfqId", "actorId"]
)
def close_rfq(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Sent -> closed."""
    result: dict[str, Any] = _move(state, input, ("sent",), "closed", "close_rfq")
    return result


@w.define_tool(
    "cancel_rfq",
    "Cancel an RFQ that is not awarded; its requisition can get a new RFQ.",
    {**_RFQ_ONLY, "reason": w.string("Why.")},
    ["rfqId", "reason", "actorId"],
)
def cancel_rfq(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Draft / sent / closed -> cancelled."""
    result: dict[str, Any] = _move(
        state, input, ("draft", "sent", "closed"), "cancelled", "cancel_rfq"
    )
    return result
