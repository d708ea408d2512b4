"""Receiving: goods receipts against sent purchase orders, and reversing a wrong one.

Accepted units go into stock at the order's warehouse; rejected units (damaged, wrong) are
recorded but stay owed by the vendor. A line may not receive more than it still has due.
"""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..domain import purchasing as pur
from ..state import Record, State, find_line
from .common import Reason, actor, changed, in_status, target
from .stock_ops import move_stock, stock_line

__all__ = [
    "get_goods_receipt",
    "list_goods_receipts",
    "list_pending_deliveries",
    "receive_goods",
    "reverse_goods_receipt",
]

GOODS_RECEIPTS = w.Collection("goodsReceipts", "goodsReceiptId", "GRN-1006")
list_goods_receipts = GOODS_RECEIPTS.list_tool(
    "List goods receipts sorted by id; filter by purchase order, warehouse or status. Paged.",
    filters={
        "purchaseOrderId": w.schema.string("Only receipts for this order."),
        "warehouseId": w.schema.string("Only receipts at this warehouse."),
        "status": w.schema.enum("Only receipts with this status.", ("posted", "reversed")),
    },
    references={"purchaseOrderId": "purchaseOrders", "warehouseId": "warehouses"},
)
get_goods_receipt = GOODS_RECEIPTS.get_tool("One goods receipt.")


@w.define_tool({"warehouseId": w.schema.string("Only deliveries to this warehouse.")})
def list_pending_deliveries(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Sent purchase orders still expecting goods, with what is due per line and whether they are
    late; optionally for one warehouse.
    """
    w.records.check_references(state, input, {"warehouseId": "warehouses"})
    rows = []
    for po in w.tools.sorted_by_id(state["purchaseOrders"]):
        if po["status"] != "sent" or input.get("warehouseId") not in (None, po["warehouseId"]):
            continue
        due = [
            {
                "lineNo": ln["lineNo"],
                "productId": ln["productId"],
                "remaining": pur.line_remaining(state, po, ln),
            }
            for ln in po["lines"]
        ]
        if any(d["remaining"] for d in due):
            rows.append(
                {
                    "purchaseOrderId": po["id"],
                    "vendorId": po["vendorId"],
                    "warehouseId": po["warehouseId"],
                    "expectedDate": po["expectedDate"],
                    "isLate": pur.is_late(state, po),
                    "lines": due,
                }
            )
    return {"results": rows, "count": len(rows)}


#: The most units one receipt line may hold (read, not stated in the schema).
_MAX_UNITS = 10_000_000


class _ReceivedLine(w.Input):
    lineNo = w.fields.integer("The order line.", minimum=1)
    accepted = w.fields.integer("Units accepted into stock.", minimum=0, bounds=(0, _MAX_UNITS))
    rejected = w.fields.integer(
        "Units refused (damaged, wrong).", minimum=0, bounds=(0, _MAX_UNITS), default=0
    )
    note = w.fields.string("What was wrong.", default=None)


class _Receipt(w.Input):
    deliveryNote = w.fields.string("The vendor's delivery note number.")
    lines = w.fields.objects("What arrived, per order line.", _ReceivedLine, default=None)


def _receipt_lines(state: State, po: Record, args: _Receipt) -> list[dict[str, Any]]:
    given = args.lines
    if given is None:
        return [
            {
                "lineNo": ln["lineNo"],
                "accepted": pur.line_remaining(state, po, ln),
                "rejected": 0,
                "note": None,
            }
            for ln in po["lines"]
            if pur.line_remaining(state, po, ln)
        ]
    out = []
    for index, item in enumerate(given):
        path = f"lines[{index}]"
        line = find_line(po, item.lineNo)
        if line is None:
            number = w.fields.input_of(item)["lineNo"]  # as the agent wrote it
            raise silo.tool_error(
                "not_found",
                f"{po['id']} has no line {number} (lines: "
                f"{', '.join(str(ln['lineNo']) for ln in po['lines'])}).",
            )
        accepted, rejected = item.accepted, item.rejected
        due = pur.line_remaining(state, po, line)
        if accepted > due:
            raise w.fields.invalid(
                f"{path}.accepted",
                f"must be at most {due} (still due on line {line['lineNo']})",
                accepted,
            )
        if accepted + rejected == 0:
            raise w.fields.invalid(f"{path}.accepted", "and rejected must not both be 0", accepted)
        out.append(
            {
                "lineNo": line["lineNo"],
                "accepted": accepted,
                "rejected": rejected,
                "note": item.note,
            }
        )
    return out


_WAREHOUSE = actor("warehouse")
_RECEIPT = target("goodsReceipts", "goodsReceiptId", "The receipt.", "goodsReceipt")
_ORDER = target("purchaseOrders", "purchaseOrderId", "The order.", "purchaseOrder")


@_WAREHOUSE.write_tool(_Receipt, target=in_status(_ORDER, ("sent",), "receive goods"))
def receive_goods(call: w.Write[_Receipt]) -> dict[str, Any]:
    """Post a goods receipt for a sent purchase order (warehouse roles): accepted units enter stock,
    rejected units are recorded and stay owed. Without lines, everything still due is received in
    full.
    """
    state, args, actor, po = call.state, call.args, call.actor, call.record
    lines = _receipt_lines(state, po, args)
    if not lines:
        raise silo.tool_error("invalid_state", f"Nothing is still due on {po['id']}.")
    grn_id = w.records.next_id(state, "GRN", width=4)
    for line in lines:
        if line["accepted"]:
            product = find_line(po, line["lineNo"])["productId"]  # type: ignore[index]
            move_stock(
                state,
                stock_line(state, product, po["warehouseId"]),
                line["accepted"],
                "receipt",
                ("goods_receipt", grn_id),
                actor["id"],
            )
    receipt: Record = {
        "id": grn_id,
        "purchaseOrderId": po["id"],
        "warehouseId": po["warehouseId"],
        "receivedAt": w.clock.now(state),
        "receivedBy": actor["id"],
        "deliveryNote": args.deliveryNote,
        "status": "posted",
        "lines": lines,
    }
    audit_id = call.add(_RECEIPT, receipt, f"Received on {po['id']}.")
    return {
        "created": receipt,
        "progress": pur.display_status(state, po),
        "auditId": audit_id,
    }


@_WAREHOUSE.write_tool(Reason, target=in_status(_RECEIPT, ("posted",), "be reversed"))
def reverse_goods_receipt(call: w.Write[Reason]) -> dict[str, Any]:
    """Reverse a posted goods receipt booked in error: its accepted units leave stock again. Refused
    when the units are no longer there or are already invoiced.

    Posted -> reversed.
    """
    state, actor, grn = call.state, call.actor, call.record
    po = state["purchaseOrders"][grn["purchaseOrderId"]]
    for line in grn["lines"]:
        after = pur.received_quantity(state, po["id"], line["lineNo"]) - line["accepted"]
        if pur.invoiced_quantity(state, po["id"], line["lineNo"]) > after:
            raise silo.tool_error(
                "invalid_state",
                f"Line {line['lineNo']} of {po['id']} is invoiced beyond what would remain "
                "received; deal with the invoice first.",
            )
    for line in grn["lines"]:
        if line["accepted"]:
            product = find_line(po, line["lineNo"])["productId"]  # type: ignore[index]
            move_stock(
                state,
                stock_line(state, product, grn["warehouseId"]),
                -line["accepted"],
                "return",
                ("goods_receipt", grn["id"]),
                actor["id"],
                call.args.reason,
            )
    return changed(call, None, call.args.reason, status="reversed")
