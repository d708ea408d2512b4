"""VER-011: reminders for invoices over 30 days overdue; holds for customers over 60."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.sales import days_overdue
from ..state import State


@silo.verifier(id="VER-011", task_id="TASK-011")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Strictly more than 30 / 60 days: an invoice exactly 30 days overdue gets nothing."""
    invoices = w.tools.sorted_by_id(initial["customerInvoices"])
    remind = [i["id"] for i in invoices if days_overdue(initial, i) > 30]
    spare = [i["id"] for i in invoices if i["id"] not in remind]
    holds = sorted({i["customerId"] for i in invoices if days_overdue(initial, i) > 60})
    newly = [c for c in holds if initial["customers"][c]["status"] == "active"]
    sent = {
        i: len(final["customerInvoices"][i]["reminders"])
        - len(initial["customerInvoices"][i]["reminders"])
        for i in initial["customerInvoices"]
    }
    others = [c for c in initial["customers"] if c not in holds]
    return [
        silo.check(
            "every invoice more than 30 days overdue got one new reminder",
            bool(remind) and all(sent[i] == 1 for i in remind),
            ", ".join(remind),
        ),
        silo.check(
            "no invoice 30 days overdue or less got a reminder",
            all(sent[i] == 0 for i in spare),
            ", ".join(i for i in spare if sent[i]) or "none",
        ),
        silo.check(
            "every customer with an invoice more than 60 days overdue is on hold",
            bool(newly) and all(final["customers"][c]["status"] == "on_hold" for c in holds),
            ", ".join(holds),
        ),
        silo.check(
            "the new holds say why",
            all("60 days" in (final["customers"][c]["holdReason"] or "") for c in newly),
        ),
        silo.optional(
            "no other customer changed",
            all(final["customers"][c] == initial["customers"][c] for c in others),
        ),
    ]
