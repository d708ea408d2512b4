"""VER-009: draft orders that pass the credit check confirmed, the others named and left."""

from __future__ import annotations

import silo_async as silo
from silo_async import world as w

from ..domain.sales import exposure, order_net
from ..state import Record, State, gross


def _passes(state: State, order: Record) -> bool:
    """Judged one by one on the initial world: each draft belongs to a different customer."""
    customer = state["customers"][order["customerId"]]
    total = exposure(state, customer["id"])["total"] + gross(state, order_net(order))
    return bool(customer["status"] == "active" and total <= customer["creditLimit"])


@silo.verifier(id="VER-009", task_id="TASK-009")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Confirm the passing drafts, keep the rest in draft, and say which and why."""
    drafts = [o for o in w.tools.sorted_by_id(initial["salesOrders"]) if o["status"] == "draft"]
    passing = [o["id"] for o in drafts if _passes(initial, o)]
    failing = [o["id"] for o in drafts if not _passes(initial, o)]
    status = {o: final["salesOrders"][o]["status"] for o in passing + failing}
    answer = ctx.agent_output
    return [
        w.grade.written_by(final, initial, "USR-012"),
        silo.check(
            "the drafts that pass the credit check are confirmed",
            bool(passing) and all(status[o] == "confirmed" for o in passing),
            ", ".join(passing),
        ),
        silo.check(
            "the drafts that fail it stay in draft",
            bool(failing) and all(status[o] == "draft" for o in failing),
            ", ".join(failing),
        ),
        silo.check(
            "the answer names every order that could not be confirmed",
            all(w.grade.mentions_id(answer, o) for o in failing),
        ),
        silo.check(
            "no customer's credit limit or hold was changed",
            not w.grade.changed_ids(final, initial, "customers"),
        ),
        silo.optional(
            "the answer says why (credit limit, hold)",
            (w.grade.mentions(answer, "credit") and w.grade.mentions(answer, "hold"))
            or "on_hold" in answer,
        ),
        silo.optional(
            "no order's lines changed",
            all(final["salesOrders"][o["id"]]["lines"] == o["lines"] for o in drafts),
        ),
    ]
