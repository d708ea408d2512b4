"""Requests for quotation: draft -> sent (vendors may quote) -> closed or awarded / cancelled."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State
from .common import actor, in_status, target
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
            for q in w.tools.sorted_by_id(state["quotations"])
            if q["rfqId"] == rfq["id"]
        ],
    }


RFQS = w.Collection("rfqs", "rfqId", "RFQ-001", view=_rfq_view)
list_rfqs = RFQS.list_tool(
    "List RFQs sorted by id; filter by status. Paged.",
    filters={"status": w.schema.enum("Only RFQs with this status.", STATUSES)},
    view=None,
)
get_rfq = RFQS.get_tool("One RFQ with its quotations.")


_BUYER = actor("purchasing")
_RFQ = target("rfqs", "rfqId", "The RFQ.", "rfq")


def _invitable(state: State, vendor_id: str) -> Record:
    vendor: Record = w.records.require_record(state, "vendors", vendor_id)
    if vendor["status"] in ("blocked", "merged"):
        raise silo.tool_error(
            "not_allowed",
            f"Vendor {vendor['id']} is {vendor['status']} and cannot be invited to quote.",
            {"vendorId": vendor["id"], "status": vendor["status"]},
        )
    return vendor


class _RfqLine(w.Input):
    productId = w.fields.string("The product.")
    quantity = w.fields.integer("Units.", minimum=1)


class _NewRfq(w.Input):
    title = w.fields.string("What is being bought.")
    requisitionId = w.fields.string("An approved requisition without an RFQ yet.", default=None)
    lines = w.fields.objects(
        "Products and quantities (when there is no requisition).", _RfqLine, default=None
    )
    vendorIds: w.fields.Field[list[str]] = w.fields.strings(
        "Vendors to invite.", "A vendor id.", unique=True, default=[]
    )
    responseDueDate = w.fields.date("When quotations are due")


@_BUYER.write_tool(_NewRfq)
def create_rfq(call: w.Write[_NewRfq]) -> dict[str, Any]:
    """Create a draft RFQ, from an approved requisition (its lines are copied) or from lines given
    here, optionally inviting vendors (not blocked).
    """
    state, args = call.state, call.args
    requisition_id = args.requisitionId
    if requisition_id is not None:
        requisition = w.records.require_record(state, "requisitions", requisition_id)
        w.records.require_status(requisition, "requisitions", ("approved",), "request quotations")
        if requisition["rfqId"] is not None:
            raise silo.tool_error(
                "conflict", f"{requisition_id} already has {requisition['rfqId']}."
            )
        lines = [
            {"lineNo": ln["lineNo"], "productId": ln["productId"], "quantity": ln["quantity"]}
            for ln in requisition["lines"]
        ]
    else:
        items: list[_RfqLine] = w.fields.read(args, "lines", default=w.fields.REQUIRED)
        lines = [
            {
                "lineNo": i + 1,
                "productId": w.records.require_record(state, "products", it.productId)["id"],
                "quantity": it.quantity,
            }
            for i, it in enumerate(items)
        ]
    vendors = [_invitable(state, v)["id"] for v in args.vendorIds]
    rfq: Record = {
        "id": w.records.next_id(state, "RFQ"),
        "title": args.title,
        "requisitionId": requisition_id,
        "status": "draft",
        "lines": lines,
        "invitedVendorIds": vendors,
        "createdBy": call.actor["id"],
        "createdAt": w.clock.now(state),
        "sentAt": None,
        "responseDueDate": args.responseDueDate,
        "awardedQuotationId": None,
    }
    if requisition_id is not None:
        state["requisitions"][requisition_id]["rfqId"] = rfq["id"]
    audit_id = call.add(_RFQ, rfq, "Created.")
    return {"created": _rfq_view(state, rfq), "auditId": audit_id}


class _Invitee(w.Input):
    vendorId = w.fields.string("The vendor.")


@_BUYER.write_tool(_Invitee, target=in_status(_RFQ, ("draft", "sent"), "invite vendors", "RFQ"))
def invite_vendor_to_rfq(call: w.Write[_Invitee]) -> dict[str, Any]:
    """Invite one more vendor (not blocked) to a draft or sent RFQ."""
    state, rfq = call.state, call.record
    vendor = _invitable(state, call.args.vendorId)
    if vendor["id"] in rfq["invitedVendorIds"]:
        raise silo.tool_error("conflict", f"{vendor['id']} is already invited to {rfq['id']}.")
    rfq["invitedVendorIds"].append(vendor["id"])
    audit_id = call.audit(f"Invited {vendor['id']}.")
    return {"updated": _rfq_view(state, rfq), "auditId": audit_id}


def _move(call: w.Write, to: str, reason: str | None = None) -> dict[str, Any]:
    state, rfq = call.state, call.record
    if to == "sent" and (not rfq["invitedVendorIds"] or not rfq["lines"]):
        raise silo.tool_error(
            "invalid_state", f"{rfq['id']} needs at least one line and one invited vendor."
        )
    call.set("status", to)
    if to == "sent":
        call.set("sentAt", w.clock.now(state))
    if to == "cancelled" and rfq["requisitionId"] is not None:
        state["requisitions"][rfq["requisitionId"]]["rfqId"] = None
    audit_id = call.audit(reason or f"Now {to}.")
    return {"updated": _rfq_view(state, rfq), "auditId": audit_id}


@_BUYER.write_tool(target=in_status(_RFQ, ("draft",), "become sent", "RFQ"))
def send_rfq(call: w.Write) -> dict[str, Any]:
    """Send a draft RFQ to its invited vendors.

    Draft -> sent.
    """
    return _move(call, "sent")


@_BUYER.write_tool(target=in_status(_RFQ, ("sent",), "become closed", "RFQ"))
def close_rfq(call: w.Write) -> dict[str, Any]:
    """Stop accepting quotations on a sent RFQ.

    Sent -> closed.
    """
    return _move(call, "closed")


class _Cancellation(w.Input):
    # cancel_rfq has always listed the actor between the RFQ and the reason: naming the actor's
    # property among the tool's own keeps it there (write_tool does not move a key given).
    actorId = w.fields.field(_BUYER.schema)
    reason = w.fields.string("Why.")


@_BUYER.write_tool(
    _Cancellation, target=in_status(_RFQ, ("draft", "sent", "closed"), "become cancelled", "RFQ")
)
def cancel_rfq(call: w.Write[_Cancellation]) -> dict[str, Any]:
    """Cancel an RFQ that is not awarded; its requisition can get a new RFQ.

    Draft / sent / closed -> cancelled.
    """
    return _move(call, "cancelled", call.args.reason)
