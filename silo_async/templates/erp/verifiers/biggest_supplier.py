"""VER-017: the supplier invoicing most since 1 April, duplicate records counted as one."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.payables import invoice_net
from ..domain.purchasing import LIVE_INVOICE
from ..state import Record, State

SINCE = "2026-04-01"


def _spend(state: State) -> tuple[dict[str, float], dict[str, float]]:
    """Net invoiced per company (VAT number) and per vendor record."""
    company: dict[str, float] = {}
    record: dict[str, float] = {}
    for invoice in w.tools.sorted_by_id(state["vendorInvoices"]):
        if invoice["status"] in LIVE_INVOICE and SINCE <= invoice["invoiceDate"] <= w.clock.today(
            state
        ):
            vat = state["vendors"][invoice["vendorId"]]["vatNumber"]
            net = invoice_net(state, invoice)
            company[vat] = w.amounts.sum_money([company.get(vat, 0), net])
            record[invoice["vendorId"]] = w.amounts.sum_money(
                [record.get(invoice["vendorId"], 0), net]
            )
    return company, record


def _oldest(state: State, vat: str) -> Record:
    same = [v for v in state["vendors"].values() if v["vatNumber"] == vat]
    found: Record = min(same, key=lambda v: v["createdAt"])
    return found


@silo.verifier(id="VER-017", task_id="TASK-017")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The company and its combined amount; not the biggest single record."""
    company, record = _spend(initial)
    vat = max(company, key=lambda k: company[k])
    winner = _oldest(initial, vat)
    single = initial["vendors"][max(record, key=lambda k: record[k])]
    answer = ctx.agent_output
    word = winner["name"].split()[0]
    return [
        silo.check(f"names {winner['name']}", w.grade.mentions(answer, word)),
        silo.check(
            f"states its combined net {company[vat]:,.2f}",
            w.grade.states_number(answer, company[vat], 0.5),
        ),
        silo.optional(
            f"does not give {single['name']} ({record[single['id']]:,.2f}) as the answer",
            single["vatNumber"] == vat
            or not w.grade.states_number(answer, record[single["id"]], 0.5),
        ),
        silo.optional("commits to a figure (1 to 3 numbers)", w.grade.few_numbers(answer, 3)),
        silo.optional(
            "nothing was written (every write is audited)",
            not w.grade.new_audit_entries(final, initial),
        ),
    ]
