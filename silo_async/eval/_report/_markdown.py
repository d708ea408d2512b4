"""``summary.md``: an eval's summary for a pull request or a terminal.

Sections: a header line (and, for a partial eval, what was compared), the agents ranked, an
eval of task families' instances the pass rate of each family and split, the side-by-side table
(best cell in bold), with ``--baseline`` each agent's pass rate without and
with faults, and — when models recorded tokens — tokens (and cost) per task and agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..._faults import Faults
from ..._task import Task
from ._cells import cost_text, count, early_text, invalid_text, robustness_rows, tokens_text
from ._compare import Comparison
from ._families import FamilyGroup
from ._robustness import AgentRobustness
from ._stats import GroupStats

__all__ = ["SummaryView", "render_markdown"]


class SummaryView(Protocol):
    """What ``summary.md`` reads of an eval's summary (:class:`~silo_async.EvalSummary` is one).

    The renderer knows this much of a summary and no more, so the summary may render itself
    (``EvalSummary.markdown``) without the two modules knowing each other.
    """

    @property
    def eval_id(self) -> str: ...  # pragma: no cover
    @property
    def environment(self) -> str: ...  # pragma: no cover
    @property
    def tasks(self) -> Sequence[Task]: ...  # pragma: no cover
    @property
    def agents(self) -> Sequence[str]: ...  # pragma: no cover
    @property
    def config(self) -> Mapping[str, Any]: ...  # pragma: no cover
    @property
    def planned(self) -> int: ...  # pragma: no cover
    @property
    def finished(self) -> int: ...  # pragma: no cover
    @property
    def comparison(self) -> Comparison: ...  # pragma: no cover
    @property
    def compared(self) -> Mapping[str, int]: ...  # pragma: no cover
    @property
    def complete(self) -> bool: ...  # pragma: no cover
    @property
    def cancelled(self) -> bool: ...  # pragma: no cover
    @property
    def wall_ms(self) -> float: ...  # pragma: no cover
    @property
    def fault_plan(self) -> Faults | None: ...  # pragma: no cover
    @property
    def robustness(self) -> Sequence[AgentRobustness] | None: ...  # pragma: no cover
    @property
    def families(self) -> Sequence[FamilyGroup]: ...  # pragma: no cover
    @property
    def has_tokens(self) -> bool: ...  # pragma: no cover
    @property
    def has_cost(self) -> bool: ...  # pragma: no cover
    def faults_text(self) -> str: ...  # pragma: no cover
    def partial_note(self) -> str | None: ...  # pragma: no cover
    def warnings(self) -> list[str]: ...  # pragma: no cover
    def baseline_plan(self) -> dict[str, Any] | None: ...  # pragma: no cover


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _rate(s: GroupStats) -> str:
    if s.pass_rate is None:
        return f"{s.passes}/{s.valid} = —"
    ci = s.pass_rate_ci
    band = f" [{ci.low:.2f}, {ci.high:.2f}]" if ci else ""
    return f"{s.passes}/{s.valid} = {s.pass_rate:.2f}{band}"


def _reward(s: GroupStats) -> str:
    if s.mean_reward is None:
        return "—"
    ci = s.reward_ci
    band = f" [{ci.low:.2f}, {ci.high:.2f}]" if ci else ""
    return f"{s.mean_reward:.2f}{band}"


def _k(values: dict[int, float], k: int) -> str:
    return f"{values[k]:.2f}" if k in values else "—"


def _kmax(values: dict[int, float]) -> str:
    if not values:
        return "—"
    k = max(values)
    return f"{values[k]:.2f} (k={k})"


def _header(summary: SummaryView) -> list[str]:
    state = "complete" if summary.complete else "cancelled" if summary.cancelled else "partial"
    note = summary.partial_note()
    runs = summary.config.get("runs")
    return [
        f"# Eval {summary.eval_id}",
        "",
        f"Environment **{summary.environment}** · {count(len(summary.tasks), 'task')} · "
        f"{count(len(summary.agents), 'agent')} · {runs} {'run' if runs == 1 else 'runs'} each · "
        f"{summary.finished}/{summary.planned} rollouts ({state}) · "
        f"{summary.wall_ms / 1000:.1f} s"
        + (f" · {_md(summary.faults_text())}" if summary.fault_plan is not None else ""),
        "",
        *([f"> **{note}**", ""] if note else []),
        *[line for warning in summary.warnings() for line in (f"> **{_md(warning)}**", "")],
    ]


def _agents(summary: SummaryView) -> list[str]:
    c = summary.comparison
    extra = (["tokens (mean in / out, total)"] if summary.has_tokens else []) + (
        ["cost"] if summary.has_cost else []
    )
    head = "| rank | agent | pass rate (95% Wilson) | mean reward (95% t) | pass@1 | "
    head += "pass^k (k=max) | invalid | faults | ended early | calls/run |"
    lines = ["## Agents", "", head + "".join(f" {e} |" for e in extra)]
    lines.append("|---:|---|---|---|---:|---:|---|---:|---|---:|" + "---|" * len(extra))
    for rank, a in enumerate(c.ranking, start=1):
        s = c.overall[a]
        cells = [tokens_text(s)] if summary.has_tokens else []
        cells += [cost_text(s)] if summary.has_cost else []
        lines.append(
            f"| {rank} | {_md(a)} | {_rate(s)} | {_reward(s)} | {_k(s.pass_at_k, 1)} | "
            f"{_kmax(s.pass_hat_k)} | {invalid_text(s)} | {s.faults} | {early_text(s) or '—'} | "
            f"{s.mean_tool_calls:.1f} |" + "".join(f" {x} |" for x in cells)
        )
    return lines


def _cell(cell: GroupStats | None, best: bool) -> str:
    if cell is None:
        return "—"
    reward = "—" if cell.mean_reward is None else f"{cell.mean_reward:.2f}"
    text = f"{cell.passes}/{cell.valid} · {reward}"
    if cell.invalid:
        text += f" · {cell.invalid} invalid"
    if cell.faults:
        text += f" · {cell.faults} faults"
    if cell.ended_early:
        text += f" · {early_text(cell, sep=' · ')}"
    return f"**{text}**" if best else text


def _side_by_side(summary: SummaryView) -> list[str]:
    c = summary.comparison
    best = "; best in bold" if len(c.agents) > 1 else ""
    lines = [f"## Side by side (pass rate · mean reward{best})", ""]
    lines.append("| task | " + " | ".join(_md(a) for a in c.agents) + " |")
    lines.append("|---|" + "---|" * len(c.agents))
    for row in c.rows:
        cells = [_cell(row.cells.get(a), row.best == a) for a in c.agents]
        shown = _md(row.task_id) if row.task_id in summary.compared else f"{_md(row.task_id)} *"
        lines.append(f"| {shown} | " + " | ".join(cells) + " |")
    if len(summary.compared) < len(c.rows):
        lines += ["", "\\* not compared: not every agent finished a rollout of this task."]
    return lines


def _tokens(summary: SummaryView) -> list[str]:
    c = summary.comparison
    title = "## Tokens (mean input / output per rollout, total"
    title += "; cost by the price table)" if summary.has_cost else ")"
    lines = [title, "", "| task | " + " | ".join(_md(a) for a in c.agents) + " |"]
    lines.append("|---|" + "---|" * len(c.agents))
    for row in c.rows:
        cells = []
        for a in c.agents:
            s = row.cells.get(a)
            text = "—" if s is None else tokens_text(s)
            if s is not None and summary.has_cost:
                text += f" · cost {cost_text(s)}"
            cells.append(text)
        lines.append(f"| {_md(row.task_id)} | " + " | ".join(cells) + " |")
    return lines


def _robustness(summary: SummaryView) -> list[str]:
    plan = summary.baseline_plan() or {}
    head, *rows = robustness_rows(summary.robustness)
    return [
        "## Robustness (pass rate without and with faults)",
        "",
        f"Faults `{plan.get('spec')}`, seed {plan.get('seed')}; recovered: injected faults "
        "after which the same tool later succeeded.",
        "",
        "| " + " | ".join(head) + " |",
        "|---|---:|---:|---:|---:|---:|",
        *("| " + " | ".join([_md(row[0]), *row[1:]]) + " |" for row in rows),
    ]


def _families(summary: SummaryView) -> list[str]:
    agents = summary.agents
    lines = [
        "## Task families (pass rate, 95% Wilson · mean reward)",
        "",
        "| family | split | instances | " + " | ".join(_md(a) for a in agents) + " |",
        "|---|---|---:|" + "---|" * len(agents),
    ]
    for group in summary.families:
        cells = [
            "—" if (s := group.agents.get(a)) is None else f"{_rate(s)} · {_reward(s)}"
            for a in agents
        ]
        head = f"| {_md(group.family)} | {group.split} | {group.instances} | "
        lines.append(head + " | ".join(cells) + " |")
    return lines


def render_markdown(summary: SummaryView) -> str:
    """The whole ``summary.md``."""
    lines = [*_header(summary), *_agents(summary)]
    if summary.families:
        lines += ["", *_families(summary)]
    lines += ["", *_side_by_side(summary)]
    if summary.robustness is not None:
        lines += ["", *_robustness(summary)]
    if summary.has_tokens:
        lines += ["", *_tokens(summary)]
    lines.append("")
    return "\n".join(lines)
