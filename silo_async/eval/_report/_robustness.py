"""Robustness: each agent's pass rate without faults and with them (``eval --baseline``).

An eval run with ``--faults SPEC --baseline`` runs its plan twice: under the fault plan, and
again without faults (the baseline). Per agent, this module sets the two side by side: both pass
rates (valid rollouts only, as every rate), the drop between them, and how often the agent
recovered from an injected fault (the same tool later succeeded). Pure functions of records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from ._records import RolloutRecord
from ._stats import GroupStats, agent_stats

__all__ = ["AgentRobustness", "robustness"]


def _side(stats: GroupStats) -> dict[str, Any]:
    """The statistics a robustness row shows of one side (the rate as ``summary.json`` has it)."""
    full = stats.to_dict()
    keys = ("runs", "valid", "invalid", "passes", "passRate", "passRateCI", "meanReward")
    return {k: full[k] for k in keys}


@attrs.frozen
class AgentRobustness:
    """One agent with and without faults.

    Attributes:
        agent: the agent's label.
        without_faults: its statistics over the baseline rollouts (no fault injected).
        with_faults: its statistics over the rollouts that ran under the fault plan.
    """

    agent: str
    without_faults: GroupStats
    with_faults: GroupStats

    @property
    def drop(self) -> float | None:
        """How much the pass rate fell under faults (None when a side has no rate)."""
        before, after = self.without_faults.pass_rate, self.with_faults.pass_rate
        return None if before is None or after is None else before - after

    @property
    def injected(self) -> int:
        """Faults injected into the agent's rollouts."""
        return self.with_faults.injected_faults

    @property
    def recovered(self) -> int:
        """Injected faults after which the same tool later succeeded."""
        return self.with_faults.recovered_faults

    @property
    def recovery_rate(self) -> float | None:
        """``recovered / injected`` (None when nothing was injected)."""
        return self.with_faults.recovery_rate

    def to_dict(self) -> dict[str, Any]:
        """``summary.json``'s ``baseline.agents[]`` entry."""
        drop, rate = self.drop, self.recovery_rate
        return {
            "agent": self.agent,
            "withoutFaults": _side(self.without_faults),
            "withFaults": _side(self.with_faults),
            "drop": None if drop is None else round(drop, 4),
            "injectedFaults": self.injected,
            "recoveredFaults": self.recovered,
            "recoveryRate": None if rate is None else round(rate, 4),
        }


def _by_task(records: Iterable[RolloutRecord], agent: str) -> dict[str, list[RolloutRecord]]:
    groups: dict[str, list[RolloutRecord]] = {}
    for r in records:
        if r.agent == agent:
            groups.setdefault(r.task_id, []).append(r)
    return groups


def robustness(
    faulted: Sequence[RolloutRecord],
    baseline: Sequence[RolloutRecord],
    agents: Sequence[str],
    ks: Iterable[int] | None = None,
) -> list[AgentRobustness]:
    """Each agent of ``agents`` (in order) with and without faults.

    Args:
        faulted: the rollouts that ran under the fault plan.
        baseline: the same plan's rollouts without faults.
        agents: the agent labels, in the eval's order.
        ks: the k values of pass@k / pass^k.
    """
    wanted = None if ks is None else list(ks)
    return [
        AgentRobustness(
            agent,
            agent_stats(_by_task(baseline, agent), wanted),
            agent_stats(_by_task(faulted, agent), wanted),
        )
        for agent in agents
    ]
