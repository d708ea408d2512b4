"""Merging a duplicate vendor record into the record that survives."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State
from .common import ACTOR, acting_user, record_change, require_permission

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


def _repoint(state: State, actor: str, old: str, new: str) -> list[str]:
    moved: list[str] = []
    for collection, field, entity in _POINTERS:
        for record in w.sorted_by_id(state[collection]):
            if record.get(field) == old:
                changes: list[w.Change] = []
                w.set_field(record, field, new, changes)
                w.audit(
                    state,
                    actor,
                    "merge_vendors",
                    entity,
                    record["id"],
                    f"Vendor {old} merged into {new}.",
                    changes,
                )
                moved.append(record["id"])
    for rfq in w.sorted_by_id(state["rfqs"]):
        if old in rfq["invitedVendorIds"]:
            invited = [new if v == old else v for v in rfq["invitedVendorIds"]]
            changes = []
            w.set_field(rfq, "invitedVendorIds", list(dict.fromkeys(invited)), changes)
            w.audit(
                state,
                actor,
                "merge_vendors",
                "rfq",
                rfq["id"],
                f"Vendor {old} merged into {new}.",
                changes,
            )
            moved.append(rfq["id"])
    return moved


@w.define_tool(
    "merge_vendors",
    "Merge a duplicate vendor record into the record that survives (same VAT number required; "
    "vendor master roles). Every order, invoice, payment, quotation, RFQ invitation and "
    "preferred-vendor link moves to the survivor; the duplicate is kept as status merged.",
    {
        "duplicateVendorId": w.string("The record to retire."),
        "survivorVendorId": w.string("The record that stays (must be active)."),
        **ACTOR,
    },
    ["duplicateVendorId", "survivorVendorId", "actorId"],
)
def merge_vendors(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Fold the duplicate into the survivor."""
    actor = acting_user(state, input)
    require_permission(state, actor, "vendorMaster")
    duplicate = w.require_record(state, "vendors", w.read_string(input, "duplicateVendorId"))
    survivor = w.require_record(state, "vendors", w.read_string(input, "survivorVendorId"))
    _check_pair(duplicate, survivor)
    moved = _repoint(state, actor["id"], duplicate["id"], survivor["id"])
    audit_id = record_change(
        state,
        actor["id"],
        "merge_vendors",
        "vendor",
        duplicate,
        f"Merged into {survivor['id']}; moved {', '.join(moved) or 'nothing'}.",
        status="merged",
        mergedIntoId=survivor["id"],
        statusReason=f"Duplicate of {survivor['id']}",
    )
    return {"merged": duplicate, "survivor": survivor, "moved": moved, "auditId": audit_id}
