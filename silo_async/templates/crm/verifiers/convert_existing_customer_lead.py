"""VER-002: a lead from an existing customer joins that account instead of duplicating it."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.grade import modified_ids, new_records, written_by

from ..state import State, account_named, lead_named
from .conversion import converted

LEAD = "Felix Amadi"
ACCOUNT = "Corvane Diagnostics"
AMOUNT = 65000
CLOSE = "2026-11-30"

#: Who the task says acts: every change must be theirs.
ACTOR = "USR-007"


def _primaries(state: State, account_id: str) -> list[str]:
    """Ids of the account's contacts marked primary."""
    return [
        c["id"]
        for c in state["contacts"].values()
        if c["accountId"] == account_id and c["isPrimary"]
    ]


@silo.verifier(id="VER-002", task_id="TASK-002")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The lead is converted onto the existing account, owned by that account's owner."""
    start = lead_named(initial, LEAD)
    customer = account_named(initial, ACCOUNT)
    lead, _, contact, opp = converted(final, start["id"])
    new_accounts = [a["id"] for a in new_records(final, initial, "accounts")]
    other_opps = modified_ids(final, initial, "opportunities")
    return [
        written_by(final, initial, ACTOR),
        silo.check("lead is converted", lead["status"] == "converted", lead["status"]),
        silo.check(
            "no new account was created",
            not new_accounts,
            f"new accounts: {', '.join(new_accounts) or 'none'}",
        ),
        silo.check(
            f"the opportunity is on the existing {ACCOUNT} account",
            opp is not None and opp["accountId"] == customer["id"],
            str(opp and opp["accountId"]),
        ),
        silo.check(
            "the account's owner owns the opportunity",
            opp is not None and opp["ownerId"] == customer["ownerId"],
            str(opp and opp["ownerId"]),
        ),
        silo.check(f"opportunity amount is {AMOUNT}", opp is not None and opp["amount"] == AMOUNT),
        silo.check(
            f"opportunity closes {CLOSE}",
            opp is not None and opp["expectedCloseDate"] == CLOSE,
        ),
        silo.check(
            "the lead's contact belongs to the existing account",
            contact is not None and contact["accountId"] == customer["id"],
        ),
        silo.optional("opportunity is open", opp is not None and opp["status"] == "open"),
        silo.optional(
            "opportunity records the lead as its source",
            opp is not None and opp["sourceLeadId"] == start["id"],
        ),
        silo.optional(
            "the account's primary contact is unchanged",
            _primaries(initial, customer["id"]) == _primaries(final, customer["id"]),
        ),
        silo.optional("no existing opportunity changed", not other_opps, ", ".join(other_opps)),
    ]
