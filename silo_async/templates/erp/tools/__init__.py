"""The ERP tool registry: exactly the tools listed here exist, in this order."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.tools import (
    advance_clock,
    get_audit_entry,
    get_current_time,
    list_audit_entries,
)

from .approvals import (
    get_approval,
    list_approvals,
    list_approvals_for_document,
    list_pending_approvals,
    reassign_approval,
    revoke_approval,
)
from .budgets import (
    check_budget,
    get_budget,
    list_budget_transfers,
    list_budgets,
    transfer_budget,
)
from .credit_notes import list_vendor_credit_notes, record_vendor_credit_note
from .customer_invoices import (
    create_customer_invoice,
    get_ar_aging,
    get_customer_invoice,
    issue_customer_invoice,
    list_customer_invoices,
    list_overdue_customer_invoices,
    search_customer_invoices,
    send_payment_reminder,
    void_customer_invoice,
    write_off_customer_invoice,
)
from .customers import (
    create_customer,
    get_customer,
    get_customer_credit,
    get_customer_statement,
    list_customers,
    place_customer_on_hold,
    release_customer_hold,
    search_customers,
    set_credit_limit,
    update_customer,
)
from .expenses import (
    approve_expense,
    get_expense,
    list_expenses,
    reimburse_expense,
    reject_expense,
    submit_expense,
)
from .invoice_workflow import (
    approve_vendor_invoice,
    cancel_vendor_invoice,
    hold_vendor_invoice,
    reject_vendor_invoice,
    release_vendor_invoice_hold,
    run_three_way_match,
)
from .organisation import (
    check_approval_authority,
    get_company_profile,
    get_department,
    get_role,
    get_user,
    list_departments,
    list_roles,
    list_users,
    search_users,
)
from .payments import (
    approve_payment,
    cancel_payment,
    create_vendor_payment,
    execute_payment,
    get_payment,
    list_payments,
    retry_payment,
)
from .po_workflow import (
    approve_purchase_order,
    cancel_purchase_order,
    close_purchase_order,
    reject_purchase_order,
    send_purchase_order,
    submit_purchase_order,
)
from .products import (
    create_product,
    discontinue_product,
    get_product,
    get_product_availability,
    get_product_purchase_history,
    list_products,
    search_products,
    update_product,
)
from .purchase_orders import (
    add_purchase_order_line,
    create_purchase_order,
    create_purchase_order_from_quotation,
    get_purchase_order,
    list_late_purchase_orders,
    list_open_purchase_order_lines,
    list_purchase_orders,
    remove_purchase_order_line,
    search_purchase_orders,
    update_purchase_order_line,
)
from .quotations import (
    accept_quotation,
    compare_quotations,
    get_quotation,
    list_quotations,
    record_quotation,
    reject_quotation,
)
from .receipts import (
    allocate_receipt,
    list_unallocated_receipts,
    record_customer_receipt,
)
from .receiving import (
    get_goods_receipt,
    list_goods_receipts,
    list_pending_deliveries,
    receive_goods,
    reverse_goods_receipt,
)
from .reporting import (
    get_ap_aging,
    get_cash_forecast,
    get_gross_margin,
    get_inventory_valuation,
    get_procurement_spend,
    get_sales_summary,
)
from .requisitions import (
    add_requisition_line,
    approve_requisition,
    cancel_requisition,
    check_requisition_budget,
    create_requisition,
    get_requisition,
    list_requisitions,
    reject_requisition,
    remove_requisition_line,
    search_requisitions,
    submit_requisition,
    update_requisition,
    update_requisition_line,
)
from .reservations import (
    get_reservation,
    list_reservations,
    release_reservation,
    reserve_stock,
)
from .rfqs import (
    cancel_rfq,
    close_rfq,
    create_rfq,
    get_rfq,
    invite_vendor_to_rfq,
    list_rfqs,
    send_rfq,
)
from .sales_orders import (
    add_sales_order_line,
    cancel_sales_order,
    check_order_stock,
    confirm_sales_order,
    create_sales_order,
    get_sales_order,
    list_backorders,
    list_sales_orders,
    remove_sales_order_line,
    reserve_order_stock,
    search_sales_orders,
    update_sales_order_line,
)
from .shipments import (
    get_shipment,
    list_shipments,
    list_uninvoiced_shipments,
    mark_shipment_delivered,
    ship_sales_order,
)
from .stock import (
    adjust_stock,
    count_stock,
    find_stock,
    get_stock_level,
    get_stock_movement,
    get_warehouse,
    list_low_stock,
    list_stock,
    list_stock_movements,
    list_warehouses,
    set_reorder_levels,
)
from .transfers import (
    cancel_transfer,
    create_transfer,
    get_transfer,
    list_transfers,
    receive_transfer,
)
from .vendor_invoices import (
    explain_invoice_block,
    get_vendor_invoice,
    list_overdue_vendor_invoices,
    list_vendor_invoices,
    list_vendor_invoices_due,
    record_vendor_invoice,
    search_vendor_invoices,
)
from .vendor_merge import (
    merge_vendors,
)
from .vendors import (
    approve_vendor,
    block_vendor,
    create_vendor,
    find_duplicate_vendors,
    get_vendor,
    get_vendor_balance,
    list_vendors,
    search_vendors,
    unblock_vendor,
    update_vendor,
    update_vendor_bank_details,
)

__all__ = ["tools"]

tools: list[silo.Tool] = [
    # clock
    get_current_time,
    advance_clock,
    # organisation
    get_company_profile,
    list_departments,
    get_department,
    list_roles,
    get_role,
    list_users,
    search_users,
    get_user,
    check_approval_authority,
    # vendors
    list_vendors,
    search_vendors,
    get_vendor,
    get_vendor_balance,
    create_vendor,
    update_vendor,
    update_vendor_bank_details,
    approve_vendor,
    block_vendor,
    unblock_vendor,
    find_duplicate_vendors,
    # vendor merge
    merge_vendors,
    # customers
    list_customers,
    search_customers,
    get_customer,
    get_customer_credit,
    get_customer_statement,
    create_customer,
    update_customer,
    set_credit_limit,
    place_customer_on_hold,
    release_customer_hold,
    # products
    list_products,
    search_products,
    get_product,
    get_product_availability,
    get_product_purchase_history,
    create_product,
    update_product,
    discontinue_product,
    # stock
    list_warehouses,
    get_warehouse,
    list_stock,
    get_stock_level,
    list_low_stock,
    find_stock,
    adjust_stock,
    count_stock,
    set_reorder_levels,
    list_stock_movements,
    get_stock_movement,
    # transfers
    list_transfers,
    get_transfer,
    create_transfer,
    receive_transfer,
    cancel_transfer,
    # reservations
    list_reservations,
    get_reservation,
    reserve_stock,
    release_reservation,
    # requisitions
    add_requisition_line,
    remove_requisition_line,
    update_requisition_line,
    list_requisitions,
    search_requisitions,
    get_requisition,
    create_requisition,
    update_requisition,
    submit_requisition,
    approve_requisition,
    reject_requisition,
    cancel_requisition,
    check_requisition_budget,
    # approvals
    list_approvals,
    get_approval,
    list_pending_approvals,
    list_approvals_for_document,
    reassign_approval,
    revoke_approval,
    # rfqs
    list_rfqs,
    get_rfq,
    create_rfq,
    invite_vendor_to_rfq,
    send_rfq,
    close_rfq,
    cancel_rfq,
    # quotations
    list_quotations,
    get_quotation,
    compare_quotations,
    record_quotation,
    accept_quotation,
    reject_quotation,
    # purchase orders
    add_purchase_order_line,
    remove_purchase_order_line,
    update_purchase_order_line,
    list_purchase_orders,
    search_purchase_orders,
    get_purchase_order,
    create_purchase_order,
    create_purchase_order_from_quotation,
    list_open_purchase_order_lines,
    list_late_purchase_orders,
    # po workflow
    submit_purchase_order,
    approve_purchase_order,
    reject_purchase_order,
    send_purchase_order,
    cancel_purchase_order,
    close_purchase_order,
    # receiving
    list_goods_receipts,
    get_goods_receipt,
    list_pending_deliveries,
    receive_goods,
    reverse_goods_receipt,
    # vendor invoices
    list_vendor_invoices,
    search_vendor_invoices,
    get_vendor_invoice,
    record_vendor_invoice,
    list_vendor_credit_notes,
    record_vendor_credit_note,
    list_vendor_invoices_due,
    list_overdue_vendor_invoices,
    explain_invoice_block,
    # invoice workflow
    run_three_way_match,
    approve_vendor_invoice,
    hold_vendor_invoice,
    release_vendor_invoice_hold,
    reject_vendor_invoice,
    cancel_vendor_invoice,
    # payments
    list_payments,
    get_payment,
    create_vendor_payment,
    approve_payment,
    execute_payment,
    cancel_payment,
    retry_payment,
    # receipts
    record_customer_receipt,
    allocate_receipt,
    list_unallocated_receipts,
    # sales orders
    add_sales_order_line,
    remove_sales_order_line,
    update_sales_order_line,
    list_sales_orders,
    search_sales_orders,
    get_sales_order,
    create_sales_order,
    confirm_sales_order,
    cancel_sales_order,
    check_order_stock,
    reserve_order_stock,
    list_backorders,
    # shipments
    list_shipments,
    get_shipment,
    list_uninvoiced_shipments,
    ship_sales_order,
    mark_shipment_delivered,
    # customer invoices
    list_customer_invoices,
    search_customer_invoices,
    get_customer_invoice,
    create_customer_invoice,
    issue_customer_invoice,
    void_customer_invoice,
    write_off_customer_invoice,
    send_payment_reminder,
    list_overdue_customer_invoices,
    get_ar_aging,
    # expenses
    list_expenses,
    get_expense,
    submit_expense,
    approve_expense,
    reject_expense,
    reimburse_expense,
    # budgets
    list_budgets,
    get_budget,
    check_budget,
    list_budget_transfers,
    transfer_budget,
    # reporting
    get_ap_aging,
    get_inventory_valuation,
    get_procurement_spend,
    get_sales_summary,
    get_gross_margin,
    get_cash_forecast,
    # audit
    list_audit_entries,
    get_audit_entry,
]
