"""The CRM task family registry: exactly the families listed here exist.

Each module defines one :class:`silo_async.TaskFamily`; its instances ``FAMILY#SEED`` are tasks
of this environment (``silo-async task sample --env <name> --family hand-over-account``).
"""

from __future__ import annotations

import silo_async as silo

from . import (
    chase_stale_deals,
    close_lost_deal,
    hand_over_account,
    pipeline_question,
    win_lead,
)

__all__ = ["families"]

families: list[silo.TaskFamily] = [
    hand_over_account.family,
    close_lost_deal.family,
    chase_stale_deals.family,
    win_lead.family,
    pipeline_question.family,
]
