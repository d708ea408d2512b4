"""Quotations: vendors' answers to an RFQ, compared and awarded.

A quotation is valid while it is ``received`` and its ``validUntil`` is today or later. Only a
valid quotation from an active vendor can be accepted; accepting it awards the RFQ and rejects
the RFQ's other open quotations.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.purchasing import is_valid
from ..state import Record, State, lines_net
from .common import Reason, actor, changed, in_status, named, target
from .vendors import require_active_vendor

__all__ = [
    "accept_quotation",
    "compare_quotations",
    "get_quotation",
    "list_quotations",
    "quotation_view",
    "record_quotation",
    "reject_quotation",
]

STATUSES = ("received", "accepted", "rejected")


def quotation_view(state: State, quotation: Any) -> dict[str, Any]:
    """A quotation with its total, validity and its vendor's status."""
    return {
        **quotation,
        "total": lines_net(quotation["lines"]),
        "isValid": is_valid(state, quotation),
        "vendorStatus": state["vendors"][quotation["vendorId"]]["status"],
    }


QUOTATIONS = w.Collection("quotations", "quotationId", "QUO-001", view=quotation_view)
list_quotations = QUOTATIONS.list_tool(
    "List quotations sorted by id with total, validity and vendor status; filter by RFQ, vendor "
    "or status. Paged.",
    filters={
        "rfqId": w.schema.string("Only quotations for this RFQ."),
        "vendorId": w.schema.string("Only this vendor's quotations."),
        "status": w.schema.enum("Only quotations with this status.", STATUSES),
    },
    references={"rfqId": "rfqs", "vendorId": "vendors"},
)
get_quotation = QUOTATIONS.get_tool("One quotation.")


class _Rfq(w.Input):
    rfqId = w.fields.string("The RFQ.")


@w.define_tool(_Rfq)
def compare_quotations(state: State, args: _Rfq) -> dict[str, Any]:
    """An RFQ's quotations side by side, cheapest total first, each with validity, lead time and its
    vendor's status.
    """
    rfq = named(state, "rfqs", args.rfqId)
    rows = [
        quotation_view(state, q) for q in state["quotations"].values() if q["rfqId"] == rfq["id"]
    ]
    rows.sort(key=lambda q: (q["total"], q["id"]))
    return {"rfqId": rfq["id"], "status": rfq["status"], "quotations": rows}


_BUYER = actor("purchasing")
_QUOTATION = target("quotations", "quotationId", "The quotation.", "quotation")
_RFQ = target("rfqs", "rfqId", "The RFQ.", "rfq")


class _QuotedLine(w.Input):
    lineNo = w.fields.integer("The RFQ line.", minimum=1)
    unitPrice = w.fields.money("Unit price.")


class _Quotation(w.Input):
    vendorId = w.fields.string("An invited vendor.")
    lines = w.fields.objects("A unit price per RFQ line.", _QuotedLine)
    leadTimeDays = w.fields.integer("Promised lead time.", minimum=0, maximum=365)
    validUntil = w.fields.date("Last day the prices hold")
    notes = w.fields.string("Vendor remarks.", default=None)


def _quoted_lines(rfq: Record, args: _Quotation) -> list[dict[str, Any]]:
    prices = {}
    for item in args.lines:
        prices[item.lineNo] = item.unitPrice  # (the price is read before the line number)
    wanted = {ln["lineNo"] for ln in rfq["lines"]}
    if set(prices) != wanted:
        raise silo.tool_error(
            "invalid_input",
            f"Quote every line of {rfq['id']} once: lines {sorted(wanted)}, got {sorted(prices)}.",
        )
    return [{**ln, "unitPrice": prices[ln["lineNo"]]} for ln in rfq["lines"]]


@_BUYER.write_tool(_Quotation, target=in_status(_RFQ, ("sent",), "record quotations", "RFQ"))
def record_quotation(call: w.Write[_Quotation]) -> dict[str, Any]:
    """Record an invited vendor's quotation for a sent RFQ: a unit price for every RFQ line."""
    state, args, rfq = call.state, call.args, call.record
    vendor_id = args.vendorId
    if vendor_id not in rfq["invitedVendorIds"]:
        raise silo.tool_error("not_allowed", f"{vendor_id} was not invited to {rfq['id']}.")
    if any(
        q["rfqId"] == rfq["id"] and q["vendorId"] == vendor_id for q in state["quotations"].values()
    ):
        raise silo.tool_error("conflict", f"{vendor_id} already quoted for {rfq['id']}.")
    quotation: Record = {
        "id": w.records.next_id(state, "QUO"),
        "rfqId": rfq["id"],
        "vendorId": vendor_id,
        "status": "received",
        "lines": _quoted_lines(rfq, args),
        "leadTimeDays": args.leadTimeDays,
        "validUntil": args.validUntil,
        "receivedAt": w.clock.now(state),
        "notes": args.notes,
    }
    audit_id = call.add(_QUOTATION, quotation, f"Quotation from {vendor_id} for {rfq['id']}.")
    return {"created": quotation_view(state, quotation), "auditId": audit_id}


@_BUYER.write_tool(target=in_status(_QUOTATION, ("received",), "be accepted"))
def accept_quotation(call: w.Write) -> dict[str, Any]:
    """Award an RFQ to one valid quotation from an active vendor; the RFQ's other open quotations
    are rejected. Raise the order with create_purchase_order_from_quotation.

    Received -> accepted; RFQ -> awarded.
    """
    state, quotation = call.state, call.record
    if not is_valid(state, quotation):
        raise silo.tool_error(
            "invalid_state",
            f"{quotation['id']} expired on {quotation['validUntil']} (today is "
            f"{w.clock.today(state)}); ask the vendor to extend it or choose another quotation.",
            {"validUntil": quotation["validUntil"]},
        )
    vendor = state["vendors"][quotation["vendorId"]]
    require_active_vendor(vendor, vendor["statusReason"], "nothing can be ordered from it.")
    rfq = state["rfqs"][quotation["rfqId"]]
    w.records.require_status(rfq, "rfqs", ("sent", "closed"), "be awarded", label="RFQ")
    for other in w.tools.sorted_by_id(state["quotations"]):
        if (
            other["rfqId"] == rfq["id"]
            and other["id"] != quotation["id"]
            and other["status"] == "received"
        ):
            other["status"] = "rejected"
    quotation["status"] = "accepted"
    rfq.update(status="awarded", awardedQuotationId=quotation["id"])
    audit_id = call.audit(f"Awarded {rfq['id']} to {vendor['id']}.")
    return {"accepted": quotation_view(state, quotation), "rfq": rfq, "auditId": audit_id}


@_BUYER.write_tool(Reason, target=in_status(_QUOTATION, ("received",), "be rejected"))
def reject_quotation(call: w.Write[Reason]) -> dict[str, Any]:
    """Reject a received quotation with a reason.

    Received -> rejected.
    """
    return changed(call, quotation_view, call.args.reason, status="rejected")
