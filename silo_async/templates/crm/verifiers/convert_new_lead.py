"""VER-001: the Harrowgate Soil Labs lead became a new account, contact and open deal."""

from __future__ import annotations

import silo_async as silo
from silo_async.world.grade import mentions, modified_ids, new_records, written_by

from ..state import State, lead_named, normalise_email
from .conversion import converted

LEAD = "Tomasz Wierzbicki"
AMOUNT = 48000
CLOSE = "2026-12-15"

#: Who the task says acts: every change must be theirs.
ACTOR = "USR-003"


@silo.verifier(id="VER-001", task_id="TASK-001")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """A qualified lead from a new company is converted at the agreed amount and date."""
    start = lead_named(initial, LEAD)
    lead, account, contact, opp = converted(final, start["id"])
    new_accounts = {a["id"] for a in new_records(final, initial, "accounts")}
    return [
        written_by(final, initial, ACTOR),
        silo.check("lead is converted", lead["status"] == "converted", lead["status"]),
        silo.check("the lead links to a converted opportunity", opp is not None),
        silo.check(
            f"opportunity amount is {AMOUNT}",
            opp is not None and opp["amount"] == AMOUNT,
            str(opp and opp["amount"]),
        ),
        silo.check(
            f"opportunity closes {CLOSE}",
            opp is not None and opp["expectedCloseDate"] == CLOSE,
            str(opp and opp["expectedCloseDate"]),
        ),
        silo.check(
            "opportunity records the lead as its source",
            opp is not None and opp["sourceLeadId"] == start["id"],
        ),
        silo.check("opportunity is open", opp is not None and opp["status"] == "open"),
        silo.check(
            "a new account named after the company was created",
            account is not None
            and account["id"] in new_accounts
            and mentions(account["name"], start["company"]),
            str(account and account["name"]),
        ),
        silo.check(
            "the contact is the lead's person at that account",
            contact is not None
            and account is not None
            and contact["accountId"] == account["id"]
            and normalise_email(contact["email"]) == normalise_email(start["email"]),
        ),
        silo.check(
            "the opportunity belongs to that account",
            opp is not None and account is not None and opp["accountId"] == account["id"],
        ),
        silo.optional(
            "the lead's owner owns the opportunity",
            opp is not None and opp["ownerId"] == start["ownerId"],
        ),
        silo.optional("no existing account changed", not modified_ids(final, initial, "accounts")),
    ]
