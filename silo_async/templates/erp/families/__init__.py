"""The ERP task family registry: exactly the families listed here exist.

Each module defines one :class:`silo_async.TaskFamily` (``_common`` holds what they share); its
instances ``FAMILY#SEED`` are tasks of this environment
(``silo-async task sample --env <name> --family move-stock``).
"""

from __future__ import annotations

import silo_async as silo

from . import (
    chase_overdue,
    credit_limit,
    file_expense,
    move_stock,
    owed_question,
    record_count,
    reorder_levels,
    request_goods,
)

__all__ = ["families"]

families: list[silo.TaskFamily] = [
    reorder_levels.family,
    move_stock.family,
    record_count.family,
    chase_overdue.family,
    credit_limit.family,
    file_expense.family,
    request_goods.family,
    owed_question.family,
]
