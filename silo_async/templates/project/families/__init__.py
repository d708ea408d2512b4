"""The project tracker's task family registry: exactly the families listed here exist.

Each module defines one :class:`silo_async.TaskFamily` (``_common`` holds what they share); its
instances ``FAMILY#SEED`` are tasks of this environment
(``silo-async task sample --env <name> --family file-bug``).
"""

from __future__ import annotations

import silo_async as silo

from . import block_item, carry_over, file_bug, hand_over_work, points_question, push_overdue

__all__ = ["families"]

families: list[silo.TaskFamily] = [
    file_bug.family,
    push_overdue.family,
    block_item.family,
    carry_over.family,
    hand_over_work.family,
    points_question.family,
]
