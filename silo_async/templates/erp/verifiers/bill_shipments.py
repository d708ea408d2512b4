"""VER-010: every uninvoiced shipment billed on its own invoice, issued today."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.sales import customer_invoice_net, invoiced_shipment_ids, shipment_net
from ..state import Record, State, terms_days
from .common import unchanged_except


def _bills(state: State, invoice: Record, shipment: Record) -> bool:
    order = state["salesOrders"][shipment["salesOrderId"]]
    prices = {ln["lineNo"]: ln["unitPrice"] for ln in order["lines"]}
    wanted = sorted(
        (ln["productId"], ln["quantity"], prices[ln["lineNo"]]) for ln in shipment["lines"]
    )
    got = sorted((ln["productId"], ln["quantity"], ln["unitPrice"]) for ln in invoice["lines"])
    return bool(
        invoice["customerId"] == order["customerId"]
        and got == wanted
        and customer_invoice_net(invoice) == shipment_net(state, shipment)
    )


@silo.verifier(id="VER-010", task_id="TASK-010")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """One issued invoice per unbilled shipment, at order prices, due after the terms."""
    billed = invoiced_shipment_ids(initial)
    unbilled = [s for s in w.tools.sorted_by_id(initial["shipments"]) if s["id"] not in billed]
    new = w.grade.new_records(final, initial, "customerInvoices")
    own = {s["id"]: [i for i in new if i["shipmentIds"] == [s["id"]]] for s in unbilled}
    today = w.clock.today(final)

    def dated(invoice: Record) -> bool:
        terms = final["customers"][invoice["customerId"]]["paymentTerms"]
        return bool(
            invoice["status"] == "issued"
            and invoice["issueDate"] == today
            and invoice["dueDate"] == w.clock.add_days(today, terms_days(final, terms))
        )

    return [
        silo.check(
            "each uninvoiced shipment is on exactly one new invoice of its own",
            bool(unbilled) and all(len(found) == 1 for found in own.values()),
            ", ".join(f"{s}: {len(found)}" for s, found in own.items()),
        ),
        silo.check(
            "each invoice bills its shipment at the order's prices",
            all(
                len(f) == 1 and _bills(initial, f[0], s)
                for s, f in ((s, own[s["id"]]) for s in unbilled)
            ),
        ),
        silo.check(
            "the invoices are issued today, due after the customer's payment terms",
            all(len(f) == 1 and dated(f[0]) for f in own.values()),
        ),
        silo.optional("no other invoice was created", len(new) == len(unbilled)),
        silo.optional(
            "no existing invoice changed",
            not unchanged_except(final, initial, "customerInvoices", [i["id"] for i in new]),
        ),
    ]
