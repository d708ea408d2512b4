"""The second half of ``erp_solver.py``: order-to-cash, inventory, budgets and answers.

Not an agent file by itself: ``erp_solver.py`` loads it and passes its helpers as ``kit``
(``call``, ``rows``, ``one``, ``users_in``, ``warehouse_in``, ``department_named``,
``first_approver``).
"""

from __future__ import annotations

from typing import Any

import silo_async as silo

Kit = Any


async def fix_double_reservation(ctx: silo.AgentContext, kit: Kit) -> str:
    actor = kit.users_in(ctx.task)[0]
    order_id = kit.found(r"\bSO-\d+\b", ctx.task, 0)
    order = await kit.call(ctx, "get_sales_order", {"salesOrderId": order_id})
    short = [
        ln
        for ln in (await kit.call(ctx, "check_order_stock", {"salesOrderId": order_id}))["lines"]
        if ln["shortfall"] > 0
    ]
    released = []
    for line in short:
        held = await kit.rows(
            ctx,
            "list_reservations",
            {
                "productId": line["productId"],
                "warehouseId": order["warehouseId"],
                "status": "active",
            },
        )
        by_line: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for reservation in held:
            by_line.setdefault((reservation["salesOrderId"], reservation["lineNo"]), []).append(
                reservation
            )
        for (other_id, line_no), found in by_line.items():
            other = await kit.call(ctx, "get_sales_order", {"salesOrderId": other_id})
            need = next(ln["unshipped"] for ln in other["lines"] if ln["lineNo"] == line_no)
            extra = sum(r["held"] for r in found) - need
            for reservation in sorted(found, key=lambda r: r["id"], reverse=True):
                if extra >= reservation["held"] > 0:
                    await kit.call(
                        ctx,
                        "release_reservation",
                        {
                            "reservationId": reservation["id"],
                            "actorId": actor,
                            "reason": f"Duplicate: {other_id} line {line_no} was reserved twice",
                        },
                    )
                    extra -= reservation["held"]
                    released.append(reservation["id"])
    await kit.call(ctx, "reserve_order_stock", {"salesOrderId": order_id, "actorId": actor})
    return f"Released duplicate {', '.join(released)}; {order_id} fully reserved."


async def ship_via_transfer(ctx: silo.AgentContext, kit: Kit) -> str:
    actor = kit.users_in(ctx.task)[0]
    order_id = kit.found(r"\bSO-\d+\b", ctx.task, 0)
    stock = await kit.call(ctx, "check_order_stock", {"salesOrderId": order_id})
    moved = []
    for line in stock["lines"]:
        if line["shortfall"] <= 0:
            continue
        source = max(line["availableElsewhere"].items(), key=lambda kv: kv[1])[0]
        transfer = (
            await kit.call(
                ctx,
                "create_transfer",
                {
                    "productId": line["productId"],
                    "fromWarehouseId": source,
                    "toWarehouseId": stock["warehouseId"],
                    "quantity": line["shortfall"],
                    "reason": f"Complete {order_id}",
                    "actorId": actor,
                },
            )
        )["created"]
        await kit.call(ctx, "receive_transfer", {"transferId": transfer["id"], "actorId": actor})
        moved.append(f"{transfer['quantity']} from {source} ({transfer['id']})")
    shipment = await kit.call(ctx, "ship_sales_order", {"salesOrderId": order_id, "actorId": actor})
    return f"Moved {', '.join(moved)}; shipped {order_id} as {shipment['created']['id']}."


async def confirm_drafts(ctx: silo.AgentContext, kit: Kit) -> str:
    actor = kit.users_in(ctx.task)[0]
    confirmed, refused = [], []
    for order in await kit.rows(ctx, "list_sales_orders", {"status": "draft"}):
        credit = await kit.call(
            ctx,
            "get_customer_credit",
            {"customerId": order["customerId"], "additionalAmount": order["total"]},
        )
        if credit["status"] != "active":
            refused.append(f"{order['id']}: customer {order['customerId']} is {credit['status']}")
        elif not credit["withinLimit"]:
            refused.append(
                f"{order['id']}: credit limit {credit['creditLimit']} would be exceeded "
                f"({credit['exposureAfter']})"
            )
        else:
            await kit.call(
                ctx, "confirm_sales_order", {"salesOrderId": order["id"], "actorId": actor}
            )
            confirmed.append(order["id"])
    return f"Confirmed {', '.join(confirmed)}. Not confirmed: {'; '.join(refused)}."


async def bill_shipments(ctx: silo.AgentContext, kit: Kit) -> str:
    actor = kit.users_in(ctx.task)[0]
    billed = []
    for shipment in (await kit.call(ctx, "list_uninvoiced_shipments"))["results"]:
        invoice = (
            await kit.call(
                ctx, "create_customer_invoice", {"shipmentIds": [shipment["id"]], "actorId": actor}
            )
        )["created"]
        await kit.call(
            ctx, "issue_customer_invoice", {"invoiceId": invoice["id"], "actorId": actor}
        )
        billed.append(f"{shipment['id']} -> {invoice['id']}")
    return "; ".join(billed)


async def collections(ctx: silo.AgentContext, kit: Kit) -> str:
    actor = kit.users_in(ctx.task)[0]
    reason = kit.found(r'reason "([^"]+)"', ctx.task, 1)
    reminded = await kit.call(ctx, "list_overdue_customer_invoices", {"minDaysOverdue": 31})
    for invoice in reminded["results"]:
        await kit.call(ctx, "send_payment_reminder", {"invoiceId": invoice["id"], "actorId": actor})
    late = (await kit.call(ctx, "list_overdue_customer_invoices", {"minDaysOverdue": 61}))[
        "results"
    ]
    held = []
    for customer_id in sorted({i["customerId"] for i in late}):
        customer = await kit.call(ctx, "get_customer", {"customerId": customer_id})
        if customer["status"] == "active":
            await kit.call(
                ctx,
                "place_customer_on_hold",
                {"customerId": customer_id, "reason": reason, "actorId": actor},
            )
            held.append(customer_id)
    ids = ", ".join(i["id"] for i in reminded["results"])
    return f"Reminded {ids}; put {', '.join(held)} on hold."


async def overdue_answer(ctx: silo.AgentContext, kit: Kit) -> str:
    page = await kit.call(ctx, "list_overdue_customer_invoices")
    per: dict[str, float] = {}
    for invoice in page["results"]:
        per[invoice["customerName"]] = per.get(invoice["customerName"], 0) + invoice["outstanding"]
    top = max(per.items(), key=lambda kv: kv[1])
    return (
        f"Overdue receivables total {page['outstanding']:.2f} EUR; the largest overdue "
        f"balance is {top[0]}'s."
    )


async def restock_utrecht(ctx: silo.AgentContext, kit: Kit) -> str:
    actor = kit.users_in(ctx.task)[0]
    utrecht, rotterdam = (
        await kit.warehouse_in(ctx, "Utrecht"),
        await kit.warehouse_in(ctx, "Rotterdam"),
    )
    requisition, moved = [], []
    for low in (await kit.call(ctx, "list_low_stock", {"warehouseId": utrecht}))["results"]:
        spots = await kit.call(ctx, "get_product_availability", {"productId": low["productId"]})
        there = next((r for r in spots["warehouses"] if r["warehouseId"] == rotterdam), None)
        quantity = low["reorderQuantity"]
        if there is not None and there["available"] - quantity >= there["reorderPoint"]:
            await kit.call(
                ctx,
                "create_transfer",
                {
                    "productId": low["productId"],
                    "fromWarehouseId": rotterdam,
                    "toWarehouseId": utrecht,
                    "quantity": quantity,
                    "reason": "Restock below reorder point",
                    "actorId": actor,
                },
            )
            moved.append(low["productId"])
        else:
            requisition.append({"productId": low["productId"], "quantity": quantity})
    operations = await kit.department_named(ctx, "Operations")
    budget = (await kit.rows(ctx, "list_budgets", {"departmentId": operations["id"]}))[0]
    created = (
        await kit.call(
            ctx,
            "create_requisition",
            {
                "requesterId": actor,
                "departmentId": operations["id"],
                "budgetId": budget["id"],
                "justification": "Utrecht below reorder point",
                "lines": requisition,
                "actorId": actor,
            },
        )
    )["created"]
    approver = await kit.first_approver(ctx, "requisition", created["estimatedNet"], {actor})
    await kit.call(
        ctx,
        "submit_requisition",
        {"requisitionId": created["id"], "approverId": approver, "actorId": actor},
    )
    return f"Transferred {', '.join(moved)}; {created['id']} submitted to {approver}."


async def count_headlamps(ctx: silo.AgentContext, kit: Kit) -> str:
    actor = kit.users_in(ctx.task)[0]
    counted = int(kit.found(r"(\d+) are on the shelf", ctx.task, 1))
    product = await kit.one(ctx, "search_products", "Lumora 900")
    utrecht = await kit.warehouse_in(ctx, "Utrecht")
    out = await kit.call(
        ctx,
        "count_stock",
        {
            "productId": product["id"],
            "warehouseId": utrecht,
            "countedQuantity": counted,
            "actorId": actor,
        },
    )
    return f"Posted the count; variance {out['variance']}."


# --- finance ------------------------------------------------------------------------------------


async def over_budget_answer(ctx: silo.AgentContext, kit: Kit) -> str:
    over = [b for b in await kit.rows(ctx, "list_budgets") if b["remaining"] < 0]
    budget = over[0]
    return (
        f"{budget['costCentre']} ({budget['departmentName']}) is over its FY2026 budget by "
        f"{-budget['remaining']:.2f} EUR."
    )


async def biggest_supplier(ctx: silo.AgentContext, kit: Kit) -> str:
    today = (await kit.call(ctx, "get_current_time"))["today"]
    start = kit.found(r"\b\d{4}-\d{2}-\d{2}\b", ctx.task, 0)
    spend = await kit.call(ctx, "get_procurement_spend", {"fromDate": start, "toDate": today})
    groups = (await kit.call(ctx, "find_duplicate_vendors"))["groups"]
    same = {
        v: g["vendorIds"][0]
        for g in groups
        if g["sharedField"] == "vatNumber"
        for v in g["vendorIds"]
    }
    totals: dict[str, float] = {}
    for row in spend["vendors"]:
        key = same.get(row["vendorId"], row["vendorId"])
        totals[key] = round(totals.get(key, 0) + row["net"], 2)
    top = max(totals.items(), key=lambda kv: kv[1])
    vendor = await kit.call(ctx, "get_vendor", {"vendorId": top[0]})
    return f"{vendor['name']} invoiced the most: {top[1]:.2f} EUR net."


async def process_expenses(ctx: silo.AgentContext, kit: Kit) -> str:
    manager, finance = kit.users_in(ctx.task)
    sales = await kit.department_named(ctx, "Sales")
    threshold = (await kit.call(ctx, "get_company_profile"))["policies"]["receiptRequiredAbove"]
    claims = await kit.rows(
        ctx, "list_expenses", {"status": "submitted", "departmentId": sales["id"]}
    )
    claims.sort(key=lambda c: (c["submittedAt"], c["id"]))
    seen: set[tuple[Any, ...]] = set()
    done = []
    for claim in claims:
        key = (claim["employeeId"], claim["amount"], claim["incurredOn"], claim["description"])
        check = await kit.call(
            ctx,
            "check_approval_authority",
            {"userId": manager, "documentType": "expense", "amount": claim["amount"]},
        )
        decider = manager if claim["employeeId"] != manager else finance
        args = {"expenseId": claim["id"], "actorId": decider}
        if key in seen:
            await kit.call(ctx, "reject_expense", {**args, "reason": "duplicate"})
            done.append(f"{claim['id']} rejected (duplicate)")
        elif claim["amount"] > threshold and not claim["hasReceipt"]:
            await kit.call(ctx, "reject_expense", {**args, "reason": "missing receipt"})
            done.append(f"{claim['id']} rejected (missing receipt)")
        else:
            if not check["authorised"]:
                args["actorId"] = finance
            await kit.call(ctx, "approve_expense", args)
            done.append(f"{claim['id']} approved by {args['actorId']}")
        seen.add(key)
    return "; ".join(done)


SOLVERS = [
    ("cannot reserve", fix_double_reservation),
    ("shipped complete", ship_via_transfer),
    ("passes the credit check", confirm_drafts),
    ("never invoiced", bill_shipments),
    ("payment reminder", collections),
    ("overdue today, and which customer", overdue_answer),
    ("below its reorder point", restock_utrecht),
    ("Post the count", count_headlamps),
    ("over its FY2026 budget", over_budget_answer),
    ("invoiced us the most", biggest_supplier),
    ("submitted expense claim", process_expenses),
]
