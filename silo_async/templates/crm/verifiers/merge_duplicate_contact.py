"""VER-006: Tessaline's duplicate contact is merged into the oldest record, references moved."""

from __future__ import annotations

import silo_async as silo
from silo_async.world import every
from silo_async.world.grade import modified_ids

from ..state import State, account_named, contact_references, duplicate_contact_groups

ACCOUNT = "Tessaline Pharma"


@silo.verifier(id="VER-006", task_id="TASK-006")
def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The oldest record survives; the copy is marked merged; nothing points at the copy."""
    account = account_named(initial, ACCOUNT)
    group = next(g for g in duplicate_contact_groups(initial) if g[0]["accountId"] == account["id"])
    keep = group[0]
    copies = [c["id"] for c in group[1:]]
    survivor = final["contacts"][keep["id"]]
    refs_before = sorted({r for c in copies for r in contact_references(initial, c)})
    refs_after = sorted({r for c in copies for r in contact_references(final, c)})
    now_on_survivor = set(contact_references(final, keep["id"]))
    others = [i for i in modified_ids(final, initial, "contacts") if i not in {keep["id"], *copies}]
    return [
        silo.check("the oldest record is still active", survivor["status"] == "active"),
        silo.check(
            "the newer copy is marked merged into the oldest record",
            all(
                final["contacts"][c]["status"] == "merged"
                and final["contacts"][c]["mergedIntoId"] == keep["id"]
                for c in copies
            ),
            ", ".join(copies),
        ),
        silo.check(
            "nothing refers to the copy any more",
            not refs_after,
            ", ".join(refs_after) or "no references",
        ),
        every(
            "everything that referred to the copy now refers to the oldest record",
            set(refs_before) & now_on_survivor,
            refs_before,
        ),
        silo.check(
            "no contact record was removed",
            set(initial["contacts"]) <= set(final["contacts"]),
        ),
        silo.optional(
            "the oldest record kept its name and email",
            (survivor["firstName"], survivor["lastName"], survivor["email"])
            == (keep["firstName"], keep["lastName"], keep["email"]),
        ),
        silo.optional(
            "blank fields of the oldest record were filled from the copy",
            all(survivor[f] for f in ("title", "phone")),
        ),
        silo.optional("no other contact changed", not others, ", ".join(others)),
    ]
