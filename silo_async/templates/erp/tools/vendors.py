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

from ..domain.dues import owed_totals
from ..domain.payables import invoice_figures
from ..domain.purchasing import LIVE_INVOICE
from ..state import Record, State
from .common import Reason, actor, change, in_status, named, target, update_fields

__all__ = [
    "approve_vendor",
    "block_vendor",
    "create_vendor",
    "find_duplicate_vendors",
    "get_vendor",
    "get_vendor_balance",
    "list_vendors",
    "require_active_vendor",
    "search_vendors",
    "unblock_vendor",
    "update_vendor",
    "update_vendor_bank_details",
]

STATUSES = ("pending_approval", "active", "blocked", "merged")
TERMS = ("NET_14", "NET_30", "NET_45", "NET_60")
_IBAN = r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{8,30}$"


def require_active_vendor(vendor: Record, aside: str | None, outcome: str) -> None:
    """``not_allowed`` unless ``vendor`` is active: ``Vendor V is blocked (aside); outcome``.

    Orders and payments go to active vendors only; ``aside`` says why the vendor is not (if
    anything is known), ``outcome`` what therefore cannot happen.
    """
    if vendor["status"] != "active":
        raise silo.tool_error(
            "not_allowed",
            f"Vendor {vendor['id']} is {vendor['status']}"
            + (f" ({aside})" if aside else "")
            + f"; {outcome}",
            {"vendorId": vendor["id"], "status": vendor["status"]},
        )


def _not_merged(state: State, vendor: Record) -> None:
    if vendor["status"] == "merged":
        raise silo.tool_error(
            "invalid_state",
            f"Vendor {vendor['id']} was merged into {vendor['mergedIntoId']}; work on "
            f"{vendor['mergedIntoId']} instead.",
            {"status": "merged", "mergedIntoId": vendor["mergedIntoId"]},
        )


#: A vendor that may still change (not merged), as the vendor master tools name it.
_VENDOR = target("vendors", "vendorId", "The vendor.", "vendor")
_LIVE_VENDOR = _VENDOR.guarded(_not_merged)
_NEW_VENDOR = w.Target("vendors", "vendorId", w.schema.string("The vendor."), "vendor")


VENDORS = w.Collection("vendors", "vendorId", "VEN-004")
list_vendors = VENDORS.list_tool(
    "List vendors sorted by id; filter by status or category. Paged.",
    filters={"status": w.schema.enum("Only vendors with this status.", STATUSES)},
    extra={"category": w.schema.string("Only vendors supplying this category, e.g. tents.")},
    where=lambda state, v, input: input.get("category") in (None, *v["categories"]),
)
search_vendors = VENDORS.search_tool(
    "Find vendors whose id, name, VAT number, email or IBAN contains the query. Paged.",
    ["name", "vatNumber", "email", "iban"],
)
get_vendor = VENDORS.get_tool("One vendor.")


class _Vendor(w.Input):
    vendorId = w.fields.string("The vendor.")


@w.define_tool(_Vendor)
def get_vendor_balance(state: State, args: _Vendor) -> dict[str, Any]:
    """What we owe a vendor: its live invoices with total, paid, scheduled and outstanding amounts,
    and the overdue part.
    """
    vendor = named(state, "vendors", args.vendorId)
    rows = [
        {
            "invoiceId": i["id"],
            "status": i["status"],
            "dueDate": i["dueDate"],
            **invoice_figures(state, i),
        }
        for i in w.tools.sorted_by_id(state["vendorInvoices"])
        if i["vendorId"] == vendor["id"] and i["status"] in LIVE_INVOICE
    ]
    return {
        "vendorId": vendor["id"],
        "invoices": [r for r in rows if r["outstanding"] > 0],
        **owed_totals(rows),
        "scheduled": w.amounts.sum_money(r["scheduled"] for r in rows),
    }


def _same_vat(state: State, vat: str, skip: str | None = None) -> Record | None:
    for vendor in w.tools.sorted_by_id(state["vendors"]):
        if vendor["vatNumber"] == vat and vendor["status"] != "merged" and vendor["id"] != skip:
            found: Record = vendor
            return found
    return None


class _NewVendor(w.Input):
    name = w.fields.string("Legal name.")
    vatNumber = w.fields.string("VAT number.")
    country = w.fields.string("ISO country code, e.g. NL.", pattern="^[A-Z]{2}$")
    email = w.fields.string("Accounts email.")
    paymentTerms = w.fields.enum("Payment terms.", TERMS)
    iban = w.fields.string("Bank account (IBAN, no spaces).", pattern=_IBAN)
    categories: w.fields.Field[list[str]] = w.fields.strings(
        "Product categories supplied.", "A category.", default=[]
    )
    leadTimeDays = w.fields.integer(
        "Usual lead time in days (default 14).", minimum=0, maximum=365, default=14
    )


@actor("purchasing").write_tool(_NewVendor)
def create_vendor(call: w.Write[_NewVendor]) -> dict[str, Any]:
    """Register a vendor; it starts pending_approval with unverified bank details. Refused when an
    existing vendor has the same VAT number.
    """
    state, args = call.state, call.args
    vat = args.vatNumber.replace(" ", "").upper()
    existing = _same_vat(state, vat)
    if existing is not None:
        raise silo.tool_error(
            "conflict",
            f"Vendor {existing['id']} ({existing['name']}) already has VAT number {vat}.",
            {"vendorId": existing["id"], "vatNumber": vat},
        )
    vendor: Record = {
        "id": w.records.next_id(state, "VEN"),
        "name": args.name,
        "vatNumber": vat,
        "country": args.country,
        "email": args.email,
        "paymentTerms": args.paymentTerms,
        "iban": args.iban,
        "bankStatus": "unverified",
        "categories": args.categories,
        "leadTimeDays": args.leadTimeDays,
        "status": "pending_approval",
        "statusReason": "New vendor",
        "mergedIntoId": None,
        "createdAt": w.clock.now(state),
        "createdBy": call.actor["id"],
    }
    audit_id = call.add(_NEW_VENDOR, vendor, f"Created vendor {vendor['name']}.")
    return {"created": vendor, "auditId": audit_id}


class _VendorChanges(w.Input):
    name = w.fields.string("New legal name.", default=None)
    email = w.fields.string("New accounts email.", default=None)
    paymentTerms = w.fields.enum("New payment terms.", TERMS, default=None)
    leadTimeDays = w.fields.integer("New lead time in days.", minimum=0, maximum=365, default=None)
    categories = w.fields.strings("New categories.", "A category.", default=None)


@actor("vendorMaster").write_tool(_VendorChanges, target=_LIVE_VENDOR)
def update_vendor(call: w.Write[_VendorChanges]) -> dict[str, Any]:
    """Change a vendor's name, email, payment terms, lead time or categories (vendor master roles).
    Bank details have their own tool.
    """
    args, vendor = call.args, call.record
    w.fields.require_some(args, tuple(w.fields.fields_of(_VendorChanges)))
    values = {
        "name": args.name,
        "email": args.email,
        "paymentTerms": args.paymentTerms,
        "leadTimeDays": args.leadTimeDays,
        "categories": args.categories,
    }
    audit_id = update_fields(call, values, "Vendor")
    return {"updated": vendor, "changes": call.changes, "auditId": audit_id}


class _BankDetails(w.Input):
    iban = w.fields.string("The new IBAN, no spaces.", pattern=_IBAN)
    reason = w.fields.string("How the change was confirmed.")


@actor("treasury").write_tool(_BankDetails, target=_LIVE_VENDOR)
def update_vendor_bank_details(call: w.Write[_BankDetails]) -> dict[str, Any]:
    """Replace a vendor's bank account after a call-back check (treasury roles only); the new
    account counts as verified.
    """
    args, vendor = call.args, call.record
    iban = args.iban
    if iban == vendor["iban"] and vendor["bankStatus"] == "verified":
        raise silo.tool_error("conflict", f"Vendor {vendor['id']} already has IBAN {iban}.")
    audit_id = change(
        call,
        f"Bank details changed: {args.reason}",
        iban=iban,
        bankStatus="verified",
    )
    return {"updated": vendor, "auditId": audit_id}


class _MaybeReason(w.Input):
    reason = w.fields.string("Why.", default=None)


def _set_status(call: w.Write[Reason] | w.Write[_MaybeReason], to: str) -> dict[str, Any]:
    vendor = call.record
    if to == "active" and vendor["bankStatus"] != "verified":
        raise silo.tool_error(
            "invalid_state",
            f"Vendor {vendor['id']}'s bank details are {vendor['bankStatus']}; verify them "
            "(update_vendor_bank_details) before the vendor can be used.",
            {"bankStatus": vendor["bankStatus"]},
        )
    audit_id = change(
        call,
        f"Vendor {vendor['id']} is now {to}.",
        status=to,
        statusReason=call.args.reason,
    )
    return {"updated": vendor, "auditId": audit_id}


_MASTER = actor("vendorMaster")


@_MASTER.write_tool(_MaybeReason, target=in_status(_VENDOR, ("pending_approval",), "be approved"))
def approve_vendor(call: w.Write[_MaybeReason]) -> dict[str, Any]:
    """Approve a pending vendor so orders and payments may use it (vendor master roles; bank details
    must be verified).

    pending_approval -> active.
    """
    return _set_status(call, "active")


@_MASTER.write_tool(Reason, target=in_status(_VENDOR, ("active", "pending_approval"), "be blocked"))
def block_vendor(call: w.Write[Reason]) -> dict[str, Any]:
    """Block a vendor: no new orders, RFQ invitations or payments until unblocked.

    Active or pending_approval -> blocked.
    """
    return _set_status(call, "blocked")


@_MASTER.write_tool(Reason, target=in_status(_VENDOR, ("blocked",), "be unblocked"))
def unblock_vendor(call: w.Write[Reason]) -> dict[str, Any]:
    """Lift a vendor's block.

    Blocked -> active.
    """
    return _set_status(call, "active")


@w.define_tool()
def find_duplicate_vendors(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Groups of vendor records (not merged) that share a VAT number or a bank account: likely one
    company registered twice.

    ``{groups: [{sharedField, value, vendorIds}]}``.
    """
    groups: list[dict[str, Any]] = []
    for field in ("vatNumber", "iban"):
        by_value: dict[str, list[str]] = defaultdict(list)
        for vendor in w.tools.sorted_by_id(state["vendors"]):
            if vendor["status"] != "merged":
                by_value[vendor[field]].append(vendor["id"])
        groups += [
            {"sharedField": field, "value": value, "vendorIds": ids}
            for value, ids in sorted(by_value.items())
            if len(ids) > 1
        ]
    return {"groups": groups}
