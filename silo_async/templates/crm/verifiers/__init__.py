"""The CRM verifier registry: exactly the verifiers listed here exist."""

from __future__ import annotations

import silo_async as silo

from . import (
    book_won_deal,
    convert_existing_customer_lead,
    convert_new_lead,
    longest_in_stage,
    merge_duplicate_contact,
    past_due_deals,
    record_lost_deal,
    rehome_departed_rep,
    stale_deal_followups,
    weakest_active_rep,
    weighted_pipeline,
)

__all__ = ["verifiers"]

verifiers: list[silo.Verifier] = [
    convert_new_lead.verify,
    convert_existing_customer_lead.verify,
    rehome_departed_rep.verify,
    book_won_deal.verify,
    record_lost_deal.verify,
    merge_duplicate_contact.verify,
    stale_deal_followups.verify,
    weighted_pipeline.verify,
    weakest_active_rep.verify,
    past_due_deals.verify,
    longest_in_stage.verify,
]
