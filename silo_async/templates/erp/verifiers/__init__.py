"""The ERP verifier registry: exactly the verifiers listed here exist."""

from __future__ import annotations

import silo_async as silo

from . import (
    ap_inbox,
    apply_receipt,
    award_rfq,
    biggest_supplier,
    bill_shipments,
    collections,
    confirm_drafts,
    double_reservation,
    headlamp_count,
    merge_duplicate_vendor,
    over_billed_invoice,
    over_budget_answer,
    over_limit_approval,
    overdue_answer,
    payment_run,
    receive_delivery,
    repay_bounced,
    requisition_queue,
    restock_utrecht,
    sales_expenses,
    ship_via_transfer,
)

__all__ = ["verifiers"]

verifiers: list[silo.Verifier] = [
    merge_duplicate_vendor.verify,
    ap_inbox.verify,
    over_limit_approval.verify,
    double_reservation.verify,
    over_budget_answer.verify,
    requisition_queue.verify,
    award_rfq.verify,
    ship_via_transfer.verify,
    confirm_drafts.verify,
    bill_shipments.verify,
    collections.verify,
    overdue_answer.verify,
    restock_utrecht.verify,
    repay_bounced.verify,
    payment_run.verify,
    receive_delivery.verify,
    biggest_supplier.verify,
    sales_expenses.verify,
    apply_receipt.verify,
    over_billed_invoice.verify,
    headlamp_count.verify,
]
