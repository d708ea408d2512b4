"""Vendors: the supplier master, its approval and blocking, bank details and duplicates.

A vendor is ``pending_approval`` until someone in vendor master approves it (its bank details
must be verified first), ``active`` (orders and payments allowed), ``blocked`` or ``merged``
(a duplicate folded into another record, kept as history).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.payables import invoice_figures
from ..domain.purchasing import LIVE_INVOICE
from ..state import Record, State
from .common import ACTOR, acting_user, record_change, require_permission

__all__ = [
    "approve_vendor",
    "block_vendor",
    "create_vendor",
    "find_duplicate_vendors",
    "get_vendor",
    "get_vendor_balance",
    "list_vendors",
    "search_vendors",
    "unblock_vendor",
    "update_vendor",
    "update_vendor_bank_details",
]

STATUSES = ("pending_approval", "active", "blocked", "merged")
TERMS = ("NET_14", "NET_30", "NET_45", "NET_60")
_IBAN = r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{8,30}$"


def _master_user(state: State, input: dict[str, Any]) -> Record:
    actor = acting_user(state, input)
    require_permission(state, actor, "vendorMaster")
    return actor


def _vendor(state: State, input: dict[str, Any], key: str = "vendorId") -> Record:
    vendor: Record = w.require_record(state, "vendors", w.read_string(input, key))
    return vendor


def _not_merged(vendor: Record) -> None:
    if vendor["status"] == "merged":
        raise silo.tool_error(
            "invalid_state",
            f"Vendor {vendor['id']} was merged into {vendor['mergedIntoId']}; work on "
            f"{vendor['mergedIntoId']} instead.",
            {"status": "merged", "mergedIntoId": vendor["mergedIntoId"]},
        )


list_vendors = w.list_tool(
    "list_vendors",
    "List vendors sorted by id; filter by status or category. Paged.",
    "vendors",
    filters={"status": w.enum("Only vendors with this status.", STATUSES)},
    extra={"category": w.string("Only vendors supplying this category, e.g. tents.")},
    where=lambda state, v, input: input.get("category") in (None, *v["categories"]),
)
search_vendors = w.search_tool(
    "search_vendors",
    "Find vendors whose id, name, VAT number, email or IBAN contains the query. Paged.",
    "vendors",
    ["name", "vatNumber", "email", "iban"],
)
get_vendor = w.get_tool("get_vendor", "One vendor.", "vendors", "vendorId", "VEN-004")


@w.define_tool(
    "get_vendor_balance",
    "What we owe a vendor: its live invoices with total, paid, scheduled and outstanding "
    "amounts, and the overdue part.",
    {"vendorId": w.string("The vendor.")},
    ["vendorId"],
)
def get_vendor_balance(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Open invoices and totals for one vendor."""
    vendor = _vendor(state, input)
    rows = [
        {
            "invoiceId": i["id"],
            "status": i["status"],
            "dueDate": i["dueDate"],
            **invoice_figures(state, i),
        }
        for i in w.sorted_by_id(state["vendorInvoices"])
        if i["vendorId"] == vendor["id"] and i["status"] in LIVE_INVOICE
    ]
    return {
        "vendorId": vendor["id"],
        "invoices": [r for r in rows if r["outstanding"] > 0],
        "outstanding": w.sum_money(r["outstanding"] for r in rows),
        "overdue": w.sum_money(r["outstanding"] for r in rows if r["isOverdue"]),
        "scheduled": w.sum_money(r["scheduled"] for r in rows),
    }


def _same_vat(state: State, vat: str, skip: str | None = None) -> Record | None:
    for vendor in w.sorted_by_id(state["vendors"]):
        if vendor["vatNumber"] == vat and vendor["status"] != "merged" and vendor["id"] != skip:
            found: Record = vendor
            return found
    return None


@w.define_tool(
    "create_vendor",
    "Register a vendor; it starts pending_approval with unverified bank details. Refused when "
    "an existing vendor has the same VAT number.",
    {
        "name": w.string("Legal name."),
        "vatNumber": w.string("VAT number."),
        "country": w.string("ISO country code, e.g. NL.", pattern="^[A-Z]{2}$"),
        "email": w.string("Accounts email."),
        "paymentTerms": w.enum("Payment terms.", TERMS),
        "iban": w.string("Bank account (IBAN, no spaces).", pattern=_IBAN),
        "categories": w.array("Product categories supplied.", w.string("A category.")),
        "leadTimeDays": w.integer("Usual lead time in days (default 14).", minimum=0, maximum=365),
        **ACTOR,
    },
    ["name", "vatNumber", "country", "email", "paymentTerms", "iban", "actorId"],
)
def create_vendor(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a vendor pending approval."""
    actor = acting_user(state, input)
    require_permission(state, actor, "purchasing")
    vat = w.read_string(input, "vatNumber").replace(" ", "").upper()
    existing = _same_vat(state, vat)
    if existing is not None:
        raise silo.tool_error(
            "conflict",
            f"Vendor {existing['id']} ({existing['name']}) already has VAT number {vat}.",
            {"vendorId": existing["id"], "vatNumber": vat},
        )
    vendor_id = w.next_id(state, "VEN")
    state["vendors"][vendor_id] = {
        "id": vendor_id,
        "name": w.read_string(input, "name"),
        "vatNumber": vat,
        "country": w.read_string(input, "country"),
        "email": w.read_string(input, "email"),
        "paymentTerms": w.read_enum(input, "paymentTerms", TERMS),
        "iban": w.read_string(input, "iban"),
        "bankStatus": "unverified",
        "categories": w.read_strings(input, "categories", []),
        "leadTimeDays": w.read_int(input, "leadTimeDays", 14, minimum=0, maximum=365),
        "status": "pending_approval",
        "statusReason": "New vendor",
        "mergedIntoId": None,
        "createdAt": w.now(state),
        "createdBy": actor["id"],
    }
    audit_id = w.audit(
        state,
        actor["id"],
        "create_vendor",
        "vendor",
        vendor_id,
        f"Created vendor {state['vendors'][vendor_id]['name']}.",
    )
    return {"created": state["vendors"][vendor_id], "auditId": audit_id}


_EDITABLE = ("name", "email", "paymentTerms", "leadTimeDays", "categories")


@w.define_tool(
    "update_vendor",
    "Change a vendor's name, email, payment terms, lead time or categories (vendor master "
    "roles). Bank details have their own tool.",
    {
        "vendorId": w.string("The vendor."),
        "name": w.string("New legal name."),
        "email": w.string("New accounts email."),
        "paymentTerms": w.enum("New payment terms.", TERMS),
        "leadTimeDays": w.integer("New lead time in days.", minimum=0, maximum=365),
        "categories": w.array("New categories.", w.string("A category.")),
        **ACTOR,
    },
    ["vendorId", "actorId"],
)
def update_vendor(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Update master data fields."""
    actor = _master_user(state, input)
    vendor = _vendor(state, input)
    _not_merged(vendor)
    w.require_some(input, _EDITABLE)
    values = {
        "name": w.read_string(input, "name", None),
        "email": w.read_string(input, "email", None),
        "paymentTerms": w.read_enum(input, "paymentTerms", TERMS, None),
        "leadTimeDays": w.read_int(input, "leadTimeDays", None, minimum=0, maximum=365),
        "categories": w.read_strings(input, "categories", None),
    }
    changes: list[w.Change] = []
    for field, value in values.items():
        if value is not None:
            w.set_field(vendor, field, value, changes)
    if not changes:
        raise silo.tool_error("conflict", f"Vendor {vendor['id']} already has these values.")
    audit_id = w.audit(
        state,
        actor["id"],
        "update_vendor",
        "vendor",
        vendor["id"],
        f"Updated {', '.join(c['field'] for c in changes)}.",
        changes,
    )
    return {"updated": vendor, "changes": changes, "auditId": audit_id}


@w.define_tool(
    "update_vendor_bank_details",
    "Replace a vendor's bank account after a call-back check (treasury roles only); the new "
    "account counts as verified.",
    {
        "vendorId": w.string("The vendor."),
        "iban": w.string("The new IBAN, no spaces.", pattern=_IBAN),
        "reason": w.string("How the change was confirmed."),
        **ACTOR,
    },
    ["vendorId", "iban", "reason", "actorId"],
)
def update_vendor_bank_details(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Set a new verified IBAN."""
    actor = acting_user(state, input)
    require_permission(state, actor, "treasury")
    vendor = _vendor(state, input)
    _not_merged(vendor)
    iban = w.read_string(input, "iban")
    if iban == vendor["iban"] and vendor["bankStatus"] == "verified":
        raise silo.tool_error("conflict", f"Vendor {vendor['id']} already has IBAN {iban}.")
    audit_id = record_change(
        state,
        actor["id"],
        "update_vendor_bank_details",
        "vendor",
        vendor,
        f"Bank details changed: {w.read_string(input, 'reason')}",
        iban=iban,
        bankStatus="verified",
    )
    return {"updated": vendor, "auditId": audit_id}


def _set_status(
    state: State, input: dict[str, Any], action: str, wanted: tuple[str, ...], to: str
) -> dict[str, Any]:
    actor = _master_user(state, input)
    vendor = _vendor(state, input)
    w.require_status(vendor, "vendors", wanted, _ACTIONS[action])
    if to == "active" and vendor["bankStatus"] != "verified":
        raise silo.tool_error(
            "invalid_state",
            f"Vendor {vendor['id']}'s bank details are {vendor['bankStatus']}; verify them "
            "(update_vendor_bank_details) before the vendor can be used.",
            {"bankStatus": vendor["bankStatus"]},
        )
    audit_id = record_change(
        state,
        actor["id"],
        action,
        "vendor",
        vendor,
        f"Vendor {vendor['id']} is now {to}.",
        status=to,
        statusReason=w.read_string(input, "reason", None),
    )
    return {"updated": vendor, "auditId": audit_id}


_ACTIONS = {
    "approve_vendor": "be approved",
    "block_vendor": "be blocked",
    "unblock_vendor": "be unblocked",
}
_STATUS_INPUT = {"vendorId": w.string("The vendor."), "reason": w.string("Why."), **ACTOR}


@w.define_tool(
    "approve_vendor",
    "Approve a pending vendor so orders and payments may use it (vendor master roles; bank "
    "details must be verified).",
    _STATUS_INPUT,
    ["vendorId", "actorId"],
)
def approve_vendor(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """pending_approval -> active."""
    return _set_status(state, input, "approve_vendor", ("pending_approval",), "active")


@w.define_tool(
    "block_vendor",
    "Block a vendor: no new orders, RFQ invitations or payments until unblocked.",
    _STATUS_INPUT,
    ["vendorId", "reason", "actorId"],
)
def block_vendor(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Active or pending_approval -> blocked."""
    return _set_status(state, input, "block_vendor", ("active", "pending_approval"), "blocked")


@w.define_tool(
    "unblock_vendor",
    "Lift a vendor's block.",
    _STATUS_INPUT,
    ["vendorId", "reason", "actorId"],
)
def unblock_vendor(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Blocked -> active."""
    return _set_status(state, input, "unblock_vendor", ("blocked",), "active")


@w.define_tool(
    "find_duplicate_vendors",
    "Groups of vendor records (not merged) that share a VAT number or a bank account: likely "
    "one company registered twice.",
)
def find_duplicate_vendors(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """``{groups: [{sharedField, value, vendorIds}]}``."""
    groups: list[dict[str, Any]] = []
    for field in ("vatNumber", "iban"):
        by_value: dict[str, list[str]] = defaultdict(list)
        for vendor in w.sorted_by_id(state["vendors"]):
            if vendor["status"] != "merged":
                by_value[vendor[field]].append(vendor["id"])
        groups += [
            {"sharedField": field, "value": value, "vendorIds": ids}
            for value, ids in sorted(by_value.items())
            if len(ids) > 1
        ]
    return {"groups": groups}
