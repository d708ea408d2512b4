"""What ``silo-async eval`` prints: the agents ranked, task families, the side-by-side table.

Pure functions of an :class:`~silo_async.eval.EvalSummary`, tested without a terminal.
"""

from __future__ import annotations

from pathlib import Path

from ..eval import EvalSummary
from ..eval._report._cells import (
    REASON_LETTERS,
    cost_text,
    early_text,
    invalid_text,
    robustness_rows,
    tokens_text,
)
from ..eval._report._stats import GroupStats
from ._report import aligned

__all__ = ["rel", "summary_text"]


def _cell(s: GroupStats | None, best: bool) -> str:
    if s is None:
        return "—"
    reward = "—" if s.mean_reward is None else f"{s.mean_reward:.2f}"
    text = f"{s.passes}/{s.valid} {reward}"
    invalid = f"{s.invalid}I" if s.invalid else ""
    fault = f"{s.faults}F" if s.faults else ""
    marks = " ".join(m for m in (invalid, fault, early_text(s, short=True)) if m)
    if marks:
        text += f" ({marks})"
    return f"{text} *" if best else text


def _legend(agents: int) -> str:
    letters = ", ".join(f"{letter} = {reason}" for reason, letter in REASON_LETTERS.items())
    better = "* = better agent, " if agents > 1 else ""
    return f"{better}I = invalid (not evidence), F = env faults, {letters}"


def _ci(value: float | None, ci: object) -> str:
    if value is None:
        return "—"
    low, high = getattr(ci, "low", None), getattr(ci, "high", None)
    return f"{value:.2f}" if low is None else f"{value:.2f} [{low:.2f}, {high:.2f}]"


def _agent_row(rank: int, agent: str, s: GroupStats, summary: EvalSummary) -> list[str]:
    k = max(s.pass_hat_k) if s.pass_hat_k else None
    row = [
        str(rank),
        agent,
        f"{s.passes}/{s.valid}",
        _ci(s.pass_rate, s.pass_rate_ci),
        _ci(s.mean_reward, s.reward_ci),
        f"{s.pass_at_k[1]:.2f}" if 1 in s.pass_at_k else "—",
        "—" if k is None else f"{s.pass_hat_k[k]:.2f} (k={k})",
        invalid_text(s),
        str(s.faults),
        early_text(s) or "—",
        f"{s.mean_tool_calls:.1f}",
    ]
    row += [tokens_text(s)] if summary.has_tokens else []
    return row + ([cost_text(s)] if summary.has_cost else [])


def _agents(summary: EvalSummary) -> list[str]:
    head = ["rank", "agent", "passed", "pass rate [95% CI]", "reward [95% CI]", "pass@1"]
    head += ["pass^k", "invalid", "faults", "ended early", "calls/run"]
    head += ["tokens (mean, total)"] if summary.has_tokens else []
    head += ["cost (total, per run)"] if summary.has_cost else []
    c = summary.comparison
    rows = [_agent_row(rank, a, c.overall[a], summary) for rank, a in enumerate(c.ranking, 1)]
    return aligned([head, *rows])


def _families(summary: EvalSummary) -> list[str]:
    """Each family and split's instances: every agent's passes and pass rate with its interval."""
    groups = summary.families
    if not groups:
        return []
    grid = [["family", "split", "instances", *summary.agents]]
    for group in groups:
        cells = []
        for agent in summary.agents:
            s = group.agents.get(agent)
            cells.append(
                "—" if s is None else f"{s.passes}/{s.valid} {_ci(s.pass_rate, s.pass_rate_ci)}"
            )
        grid.append([group.family, group.split, str(group.instances), *cells])
    return ["", "Task families (passed/valid, pass rate [95% CI])", *aligned(grid)]


def _grid(summary: EvalSummary) -> list[str]:
    c = summary.comparison
    grid = [["task", *c.agents]]
    for row in c.rows:
        task = row.task_id if row.task_id in summary.compared else f"{row.task_id} (not compared)"
        grid.append([task, *(_cell(row.cells.get(a), row.best == a) for a in c.agents)])
    grid.append(["all", *(_cell(c.overall[a], c.overall_best == a) for a in c.agents)])
    legend = _legend(len(c.agents))
    return ["", f"Side by side (passed/valid runs, mean reward; {legend})", *aligned(grid)]


def summary_text(summary: EvalSummary, cwd: Path) -> str:
    """The human report: agents ranked, the side-by-side table, and where files are."""
    state = "complete" if summary.complete else "CANCELLED (partial)"
    lines = [
        f"Eval {summary.eval_id} · env {summary.environment} · "
        f"{summary.finished}/{summary.planned} rollouts · {state} · "
        f"{summary.wall_ms / 1000:.1f} s",
        *([summary.faults_text()] if summary.fault_plan is not None else []),
        "",
    ]
    note = summary.partial_note()
    if note is not None:
        lines += [note, ""]
    warnings = summary.warnings()
    if warnings:
        lines += [*warnings, ""]
    if summary.config.get("executor") == "ray":
        lines += [_ray_line(summary), ""]
    lines += [*_agents(summary), *_families(summary), *_grid(summary)]
    plan = summary.baseline_plan()
    if plan is not None:
        title = f"Robustness (--faults {plan['spec']}, seed {plan['seed']}; without vs with)"
        lines += ["", title, *aligned(robustness_rows(summary.robustness))]
    if summary.out_dir is not None:
        out = rel(summary.out_dir, cwd)
        lines += ["", f"Report   {out}/report.html", f"Summary  {out}/summary.json"]
    return "\n".join(lines)


def _ray_line(summary: EvalSummary) -> str:
    config, retries = summary.config, summary.infra_retries
    return (
        f"Ray: {config.get('workers')} workers × {config.get('workerConcurrency')} rollouts · "
        f"started in {summary.executor_start_ms / 1000:.1f} s · "
        f"{retries} {'rollout' if retries == 1 else 'rollouts'} rerun after a worker died"
    )


def rel(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it is inside it, else as given."""
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)
