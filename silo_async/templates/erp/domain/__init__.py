"""The ERP world's derived figures, computed on read from the stored facts.

One module per area: ``stock`` (reserved, available, inbound, projected, reorder),
``purchasing`` (requisitions, purchase orders, receipts), ``payables`` (vendor invoices, the
three-way match, payments), ``sales`` (orders, shipments, customer invoices, credit exposure)
and ``budgets`` (allocated, committed, spent, remaining). Tools and verifiers use the same
functions, so a verifier's expectation is computed exactly the way an agent sees it.
"""
