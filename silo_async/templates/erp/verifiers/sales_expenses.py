"""VER-018: Sales expense claims decided: approvals by the right person, rejections for cause."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async import world as w

from ..state import Record, State, is_authorised
from .common import unchanged_except, user_named

MANAGER, FINANCE = "Jesper Holm", "Sanne Verbeek"


def _decisions(state: State) -> dict[str, tuple[str, str | None, str]]:
    """Claim -> (expected status, the reason word for a rejection, who decides).

    The sales manager decides every claim he may: not his own, and for an approval, not above
    his limit; finance decides the others.
    """
    sales = next(d for d in w.tools.sorted_by_id(state["departments"]) if d["name"] == "Sales")
    claims = [
        e
        for e in w.tools.sorted_by_id(state["expenses"])
        if e["status"] == "submitted" and e["departmentId"] == sales["id"]
    ]
    claims.sort(key=lambda e: (e["submittedAt"], e["id"]))
    manager, finance = user_named(state, MANAGER), user_named(state, FINANCE)
    threshold = state["policies"]["receiptRequiredAbove"]
    seen: set[tuple[Any, ...]] = set()
    out: dict[str, tuple[str, str | None, str]] = {}
    for claim in claims:
        key = (claim["employeeId"], claim["amount"], claim["incurredOn"], claim["description"])
        own = claim["employeeId"] == manager["id"]
        decider = finance["id"] if own else manager["id"]
        if key in seen:
            out[claim["id"]] = ("rejected", "duplicate", decider)
        elif claim["amount"] > threshold and not claim["hasReceipt"]:
            out[claim["id"]] = ("rejected", "receipt", decider)
        else:
            fits = is_authorised(state, manager, "expense", claim["amount"])
            out[claim["id"]] = ("approved", None, decider if fits else finance["id"])
        seen.add(key)
    return out


def _ok(claim: Record, expected: tuple[str, str | None, str]) -> bool:
    status, reason, decider = expected
    if claim["status"] != status or claim["decidedBy"] != decider:
        return False
    return status == "approved" or str(reason) in (claim["rejectionReason"] or "").lower()


@silo.verifier(id="VER-018", task_id="TASK-018")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Each submitted Sales claim gets exactly the decision the rules give."""
    expected = _decisions(initial)
    claims = final["expenses"]
    approve = [c for c, (s, _, _) in expected.items() if s == "approved"]
    dupes = [c for c, (_, d, _) in expected.items() if d == "duplicate"]
    unreceipted = [c for c, (_, d, _) in expected.items() if d == "receipt"]
    return [
        silo.check(
            "valid claims approved by the sales manager where allowed, else by finance",
            bool(approve) and all(_ok(claims[c], expected[c]) for c in approve),
            ", ".join(f"{c}: {claims[c]['status']} by {claims[c]['decidedBy']}" for c in approve),
        ),
        silo.check(
            "later duplicates rejected as duplicate (the earliest claim kept), by the right person",
            bool(dupes) and all(_ok(claims[c], expected[c]) for c in dupes),
            ", ".join(dupes),
        ),
        silo.check(
            "claims above the threshold without a receipt rejected for it, by the right person",
            bool(unreceipted) and all(_ok(claims[c], expected[c]) for c in unreceipted),
            ", ".join(unreceipted),
        ),
        silo.optional(
            "no other claim changed",
            not unchanged_except(final, initial, "expenses", expected),
        ),
        silo.optional(
            "nothing was reimbursed",
            all(claims[c]["status"] != "reimbursed" for c in expected),
        ),
    ]
