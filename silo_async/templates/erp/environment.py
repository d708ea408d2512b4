"""Build a fresh ERP world from ``data/*.json`` on every call.

The data files hold facts only. :class:`~silo_async.world.Seed` indexes every collection by id,
checks the references below and the id counters (a broken seed fails at once, naming the
record), and parses the files once per process; each rollout gets a fast independent clone.
``_check`` adds the rules a plain reference cannot state (approvals and payment allocations
point at different collections by kind; one stock line per product and warehouse). Every
derived figure (stock available, invoice outstanding, budget remaining, ...) is computed on read
by ``domain/``, so nothing derived is stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from silo_async import world as w

from .state import State

__all__ = ["DOCUMENT_COLLECTIONS", "SEED", "create_state"]

#: The collection each kind of approved document lives in.
DOCUMENT_COLLECTIONS: dict[str, str] = {
    "requisition": "requisitions",
    "purchase_order": "purchaseOrders",
    "vendor_invoice": "vendorInvoices",
    "payment": "payments",
    "expense": "expenses",
    "budget_transfer": "budgetTransfers",
}


def _refs(collection: str, **fields: str) -> list[w.records.Reference]:
    return [(collection, field, target) for field, target in fields.items()]


_REFERENCES: list[w.records.Reference] = [
    *_refs(
        "users",
        roleId="roles",
        departmentId="departments",
        warehouseId="warehouses",
        managerId="users",
    ),
    *_refs("departments", managerId="users"),
    *_refs("warehouses", managerId="users"),
    *_refs("vendors", mergedIntoId="vendors", createdBy="users"),
    *_refs("products", preferredVendorId="vendors"),
    *_refs("stock", productId="products", warehouseId="warehouses"),
    *_refs("budgets", departmentId="departments"),
    *_refs("budgetTransfers", fromBudgetId="budgets", toBudgetId="budgets", approvedBy="users"),
    *_refs(
        "requisitions",
        requesterId="users",
        departmentId="departments",
        budgetId="budgets",
        purchaseOrderId="purchaseOrders",
        rfqId="rfqs",
        **{"lines.productId": "products"},
    ),
    *_refs("approvals", assigneeId="users", decidedBy="users", requestedBy="users"),
    *_refs(
        "rfqs",
        requisitionId="requisitions",
        invitedVendorIds="vendors",
        awardedQuotationId="quotations",
        createdBy="users",
        **{"lines.productId": "products"},
    ),
    *_refs("quotations", rfqId="rfqs", vendorId="vendors", **{"lines.productId": "products"}),
    *_refs(
        "purchaseOrders",
        vendorId="vendors",
        warehouseId="warehouses",
        budgetId="budgets",
        requisitionId="requisitions",
        quotationId="quotations",
        createdBy="users",
        **{"lines.productId": "products"},
    ),
    *_refs(
        "goodsReceipts",
        purchaseOrderId="purchaseOrders",
        warehouseId="warehouses",
        receivedBy="users",
    ),
    *_refs(
        "vendorInvoices",
        vendorId="vendors",
        purchaseOrderId="purchaseOrders",
        budgetId="budgets",
        approvedBy="users",
        **{"lines.productId": "products"},
    ),
    *_refs("vendorCreditNotes", vendorInvoiceId="vendorInvoices", createdBy="users"),
    *_refs(
        "payments",
        vendorId="vendors",
        customerId="customers",
        createdBy="users",
        approvedBy="users",
    ),
    *_refs(
        "salesOrders",
        customerId="customers",
        warehouseId="warehouses",
        createdBy="users",
        **{"lines.productId": "products"},
    ),
    *_refs(
        "shipments",
        salesOrderId="salesOrders",
        warehouseId="warehouses",
        shippedBy="users",
        **{"lines.productId": "products"},
    ),
    *_refs(
        "reservations",
        salesOrderId="salesOrders",
        productId="products",
        warehouseId="warehouses",
        createdBy="users",
    ),
    *_refs(
        "customerInvoices",
        customerId="customers",
        salesOrderId="salesOrders",
        shipmentIds="shipments",
        **{"lines.productId": "products"},
    ),
    *_refs(
        "expenses",
        employeeId="users",
        departmentId="departments",
        budgetId="budgets",
        decidedBy="users",
    ),
    *_refs(
        "transfers",
        productId="products",
        fromWarehouseId="warehouses",
        toWarehouseId="warehouses",
        createdBy="users",
        receivedBy="users",
    ),
    *_refs("stockMovements", productId="products", warehouseId="warehouses"),
]


def _fail(file: str, record: str, problem: str) -> w.records.SeedError:
    return w.records.SeedError(f"data/{file}.json: {record} {problem}.")


def _check(world: dict[str, Any]) -> None:
    """The rules a plain reference cannot state."""
    for approval in world["approvals"].values():
        target = DOCUMENT_COLLECTIONS.get(approval["documentType"])
        if target is None or approval["documentId"] not in world[target]:
            raise _fail("approvals", approval["id"], f"names a missing {approval['documentType']}")
    for payment in world["payments"].values():
        invoices = "vendorInvoices" if payment["direction"] == "outbound" else "customerInvoices"
        for allocation in payment["allocations"]:
            if allocation["invoiceId"] not in world[invoices]:
                raise _fail("payments", payment["id"], f"pays missing {allocation['invoiceId']}")
    seen: set[tuple[str, str]] = set()
    for line in world["stock"].values():
        key = (line["productId"], line["warehouseId"])
        if key in seen:
            raise _fail("stock", line["id"], f"repeats {key[0]} at {key[1]}")
        seen.add(key)


SEED = w.Seed(Path(__file__).parent / "data", references=_REFERENCES, build=_check)


def create_state() -> State:
    """Return a fresh, independent copy of the seed world."""
    world: State = SEED.clone()
    return world
