"""Purchase orders: raising them, editing drafts, and the read tools.

Orders are raised directly, from an approved requisition or from an accepted quotation.

A purchase order is ``draft`` -> ``pending_approval`` -> ``approved`` -> ``sent`` -> ``closed``
(or ``rejected`` / ``cancelled``). While sent, its progress shows as ``partially_received`` or
``received`` from its goods receipts. Only active vendors and active products can be ordered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import purchasing as pur
from ..state import Record, State, gross, vat_of
from .common import actor, in_status, named, target
from .lines import LineItem, line_tools, read_lines
from .vendors import require_active_vendor

__all__ = [
    "add_purchase_order_line",
    "create_purchase_order",
    "create_purchase_order_from_quotation",
    "get_purchase_order",
    "list_late_purchase_orders",
    "list_open_purchase_order_lines",
    "list_purchase_orders",
    "po_view",
    "remove_purchase_order_line",
    "search_purchase_orders",
    "update_purchase_order_line",
]

STATUSES = ("draft", "pending_approval", "approved", "rejected", "sent", "closed", "cancelled")


def po_view(state: State, po: Any) -> dict[str, Any]:
    """An order with per-line received / rejected / invoiced / remaining and its totals."""
    net = pur.po_net(po)
    lines = [
        {
            **ln,
            "lineTotal": w.amounts.multiply_money(ln["quantity"], ln["unitPrice"]),
            "received": pur.received_quantity(state, po["id"], ln["lineNo"]),
            "rejected": pur.rejected_quantity(state, po["id"], ln["lineNo"]),
            "invoiced": pur.invoiced_quantity(state, po["id"], ln["lineNo"]),
            "remaining": pur.line_remaining(state, po, ln),
        }
        for ln in po["lines"]
    ]
    return {
        **po,
        "lines": lines,
        "vendorName": state["vendors"][po["vendorId"]]["name"],
        "net": net,
        "vat": vat_of(state, net),
        "total": gross(state, net),
        "progress": pur.display_status(state, po),
        "receiptStatus": pur.receipt_status(state, po),
        "isLate": pur.is_late(state, po),
        **pur.approval_fields(state, po["id"]),
    }


PURCHASE_ORDERS = w.Collection("purchaseOrders", "purchaseOrderId", "PO-1007", view=po_view)
list_purchase_orders = PURCHASE_ORDERS.list_tool(
    "List purchase orders sorted by id with totals and receipt progress; filter by status, "
    "vendor, warehouse or budget. Paged.",
    filters={
        "status": w.schema.enum("Only orders with this stored status.", STATUSES),
        "vendorId": w.schema.string("Only this vendor's orders."),
        "warehouseId": w.schema.string("Only orders delivering to this warehouse."),
        "budgetId": w.schema.string("Only orders charged to this budget."),
    },
    references={"vendorId": "vendors", "warehouseId": "warehouses", "budgetId": "budgets"},
)
search_purchase_orders = PURCHASE_ORDERS.search_tool(
    "Find purchase orders whose id, vendor name or requisition id contains the query. Paged.",
    lambda state, po: [state["vendors"][po["vendorId"]]["name"], po["requisitionId"]],
)
get_purchase_order = PURCHASE_ORDERS.get_tool("One purchase order.")


def _last_price(state: State, context: Mapping[str, Any], product: Record) -> float:
    """The latest price paid to this vendor for the product, else its standard cost."""
    vendor_id = context.get("vendorId")
    orders = sorted(
        (po for po in state["purchaseOrders"].values() if po["vendorId"] == vendor_id),
        key=lambda po: (po["orderDate"], po["id"]),
    )
    price: float = product["standardCost"]
    for po in orders:
        for line in po["lines"]:
            if line["productId"] == product["id"]:
                price = line["unitPrice"]
    return price


def _orderable_vendor(state: State, vendor_id: str) -> Record:
    vendor: Record = w.records.require_record(state, "vendors", vendor_id)
    require_active_vendor(vendor, vendor["statusReason"], "orders can only go to active vendors.")
    return vendor


def _requisition(state: State, requisition_id: str | None) -> Record | None:
    if requisition_id is None:
        return None
    requisition: Record = w.records.require_record(state, "requisitions", requisition_id)
    w.records.require_status(requisition, "requisitions", ("approved",), "be ordered")
    return requisition


_PURCHASE_ORDER = target("purchaseOrders", "purchaseOrderId", "The order.", "purchaseOrder")
_QUOTATION = target("quotations", "quotationId", "An accepted quotation.", "quotation")


#: Where an order goes and what it is charged to, as both ways of raising one declare it.
_WAREHOUSE = w.fields.string("Warehouse the goods are delivered to.")
_BUDGET = w.fields.string("Budget charged (default: the requisition's).", default=None)
_EXPECTED = w.fields.date(
    "Expected delivery (default: today + the vendor's lead time)", default=None
)


class _FromQuotation(w.Input):
    warehouseId = _WAREHOUSE
    budgetId = _BUDGET
    expectedDate = _EXPECTED


class _NewOrder(w.Input):
    vendorId = w.fields.string("The vendor.")
    warehouseId = _WAREHOUSE
    budgetId = _BUDGET
    expectedDate = _EXPECTED
    requisitionId = w.fields.string("An approved requisition this order fulfils.", default=None)
    lines = w.fields.objects("What to order.", LineItem)


def _new_po(
    call: w.Write[_NewOrder] | w.Write[_FromQuotation],
    vendor: Record,
    warehouse: Record,
    lines: list[Any],
    quotation: Record | None = None,
) -> dict[str, Any]:
    """A draft order to ``vendor`` of ``lines``, from ``quotation`` when given.

    The budget and expected date are the input's (defaults: the requisition's budget, today
    plus the vendor's lead time); the requisition is the quotation's RFQ's, else the input's.
    """
    state, args = call.state, call.args
    budget_id = args.budgetId
    if isinstance(args, _NewOrder):
        requisition_id = args.requisitionId
    else:
        assert quotation is not None  # an order from a quotation
        requisition_id = state["rfqs"][quotation["rfqId"]]["requisitionId"]
    expected = args.expectedDate
    requisition = _requisition(state, requisition_id)
    budget_id = budget_id or (requisition or {}).get("budgetId")
    if budget_id is None:
        raise silo.tool_error("invalid_input", '"budgetId" is required without a requisition.')
    w.records.require_status(
        w.records.require_record(state, "budgets", budget_id), "budgets", ("open",), "be charged"
    )
    po_id = w.records.next_id(state, "PO", width=4)
    if requisition is not None:
        requisition.update(status="ordered", purchaseOrderId=po_id)
    po: Record = {
        "id": po_id,
        "vendorId": vendor["id"],
        "warehouseId": warehouse["id"],
        "budgetId": budget_id,
        "requisitionId": requisition_id,
        "quotationId": None if quotation is None else quotation["id"],
        "status": "draft",
        "lines": lines,
        "orderDate": w.clock.today(state),
        "expectedDate": expected or w.clock.add_days(w.clock.today(state), vendor["leadTimeDays"]),
        "createdBy": call.actor["id"],
        "sentAt": None,
        "closedAt": None,
        "cancelReason": None,
    }
    audit_id = call.add(_PURCHASE_ORDER, po, f"Draft order to {vendor['id']}.")
    return {"created": po_view(state, po), "auditId": audit_id}


_PURCHASING = actor("purchasing")


@_PURCHASING.write_tool(_NewOrder)
def create_purchase_order(call: w.Write[_NewOrder]) -> dict[str, Any]:
    """Raise a draft purchase order to an active vendor. Unit prices default to the latest price
    paid to that vendor, else the standard cost. Linking an approved requisition marks it
    ordered. Purchasing roles.
    """
    state, args = call.state, call.args
    vendor = _orderable_vendor(state, args.vendorId)
    warehouse = named(state, "warehouses", args.warehouseId)
    lines = read_lines(state, args.lines, "unitPrice", _last_price, {"vendorId": vendor["id"]})
    return _new_po(call, vendor, warehouse, lines)


@_PURCHASING.write_tool(
    _FromQuotation, target=in_status(_QUOTATION, ("accepted",), "be ordered from")
)
def create_purchase_order_from_quotation(call: w.Write[_FromQuotation]) -> dict[str, Any]:
    """Raise a draft purchase order from an accepted quotation: its vendor, lines and prices, linked
    to the RFQ's requisition (which becomes ordered) and charged to its budget.
    """
    state, args, quotation = call.state, call.args, call.record
    taken = [
        po["id"]
        for po in state["purchaseOrders"].values()
        if po["quotationId"] == quotation["id"] and po["status"] != "cancelled"
    ]
    if taken:
        raise silo.tool_error("conflict", f"{quotation['id']} is already ordered on {taken[0]}.")
    vendor = _orderable_vendor(state, quotation["vendorId"])
    warehouse = named(state, "warehouses", args.warehouseId)
    lines = [
        {
            "lineNo": ln["lineNo"],
            "productId": ln["productId"],
            "quantity": ln["quantity"],
            "unitPrice": ln["unitPrice"],
        }
        for ln in quotation["lines"]
    ]
    return _new_po(call, vendor, warehouse, lines, quotation)


add_purchase_order_line, update_purchase_order_line, remove_purchase_order_line = line_tools(
    "purchase_order", "purchaseOrders", "purchaseOrderId", "unitPrice", _last_price, "purchasing"
)


class _OpenLineFilters(w.Input):
    vendorId = w.fields.string("Only this vendor.", default=None, raw=True)
    warehouseId = w.fields.string("Only this warehouse.", default=None, raw=True)
    productId = w.fields.string("Only this product.", default=None, raw=True)


@w.define_tool(_OpenLineFilters)
def list_open_purchase_order_lines(state: State, args: _OpenLineFilters) -> dict[str, Any]:
    """Lines of sent purchase orders still to be delivered, with the remaining quantity; filter by
    vendor, warehouse or product.
    """
    w.records.check_references(
        state, args, {"vendorId": "vendors", "warehouseId": "warehouses", "productId": "products"}
    )
    rows = [
        {
            "purchaseOrderId": po["id"],
            "vendorId": po["vendorId"],
            "warehouseId": po["warehouseId"],
            "expectedDate": po["expectedDate"],
            "lineNo": ln["lineNo"],
            "productId": ln["productId"],
            "ordered": ln["quantity"],
            "remaining": pur.line_remaining(state, po, ln),
        }
        for po in w.tools.sorted_by_id(state["purchaseOrders"])
        if po["status"] == "sent"
        for ln in po["lines"]
        if args.vendorId in (None, po["vendorId"])
        and args.warehouseId in (None, po["warehouseId"])
        and args.productId in (None, ln["productId"])
    ]
    return {"results": [r for r in rows if r["remaining"] > 0]}


@w.define_tool()
def list_late_purchase_orders(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Sent purchase orders not fully received whose expected date has passed."""
    rows = [
        po_view(state, po)
        for po in w.tools.sorted_by_id(state["purchaseOrders"])
        if pur.is_late(state, po)
    ]
    return {"results": rows, "count": len(rows)}
