"""Merging a duplicate vendor record into the record that survives."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record
from .common import actor, change, named, target

__all__ = ["merge_vendors"]

#: (collection, field, audit entity type): where a vendor id can appear as a single value.
_POINTERS = (
    ("purchaseOrders", "vendorId", "purchaseOrder"),
    ("vendorInvoices", "vendorId", "vendorInvoice"),
    ("payments", "vendorId", "payment"),
    ("quotations", "vendorId", "quotation"),
    ("products", "preferredVendorId", "product"),
)


def _check_pair(duplicate: Record, survivor: Record) -> None:
    if duplicate["id"] == survivor["id"]:
        raise silo.tool_error("invalid_input", "A vendor cannot be merged into itself.")
    for vendor in (duplicate, survivor):
        if vendor["status"] == "merged":
            raise silo.tool_error(
                "invalid_state",
                f"Vendor {vendor['id']} was already merged into {vendor['mergedIntoId']}.",
                {"vendorId": vendor["id"], "status": "merged"},
            )
    if survivor["status"] != "active":
        raise silo.tool_error(
            "invalid_state",
            f"Vendor {survivor['id']} is {survivor['status']}; the surviving record must be "
            "active.",
            {"vendorId": survivor["id"], "status": survivor["status"]},
        )
    if duplicate["vatNumber"] != survivor["vatNumber"]:
        raise silo.tool_error(
            "conflict",
            f"{duplicate['id']} (VAT {duplicate['vatNumber']}) and {survivor['id']} (VAT "
            f"{survivor['vatNumber']}) are different companies; only records with the same VAT "
            "number can be merged.",
        )


def _repoint(call: w.Write, old: str, new: str) -> list[str]:
    state = call.state
    moved: list[str] = []
    detail = f"Vendor {old} merged into {new}."
    for collection, field, entity in _POINTERS:
        for record in w.tools.sorted_by_id(state[collection]):
            if record.get(field) == old:
                change(call, detail, record, entity, **{field: new})
                moved.append(record["id"])
    for rfq in w.tools.sorted_by_id(state["rfqs"]):
        if old in rfq["invitedVendorIds"]:
            invited = [new if v == old else v for v in rfq["invitedVendorIds"]]
            change(call, detail, rfq, "rfq", invitedVendorIds=list(dict.fromkeys(invited)))
            moved.append(rfq["id"])
    return moved


class _Survivor(w.Input):
    survivorVendorId = w.fields.string("The record that stays (must be active).")


@actor("vendorMaster").write_tool(
    _Survivor, target=target("vendors", "duplicateVendorId", "The record to retire.", "vendor")
)
def merge_vendors(call: w.Write[_Survivor]) -> dict[str, Any]:
    """Merge a duplicate vendor record into the record that survives (same VAT number required;
    vendor master roles). Every order, invoice, payment, quotation, RFQ invitation and
    preferred-vendor link moves to the survivor; the duplicate is kept as status merged.
    """
    state, duplicate = call.state, call.record
    survivor = named(state, "vendors", call.args.survivorVendorId)
    _check_pair(duplicate, survivor)
    moved = _repoint(call, duplicate["id"], survivor["id"])
    audit_id = change(
        call,
        f"Merged into {survivor['id']}; moved {', '.join(moved) or 'nothing'}.",
        status="merged",
        mergedIntoId=survivor["id"],
        statusReason=f"Duplicate of {survivor['id']}",
    )
    return {"merged": duplicate, "survivor": survivor, "moved": moved, "auditId": audit_id}
