"""What the support verifiers share: finding records by what they are, and the usual guards.

Verifiers find the customer's line by its phone number and the customer's phone by the SIM it
held in the initial world, so a renumbered seed still grades. The guards pass on a do-nothing
run; every verifier pairs them with checks that demand the change (or, for a refusal, with a
check on what the customer was told).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import silo_async as silo
from silo_async import world as w

from ..state import Case, Credit, Device, Line, State, device_with_sim, normalise_number

__all__ = [
    "ACCOUNT_RECORDS",
    "by_staff",
    "changed_elsewhere",
    "device_of",
    "line_numbered",
    "new_cases",
    "new_credits",
    "resolved_case",
    "told_any",
    "verified_case",
]

_STAFF = re.compile(r"staff id (STF-[0-9]+)")

#: The carrier's records an agent can change (cases and the audit log aside).
ACCOUNT_RECORDS = (
    "customers", "lines", "sims", "holds", "bills", "unbilledCharges", "credits", "cards",
    "payments", "lineAddons", "simOrders", "incidents",
)  # fmt: skip


def line_numbered(state: State, number: str) -> Line:
    """The line with this phone number."""
    wanted = normalise_number(number)
    for line in state["lines"].values():
        if line["msisdn"] == wanted:
            return line
    raise LookupError(f"No line numbered {number} in the seed.")


def device_of(initial: State, final: State, line: Line) -> Device:
    """The customer's phone, as it is in ``final``.

    The phone is the one holding the line's SIM at the start, or a replacement card meant for
    the line.
    """
    device = device_with_sim(initial, line["simId"])
    if device is None:
        for sim in initial["sims"].values():
            if sim["lineId"] == line["id"] and sim["status"] == "inactive":
                device = device_with_sim(initial, sim["id"])
    if device is None:
        raise LookupError(f"No phone holds a SIM of {line['id']} in the seed.")
    return final["devices"][device["id"]]


def new_cases(final: State, initial: State, customer_id: str | None = None) -> list[Case]:
    """Cases opened during the rollout (for one customer, when given)."""
    return [
        final["cases"][i]
        for i in w.grade.new_ids(final, initial, "cases")
        if customer_id is None or final["cases"][i]["customerId"] == customer_id
    ]


def new_credits(final: State, initial: State) -> list[Credit]:
    """Credits issued during the rollout."""
    return [final["credits"][i] for i in w.grade.new_ids(final, initial, "credits")]


def changed_elsewhere(
    final: State, initial: State, allowed: Iterable[tuple[str, str]] = ()
) -> list[str]:
    """Account records changed, added or removed, except the ``(collection, id)`` pairs allowed."""
    ok = set(allowed)
    found = []
    for collection in ACCOUNT_RECORDS:
        for record_id in w.grade.changed_ids(final, initial, collection):
            if (collection, record_id) not in ok:
                found.append(f"{collection}/{record_id}")
    return found


def resolved_case(final: State, initial: State, customer_id: str | None = None) -> silo.Check:
    """The contact is recorded in a case of the customer that was resolved (or escalated).

    Required: the case is a write the agent makes, so the verifier checks it (an agent that
    opens a case for someone else, or leaves it open, has not recorded this contact).
    """
    cases = new_cases(final, initial, customer_id)
    closed = [c["id"] for c in cases if c["status"] in ("resolved", "escalated")]
    return silo.check(
        "the contact is recorded in a closed case", bool(closed), ", ".join(closed) or "none"
    )


def by_staff(final: State, initial: State, ctx: silo.VerifierContext) -> silo.Check:
    """Every change was made as the staff member the instruction names ("staff id STF-001")."""
    found = _STAFF.search(ctx.task.instruction)
    if found is None:
        return silo.check("the instruction names the acting staff member", False)
    return w.grade.written_by(final, initial, found.group(1))


def verified_case(final: State, initial: State, customer_id: str) -> silo.Check:
    """The caller was verified on a case of theirs opened in the rollout."""
    verified = [c["id"] for c in new_cases(final, initial, customer_id) if c["verifiedBy"]]
    return silo.check("the caller was verified on their case", bool(verified), ", ".join(verified))


def told_any(ctx: silo.VerifierContext, *texts: str) -> bool:
    """Some message to the customer contains one of ``texts`` (see ``told``)."""
    return any(w.grade.told(ctx, text) for text in texts)
