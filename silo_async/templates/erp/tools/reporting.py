"""Reports: read-only, recomputed from the facts and the simulated clock on every call."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from silo_async import world as w

from ..domain import payables as pay
from ..domain import sales as sal
from ..domain.dues import Bucket, ageing
from ..domain.purchasing import LIVE_INVOICE
from ..state import State, find_line

__all__ = [
    "get_ap_aging",
    "get_cash_forecast",
    "get_gross_margin",
    "get_inventory_valuation",
    "get_procurement_spend",
    "get_sales_summary",
]

_AP_BUCKETS: tuple[Bucket, ...] = (
    ("current", 0, 0),
    ("1-30", 1, 30),
    ("31-60", 31, 60),
    ("60+", 61, 10**6),
)


class _Period(w.Input):
    fromDate = w.fields.date("First day (inclusive)")
    toDate = w.fields.date("Last day (inclusive)")


def _period(args: _Period) -> tuple[str, str]:
    start, end = args.fromDate, args.toDate
    if end < start:
        raise w.fields.invalid("toDate", f"must not be before fromDate ({start})", end)
    return start, end


@w.define_tool()
def get_ap_aging(state: State, input: dict[str, Any]) -> dict[str, Any]:
    """Payables ageing: outstanding of live vendor invoices per vendor by days past due (current,
    1-30, 31-60, 60+).
    """
    owed = (
        (i["vendorId"], pay.days_overdue(state, i), pay.outstanding(state, i))
        for i in w.tools.sorted_by_id(state["vendorInvoices"])
    )
    return {"asOf": w.clock.today(state), "vendors": ageing(owed, _AP_BUCKETS, "vendorId")}


class _Valuation(w.Input):
    groupBy = w.fields.enum(
        "How to group (default warehouse).", ("warehouse", "category"), default="warehouse"
    )
    warehouseId = w.fields.string("Only this warehouse.", default=None, raw=True)


@w.define_tool(_Valuation)
def get_inventory_valuation(state: State, args: _Valuation) -> dict[str, Any]:
    """Stock on hand valued at standard cost, per warehouse or per product category; optionally for
    one warehouse only.
    """
    w.records.check_references(state, args, {"warehouseId": "warehouses"})
    group = args.groupBy
    totals: dict[str, list[float]] = defaultdict(list)
    for record in w.tools.sorted_by_id(state["stock"]):
        if args.warehouseId not in (None, record["warehouseId"]):
            continue
        product = state["products"][record["productId"]]
        key = record["warehouseId"] if group == "warehouse" else product["category"]
        totals[key].append(w.amounts.multiply_money(record["onHand"], product["standardCost"]))
    values = {k: w.amounts.sum_money(v) for k, v in sorted(totals.items())}
    rows = [{group: k, "value": v} for k, v in values.items()]
    return {"groupBy": group, "rows": rows, "total": w.amounts.sum_money(values.values())}


@w.define_tool(_Period)
def get_procurement_spend(state: State, args: _Period) -> dict[str, Any]:
    """Net amount invoiced by each vendor record (live invoices, less credit notes) with invoice
    dates in a period, largest first.
    """
    start, end = _period(args)
    per: dict[str, list[float]] = defaultdict(list)
    for invoice in w.tools.sorted_by_id(state["vendorInvoices"]):
        if invoice["status"] in LIVE_INVOICE and start <= invoice["invoiceDate"] <= end:
            per[invoice["vendorId"]].append(pay.invoice_net(state, invoice))
    rows = [
        {
            "vendorId": v,
            "vendorName": state["vendors"][v]["name"],
            "net": w.amounts.sum_money(a),
            "invoices": len(a),
        }
        for v, a in per.items()
    ]
    rows.sort(key=lambda r: (-r["net"], r["vendorId"]))
    return {
        "fromDate": start,
        "toDate": end,
        "vendors": rows,
        "total": w.amounts.sum_money(r["net"] for r in rows),
    }


def _shipped_lines(state: State, start: str, end: str) -> list[tuple[Any, Any, Any]]:
    out = []
    for shipment in w.tools.sorted_by_id(state["shipments"]):
        if start <= shipment["shippedAt"][:10] <= end:
            order = state["salesOrders"][shipment["salesOrderId"]]
            for line in shipment["lines"]:
                out.append((order, line, find_line(order, line["lineNo"])))
    return out


@w.define_tool(_Period)
def get_sales_summary(state: State, args: _Period) -> dict[str, Any]:
    """Goods shipped in a period at order prices (net), per customer."""
    start, end = _period(args)
    per: dict[str, list[float]] = defaultdict(list)
    for order, line, ordered in _shipped_lines(state, start, end):
        per[order["customerId"]].append(
            w.amounts.multiply_money(line["quantity"], ordered["unitPrice"])
        )
    nets = {c: w.amounts.sum_money(v) for c, v in sorted(per.items())}
    rows = [{"customerId": c, "net": n} for c, n in nets.items()]
    return {
        "fromDate": start,
        "toDate": end,
        "customers": rows,
        "total": w.amounts.sum_money(nets.values()),
    }


@w.define_tool(_Period)
def get_gross_margin(state: State, args: _Period) -> dict[str, Any]:
    """Revenue (order prices), cost (standard cost) and gross margin of goods shipped in a
    period.
    """
    start, end = _period(args)
    lines = _shipped_lines(state, start, end)
    revenue = w.amounts.sum_money(
        w.amounts.multiply_money(ln["quantity"], o["unitPrice"]) for _, ln, o in lines
    )
    cost = w.amounts.sum_money(
        w.amounts.multiply_money(ln["quantity"], state["products"][ln["productId"]]["standardCost"])
        for _, ln, _ in lines
    )
    margin = w.amounts.to_money(revenue - cost)
    return {
        "fromDate": start,
        "toDate": end,
        "revenue": revenue,
        "cost": cost,
        "grossMargin": margin,
        "marginPercent": w.amounts.percent(margin, revenue),
    }


class _Horizon(w.Input):
    days = w.fields.integer("How many days ahead (default 30).", minimum=1, maximum=365, default=30)


@w.define_tool(_Horizon)
def get_cash_forecast(state: State, args: _Horizon) -> dict[str, Any]:
    """Cash expected in (outstanding customer invoices) and out (open vendor invoices) by due date
    over the next days, overdue amounts included.
    """
    horizon = w.clock.add_days(w.clock.today(state), args.days)
    incoming = w.amounts.sum_money(
        sal.customer_outstanding(state, i)
        for i in state["customerInvoices"].values()
        if i["status"] == "issued" and i["dueDate"] <= horizon
    )
    outgoing = w.amounts.sum_money(
        pay.outstanding(state, i)
        for i in state["vendorInvoices"].values()
        if i["dueDate"] <= horizon
    )
    return {
        "asOf": w.clock.today(state),
        "until": horizon,
        "incoming": incoming,
        "outgoing": outgoing,
        "net": w.amounts.to_money(incoming - outgoing),
    }
