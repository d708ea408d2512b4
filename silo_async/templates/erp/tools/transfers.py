"""Transfers between warehouses: shipped at once (in transit), received at the destination."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain.stock import stock_view
from ..state import Record
from .common import Reason, actor, change, changed, in_status, named, target
from .stock_ops import move_stock, require_available, require_stock, stock_line

__all__ = [
    "cancel_transfer",
    "create_transfer",
    "get_transfer",
    "list_transfers",
    "receive_transfer",
]

STATUSES = ("in_transit", "received", "cancelled")

TRANSFERS = w.Collection("transfers", "transferId", "TRF-001")
list_transfers = TRANSFERS.list_tool(
    "List stock transfers sorted by id; filter by status, product, source or destination. Paged.",
    filters={
        "status": w.schema.enum("Only transfers with this status.", STATUSES),
        "productId": w.schema.string("Only this product."),
        "fromWarehouseId": w.schema.string("Only from this warehouse."),
        "toWarehouseId": w.schema.string("Only to this warehouse."),
    },
    references={
        "productId": "products",
        "fromWarehouseId": "warehouses",
        "toWarehouseId": "warehouses",
    },
)
get_transfer = TRANSFERS.get_tool("One transfer.")


_TRANSFER = target("transfers", "transferId", "The transfer.", "transfer")


class _Transfer(w.Input):
    productId = w.fields.string("The product.")
    fromWarehouseId = w.fields.string("Source warehouse.")
    toWarehouseId = w.fields.string("Destination warehouse.")
    quantity = w.fields.integer("Units to move.", minimum=1, bounds=(1, 10_000_000))
    reason = w.fields.string("Why.")


@actor("warehouse").write_tool(_Transfer)
def create_transfer(call: w.Write[_Transfer]) -> dict[str, Any]:
    """Move available (unreserved) stock to another warehouse: it leaves the source now and is in
    transit (counted as inbound at the destination) until receive_transfer. Warehouse roles.
    """
    state, args, actor = call.state, call.args, call.actor
    product_id = args.productId
    source = require_stock(state, product_id, args.fromWarehouseId)
    destination = named(state, "warehouses", args.toWarehouseId)
    if destination["id"] == source["warehouseId"]:
        raise silo.tool_error("invalid_input", "Source and destination are the same warehouse.")
    if state["products"][product_id]["status"] != "active":
        raise silo.tool_error("not_allowed", f"Product {product_id} is discontinued.")
    quantity = args.quantity
    require_available(state, source, quantity, f"cannot move {quantity}")
    transfer_id = w.records.next_id(state, "TRF")
    move_stock(state, source, -quantity, "transfer_out", ("transfer", transfer_id), actor["id"])
    transfer: Record = {
        "id": transfer_id,
        "productId": product_id,
        "fromWarehouseId": source["warehouseId"],
        "toWarehouseId": destination["id"],
        "quantity": quantity,
        "status": "in_transit",
        "reason": args.reason,
        "createdBy": actor["id"],
        "shippedAt": w.clock.now(state),
        "receivedAt": None,
        "receivedBy": None,
    }
    detail = f"{quantity} of {product_id} from {source['warehouseId']} to {destination['id']}."
    audit_id = call.add(_TRANSFER, transfer, detail)
    return {"created": transfer, "auditId": audit_id}


def _book_in(call: w.Write, warehouse_id: str, kind: str, reason: str | None = None) -> Record:
    """Put the transfer's units into the warehouse's stock line (created if new); that line."""
    transfer = call.record
    line = stock_line(call.state, transfer["productId"], warehouse_id)
    move_stock(
        call.state,
        line,
        transfer["quantity"],
        kind,
        ("transfer", transfer["id"]),
        call.actor["id"],
        reason,
    )
    return line


@actor("warehouse").write_tool(target=in_status(_TRANSFER, ("in_transit",), "be received"))
def receive_transfer(call: w.Write) -> dict[str, Any]:
    """Book an in-transit transfer into its destination warehouse (warehouse roles).

    In transit -> received; stock arrives.
    """
    state, actor, transfer = call.state, call.actor, call.record
    line = _book_in(call, transfer["toWarehouseId"], "transfer_in")
    audit_id = change(
        call,
        f"Received at {transfer['toWarehouseId']}.",
        status="received",
        receivedAt=w.clock.now(state),
        receivedBy=actor["id"],
    )
    return {"updated": transfer, "stock": stock_view(state, line), "auditId": audit_id}


@actor("warehouse").write_tool(Reason, target=in_status(_TRANSFER, ("in_transit",), "be cancelled"))
def cancel_transfer(call: w.Write[Reason]) -> dict[str, Any]:
    """Cancel an in-transit transfer: the stock goes back to the source warehouse.

    in_transit -> cancelled; stock returns.
    """
    transfer, reason = call.record, call.args.reason
    _book_in(call, transfer["fromWarehouseId"], "return", reason)
    return changed(call, None, reason, status="cancelled")
