"""What a lead conversion left behind, as the conversion verifiers (VER-001, VER-002) read it."""

from __future__ import annotations

from ..state import Account, Contact, Lead, Opportunity, State

__all__ = ["converted"]


def converted(
    state: State, lead_id: str
) -> tuple[Lead, Account | None, Contact | None, Opportunity | None]:
    """Lead ``lead_id`` and the account, contact and opportunity its conversion points at.

    Each is None where the lead points at nothing (it was not converted) or at a record that
    does not exist.
    """
    lead = state["leads"][lead_id]
    return (
        lead,
        state["accounts"].get(lead["convertedAccountId"] or ""),
        state["contacts"].get(lead["convertedContactId"] or ""),
        state["opportunities"].get(lead["convertedOpportunityId"] or ""),
    )
