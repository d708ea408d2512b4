"""Products: the catalogue, prices, and where each product is and comes from."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.stock import stock_view
from ..state import Record, State
from .common import ACTOR, acting_user, record_change, require_permission

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


def _product(state: State, input: dict[str, Any]) -> Record:
    product: Record = w.require_record(state, "products", w.read_string(input, "productId"))
    return product


list_products = w.list_tool(
    "list_products",
    "List products sorted by id with SKU, standard cost, list price and preferred vendor; "
    "filter by category, status or preferred vendor. Paged.",
    "products",
    filters={
        "category": w.string("Only this category, e.g. tents."),
        "status": w.enum("Only products with this status.", STATUSES),
        "preferredVendorId": w.string("Only products this vendor is preferred for."),
    },
    references={"preferredVendorId": "vendors"},
)
search_products = w.search_tool(
    "search_products",
    "Find products whose id, SKU or name contains the query. Paged.",
    "products",
    ["sku", "name"],
)
get_product = w.get_tool("get_product", "One product.", "products", "productId", "PRD-001")


@w.define_tool(
    "get_product_availability",
    "A product's stock in every warehouse: on hand, reserved, available (on hand - reserved), "
    "inbound (sent purchase orders still due + transfers in transit), projected (available + "
    "inbound), reorder point and quantity, and totals.",
    {"productId": w.string("The product.")},
    ["productId"],
)
def get_product_availability(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Stock per warehouse."""
    product = _product(state, input)
    rows = [
        stock_view(state, r)
        for r in w.sorted_by_id(state["stock"])
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


@w.define_tool(
    "get_product_purchase_history",
    "Every purchase order line for a product: vendor, order date, quantity and unit price, "
    "oldest first.",
    {"productId": w.string("The product.")},
    ["productId"],
)
def get_product_purchase_history(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """PO lines of one product."""
    product = _product(state, input)
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


@w.define_tool(
    "create_product",
    "Add an active product to the catalogue (purchasing roles). SKUs are unique.",
    {
        "sku": w.string("Stock-keeping unit, e.g. FEN-TNT-3P."),
        "name": w.string("Name."),
        "category": w.string("Category, e.g. tents."),
        "uom": w.enum("Unit of measure.", UOMS),
        "standardCost": w.money("Standard cost per unit."),
        "listPrice": w.money("List price per unit."),
        "preferredVendorId": w.string("Preferred vendor (active)."),
        **ACTOR,
    },
    ["sku", "name", "category", "uom", "standardCost", "listPrice", "preferredVendorId", "actorId"],
)
def create_product(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Create a product."""
    actor = acting_user(state, input)
    require_permission(state, actor, "purchasing")
    sku = w.read_string(input, "sku").upper()
    clash = w.find_by(state, "products", "sku", sku)
    if clash is not None:
        raise silo.tool_error("conflict", f"Product {clash['id']} already has SKU {sku}.")
    vendor = w.require_record(state, "vendors", w.read_string(input, "preferredVendorId"))
    w.require_status(vendor, "vendors", ("active",), "be a preferred vendor")
    product_id = w.next_id(state, "PRD")
    state["products"][product_id] = {
        "id": product_id,
        "sku": sku,
        "name": w.read_string(input, "name"),
        "category": w.read_string(input, "category"),
        "uom": w.read_enum(input, "uom", UOMS),
        "standardCost": w.read_money(input, "standardCost"),
        "listPrice": w.read_money(input, "listPrice"),
        "preferredVendorId": vendor["id"],
        "status": "active",
    }
    audit_id = w.audit(
        state, actor["id"], "create_product", "product", product_id, f"Created {sku}."
    )
    return {"created": state["products"][product_id], "auditId": audit_id}


@w.define_tool(
    "update_product",
    "Change a product's name, standard cost, list price or preferred vendor (purchasing roles).",
    {
        "productId": w.string("The product."),
        "name": w.string("New name."),
        "standardCost": w.money("New standard cost."),
        "listPrice": w.money("New list price."),
        "preferredVendorId": w.string("New preferred vendor (active)."),
        **ACTOR,
    },
    ["productId", "actorId"],
)
def update_product(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Update catalogue fields."""
    actor = acting_user(state, input)
    require_permission(state, actor, "purchasing")
    product = _product(state, input)
    w.require_some(input, ["name", "standardCost", "listPrice", "preferredVendorId"])
    vendor_id = w.read_string(input, "preferredVendorId", None)
    if vendor_id is not None:
        vendor = w.require_record(state, "vendors", vendor_id)
        w.require_status(vendor, "vendors", ("active",), "be a preferred vendor")
    changes: list[w.Change] = []
    for field, value in {
        "name": w.read_string(input, "name", None),
        "standardCost": w.read_money(input, "standardCost", None),
        "listPrice": w.read_money(input, "listPrice", None),
        "preferredVendorId": vendor_id,
    }.items():
        if value is not None:
            w.set_field(product, field, value, changes)
    if not changes:
        raise silo.tool_error("conflict", f"Product {product['id']} already has these values.")
    audit_id = w.audit(
        state,
        actor["id"],
        "update_product",
        "product",
        product["id"],
        f"Updated {', '.join(c['field'] for c in changes)}.",
        changes,
    )
    return {"updated": product, "auditId": audit_id}


@w.define_tool(
    "discontinue_product",
    "Discontinue a product: it can no longer be ordered, sold or reordered; stock on hand stays.",
    {"productId": w.string("The product."), "reason": w.string("Why."), **ACTOR},
    ["productId", "reason", "actorId"],
)
def discontinue_product(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Active -> discontinued."""
    actor = acting_user(state, input)
    require_permission(state, actor, "purchasing")
    product = _product(state, input)
    w.require_status(product, "products", ("active",), "be discontinued")
    audit_id = record_change(
        state,
        actor["id"],
        "discontinue_product",
        "product",
        product,
        w.read_string(input, "reason"),
        status="discontinued",
    )
    return {"updated": product, "auditId": audit_id}
