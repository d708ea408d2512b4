"""Warnings above an eval's tables when its numbers rest on too little evidence.

Every rate counts valid rollouts only, so an agent whose rollouts on a task were all invalid (an
environment fault, a model API that failed) shows no failure there: ``27/27 1.00`` may hide two
tasks that never produced a grade. These warnings say so, one line per agent, above the table
of every report (the terminal, ``summary.md``, ``report.html``) and in ``summary.json``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._compare import Comparison
from ._stats import GroupStats

__all__ = ["INVALID_SHARE", "validity_warnings"]

#: An agent with more than this share of invalid rollouts is warned about, even when every task
#: kept some valid ones.
INVALID_SHARE = 0.1
#: Task ids named in a warning before "and N more".
_NAMED = 5


def _reasons(stats: GroupStats) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in stats.invalid_reasons.items() if n)


def _tasks(ids: list[str]) -> str:
    named = ", ".join(ids[:_NAMED])
    return named if len(ids) <= _NAMED else f"{named} and {len(ids) - _NAMED} more"


def _agent_warning(agent: str, overall: GroupStats, empty: list[str], tasks: int) -> str | None:
    share = overall.invalid / overall.runs if overall.runs else 0.0
    if not empty and share <= INVALID_SHARE:
        return None
    invalid = (
        f"{overall.invalid} of {overall.runs} rollouts ({share:.0%}) are invalid "
        f"({_reasons(overall)}) and in none of its numbers"
    )
    if not empty:
        return f"Warning: {agent}: {invalid}."
    of = f"{len(empty)} of {tasks} tasks"
    if len(empty) == tasks:
        return f"Warning: {agent} has no valid rollout on any task: {invalid}; it has no score."
    return (
        f"Warning: {agent} has no valid rollout on {of} ({_tasks(empty)}): its numbers cover "
        f"only the other {tasks - len(empty)}; {invalid}."
    )


def validity_warnings(comparison: Comparison, compared: Iterable[str]) -> list[str]:
    """One line per agent whose numbers rest on too little evidence (see the module doc).

    Args:
        comparison: the eval's comparison.
        compared: the tasks its numbers cover (a partial eval compares equal work only).
    """
    counted = set(compared)
    rows = [row for row in comparison.rows if row.task_id in counted]
    lines = []
    for agent in comparison.agents:
        cells = [(row.task_id, row.cells.get(agent)) for row in rows]
        empty = [task for task, s in cells if s is not None and s.runs and not s.valid]
        line = _agent_warning(agent, comparison.overall[agent], empty, len(rows))
        if line is not None:
            lines.append(line)
    return lines
