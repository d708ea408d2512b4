"""Products: the catalogue, prices, and where each product is and comes from."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.stock import stock_view
from ..state import Record, State
from .common import Reason, actor, changed, in_status, named, target, update_fields

__all__ = [
    "create_product",
    "discontinue_product",
    "get_product",
    "get_product_availability",
    "get_product_purchase_history",
    "list_products",
    "search_products",
    "update_product",
]

STATUSES = ("active", "discontinued")
UOMS = ("each", "case", "box", "metre")


PRODUCTS = w.Collection("products", "productId", "PRD-001")
list_products = PRODUCTS.list_tool(
    "List products sorted by id with SKU, standard cost, list price and preferred vendor; "
    "filter by category, status or preferred vendor. Paged.",
    filters={
        "category": w.schema.string("Only this category, e.g. tents."),
        "status": w.schema.enum("Only products with this status.", STATUSES),
        "preferredVendorId": w.schema.string("Only products this vendor is preferred for."),
    },
    references={"preferredVendorId": "vendors"},
)
search_products = PRODUCTS.search_tool(
    "Find products whose id, SKU or name contains the query. Paged.", ["sku", "name"]
)
get_product = PRODUCTS.get_tool("One product.")


class _Product(w.Input):
    productId = w.fields.string("The product.")


@w.define_tool(_Product)
def get_product_availability(state: State, args: _Product) -> dict[str, Any]:
    """A product's stock in every warehouse: on hand, reserved, available (on hand - reserved),
    inbound (sent purchase orders still due + transfers in transit), projected (available +
    inbound), reorder point and quantity, and totals.
    """
    product = named(state, "products", args.productId)
    rows = [
        stock_view(state, r)
        for r in w.tools.sorted_by_id(state["stock"])
        if r["productId"] == product["id"]
    ]
    return {
        "productId": product["id"],
        "sku": product["sku"],
        "warehouses": rows,
        "totals": {
            key: sum(r[key] for r in rows)
            for key in ("onHand", "reserved", "available", "inbound", "projected")
        },
    }


@w.define_tool(_Product)
def get_product_purchase_history(state: State, args: _Product) -> dict[str, Any]:
    """Every purchase order line for a product: vendor, order date, quantity and unit price, oldest
    first.
    """
    product = named(state, "products", args.productId)
    rows = [
        {
            "purchaseOrderId": po["id"],
            "vendorId": po["vendorId"],
            "orderDate": po["orderDate"],
            "status": po["status"],
            "quantity": ln["quantity"],
            "unitPrice": ln["unitPrice"],
        }
        for po in sorted(state["purchaseOrders"].values(), key=lambda p: (p["orderDate"], p["id"]))
        for ln in po["lines"]
        if ln["productId"] == product["id"]
    ]
    return {"productId": product["id"], "lines": rows}


_PURCHASING = actor("purchasing")
_PRODUCT = target("products", "productId", "The product.", "product")


class _NewProduct(w.Input):
    sku = w.fields.string("Stock-keeping unit, e.g. FEN-TNT-3P.")
    name = w.fields.string("Name.")
    category = w.fields.string("Category, e.g. tents.")
    uom = w.fields.enum("Unit of measure.", UOMS)
    standardCost = w.fields.money("Standard cost per unit.")
    listPrice = w.fields.money("List price per unit.")
    preferredVendorId = w.fields.string("Preferred vendor (active).")


@_PURCHASING.write_tool(_NewProduct)
def create_product(call: w.Write[_NewProduct]) -> dict[str, Any]:
    """Add an active product to the catalogue (purchasing roles). SKUs are unique."""
    state, args = call.state, call.args
    sku = args.sku.upper()
    clash = w.grade.find_by(state, "products", "sku", sku)
    if clash is not None:
        raise silo.tool_error("conflict", f"Product {clash['id']} already has SKU {sku}.")
    vendor = named(state, "vendors", args.preferredVendorId)
    w.records.require_status(vendor, "vendors", ("active",), "be a preferred vendor")
    product: Record = {
        "id": w.records.next_id(state, "PRD"),
        "sku": sku,
        "name": args.name,
        "category": args.category,
        "uom": args.uom,
        "standardCost": args.standardCost,
        "listPrice": args.listPrice,
        "preferredVendorId": vendor["id"],
        "status": "active",
    }
    audit_id = call.add(_PRODUCT, product, f"Created {sku}.")
    return {"created": product, "auditId": audit_id}


class _ProductChanges(w.Input):
    name = w.fields.string("New name.", default=None)
    standardCost = w.fields.money("New standard cost.", default=None)
    listPrice = w.fields.money("New list price.", default=None)
    preferredVendorId = w.fields.string("New preferred vendor (active).", default=None)


@_PURCHASING.write_tool(_ProductChanges, target=_PRODUCT)
def update_product(call: w.Write[_ProductChanges]) -> dict[str, Any]:
    """Change a product's name, standard cost, list price or preferred vendor (purchasing roles)."""
    state, args = call.state, call.args
    w.fields.require_some(args, list(w.fields.fields_of(_ProductChanges)))
    vendor_id = args.preferredVendorId
    if vendor_id is not None:
        vendor = w.records.require_record(state, "vendors", vendor_id)
        w.records.require_status(vendor, "vendors", ("active",), "be a preferred vendor")
    values = {
        "name": args.name,
        "standardCost": args.standardCost,
        "listPrice": args.listPrice,
        "preferredVendorId": vendor_id,
    }
    audit_id = update_fields(call, values, "Product")
    return {"updated": call.record, "auditId": audit_id}


@_PURCHASING.write_tool(Reason, target=in_status(_PRODUCT, ("active",), "be discontinued"))
def discontinue_product(call: w.Write[Reason]) -> dict[str, Any]:
    """Discontinue a product: it can no longer be ordered, sold or reordered; stock on hand stays.

    Active -> discontinued.
    """
    return changed(call, None, call.args.reason, status="discontinued")
