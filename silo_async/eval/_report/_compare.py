"""The side-by-side comparison of agents, and the equal-work subset a partial eval compares.

Pure functions of rollout records (see :mod:`._stats` for the statistics of one group).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from ._records import RolloutRecord
from ._stats import GroupStats, agent_stats, task_agent_stats

__all__ = ["Comparison", "ComparisonRow", "compare", "equal_work"]


@attrs.frozen
class ComparisonRow:
    """One task of the side-by-side table.

    Attributes:
        task_id: the task.
        cells: ``{agent: GroupStats}`` (agents without rollouts on this task are absent).
        best: the agent whose cell is marked, or None when the top is tied or empty.
    """

    task_id: str
    cells: dict[str, GroupStats]
    best: str | None


@attrs.frozen
class Comparison:
    """The side-by-side table: one column per agent, one row per task.

    Attributes:
        agents: column order (the labels as given).
        rows: one row per task, in task order.
        overall: ``{agent: GroupStats}`` over all tasks.
        overall_best: the better agent over all tasks (None on a tie).
        ranking: agents from best to worst by pass rate, then mean reward, then label.
    """

    agents: list[str]
    rows: list[ComparisonRow]
    overall: dict[str, GroupStats]
    overall_best: str | None
    ranking: list[str]


def _best(cells: Mapping[str, GroupStats]) -> str | None:
    scored = sorted(
        ((s.sort_key(), agent) for agent, s in cells.items() if s.rated),
        key=lambda item: item[0],
        reverse=True,
    )
    if not scored or (len(scored) > 1 and scored[0][0] == scored[1][0]):
        return None
    return scored[0][1]


def equal_work(
    records: Sequence[RolloutRecord], tasks: Sequence[str], agents: Sequence[str]
) -> tuple[list[RolloutRecord], dict[str, int]]:
    """The rollouts a fair comparison may use, and the runs per agent of each task it covers.

    A task is compared when every agent finished at least one rollout of it; each agent then
    contributes its ``m`` lowest-numbered runs, ``m`` being the fewest any agent finished on
    that task. Of a complete eval nothing is left out; of a cancelled one, no agent is ranked
    on work another agent never did.

    Returns:
        The kept records (in the order given) and ``{task_id: m}`` for the compared tasks, in
        task order.
    """
    by_pair: dict[tuple[str, str], list[RolloutRecord]] = {}
    for r in records:
        by_pair.setdefault((r.task_id, r.agent), []).append(r)
    runs: dict[str, int] = {}
    kept: set[int] = set()
    for t in tasks:
        m = min((len(by_pair.get((t, a), [])) for a in agents), default=0)
        if m == 0:
            continue
        runs[t] = m
        for a in agents:
            kept.update(id(r) for r in sorted(by_pair[(t, a)], key=lambda r: r.run)[:m])
    return [r for r in records if id(r) in kept], runs


def compare(
    records: Sequence[RolloutRecord],
    tasks: Sequence[str],
    agents: Sequence[str],
    ks: Iterable[int] | None = None,
    compared: Iterable[str] | None = None,
) -> Comparison:
    """Build the side-by-side comparison of ``agents`` over ``tasks``.

    A cell is marked best when its agent has the strictly highest pass rate (ties broken by
    mean reward) on that row; with one agent nothing is marked (it is better than no one). An
    agent without valid rollouts has no rate and ranks last.

    Args:
        records: the rollouts (see :func:`equal_work` for a fair subset of a partial eval).
        tasks: the rows, in order.
        agents: the columns, in order.
        ks: the k values of pass@k / pass^k.
        compared: the tasks that count: only they get a best cell and enter the overall
            statistics and ranking (default: every task); other rows still show their cells.
    """
    wanted = None if ks is None else list(ks)
    counted = set(tasks if compared is None else compared)
    per_pair = task_agent_stats(records, wanted)
    rows = [
        ComparisonRow(
            task_id=t,
            cells={a: per_pair[(t, a)] for a in agents if (t, a) in per_pair},
            best=None,
        )
        for t in tasks
    ]
    marked = len(agents) > 1
    rows = [
        attrs.evolve(row, best=_best(row.cells)) if marked and row.task_id in counted else row
        for row in rows
    ]
    by_agent: dict[str, dict[str, list[RolloutRecord]]] = {a: {} for a in agents}
    for r in records:
        if r.task_id in counted:
            by_agent.setdefault(r.agent, {}).setdefault(r.task_id, []).append(r)
    overall = {a: agent_stats(by_agent[a], wanted) for a in agents}
    keys = {a: overall[a].sort_key() for a in agents}
    ranking = sorted(agents, key=lambda a: (-keys[a][0], -keys[a][1], a))
    return Comparison(
        agents=list(agents),
        rows=rows,
        overall=overall,
        overall_best=_best(overall) if marked else None,
        ranking=ranking,
    )
