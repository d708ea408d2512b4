"""An eval's instances grouped by family and split: rates and intervals per family.

``summary.json``'s ``families`` (and the tables of ``summary.md`` and ``report.html``): one
entry per (family, split) in the order the eval first lists them, with the number of distinct
instances and, per agent, the statistics of every rollout of those instances (the statistics of
a task, pooled over the family's instances; pass@k is the mean over instances).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from ..._family import split_of
from ..._task import Task
from ._records import RolloutRecord
from ._stats import GroupStats, agent_stats

__all__ = ["FamilyGroup", "family_groups"]


@attrs.frozen
class FamilyGroup:
    """One family's instances in one split, and each agent's statistics over them.

    Attributes:
        family: the family id.
        split: ``train`` or ``test``.
        instances: how many distinct instances of it the eval played.
        agents: ``{agent: GroupStats}`` for the agents with finished rollouts of them.
    """

    family: str
    split: str
    instances: int
    agents: dict[str, GroupStats]

    def to_dict(self) -> dict[str, Any]:
        """``{"family", "split", "instances", "agents": {NAME: statistics}}``."""
        return {
            "family": self.family,
            "split": self.split,
            "instances": self.instances,
            "agents": {a: s.to_dict() for a, s in self.agents.items()},
        }


def family_groups(
    tasks: Sequence[Task], records: Sequence[RolloutRecord], agents: Sequence[str]
) -> list[FamilyGroup]:
    """The instances of ``tasks`` grouped by (family, split), with ``records``' statistics."""
    order: dict[tuple[str, str], list[str]] = {}
    for task in tasks:
        split = split_of(task)
        if task.family is not None and split is not None:
            order.setdefault((task.family, split), []).append(task.id)
    if not order:
        return []
    by_task: dict[tuple[str, str], list[RolloutRecord]] = {}
    for record in records:
        by_task.setdefault((record.task_id, record.agent), []).append(record)
    groups = []
    for (family, split), ids in order.items():
        stats = {}
        for agent in agents:
            runs = {i: by_task[(i, agent)] for i in ids if (i, agent) in by_task}
            if runs:
                stats[agent] = agent_stats(runs)
        groups.append(FamilyGroup(family, split, len(ids), stats))
    return groups
