"""One statistics cell as text, shared by ``summary.md`` and the CLI's tables."""

from __future__ import annotations

from collections.abc import Sequence

from ._robustness import AgentRobustness
from ._stats import GroupStats

__all__ = [
    "REASON_LETTERS",
    "cost_text",
    "count",
    "early_text",
    "invalid_text",
    "rate_text",
    "robustness_rows",
    "tokens_text",
]


#: One-letter marks for the reasons a rollout ended early, for narrow side-by-side cells.
REASON_LETTERS = {
    "agent_error": "E",
    "timeout": "T",
    "max_tool_calls": "L",
    "max_tokens": "K",
    "cancelled": "C",
}


def count(n: int, noun: str) -> str:
    """``1 task``, ``2 tasks``: a number and its noun, singular or plural."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def early_text(stats: GroupStats, *, short: bool = False, sep: str = ", ") -> str:
    """The rollouts that ended early, e.g. ``20 agent_error, 3 timeout`` (``20E 3T`` if short).

    Empty when every rollout completed. A reason without a letter is spelled out even when
    ``short``.
    """
    parts = []
    for reason, n in stats.ended_early.items():
        letter = REASON_LETTERS.get(reason) if short else None
        parts.append(f"{n}{letter}" if letter else f"{n} {reason}")
    return (" " if short else sep).join(parts)


def tokens_text(stats: GroupStats) -> str:
    """Mean tokens per rollout and the total, e.g. ``812 in / 40 out, 17,040 total``."""
    total = stats.total_input_tokens + stats.total_output_tokens
    return (
        f"{stats.mean_input_tokens:,.0f} in / {stats.mean_output_tokens:,.0f} out, {total:,} total"
    )


def cost_text(stats: GroupStats) -> str:
    """The cost of a group and per rollout (``—`` without a price table)."""
    if stats.total_cost is None:
        return "—"
    text = f"{stats.total_cost:.4f} ({stats.mean_cost or 0.0:.4f}/run)"
    if stats.unpriced_tokens:
        text += f", {stats.unpriced_tokens:,} tokens unpriced"
    return text


def invalid_text(stats: GroupStats) -> str:
    """The invalid rollouts and why, e.g. ``3 (2 model_error, 1 environment_fault)``."""
    if not stats.invalid:
        return "0"
    why = ", ".join(f"{n} {reason}" for reason, n in stats.invalid_reasons.items() if n)
    return f"{stats.invalid} ({why})"


def rate_text(rate: float | None) -> str:
    """A pass rate as a percentage, ``—`` when there is none (no valid rollout)."""
    return "—" if rate is None else f"{rate * 100:.0f}%"


def robustness_rows(agents: Sequence[AgentRobustness] | None) -> list[list[str]]:
    """The robustness table (``--baseline``): a header, then one row per agent."""
    rows = [["agent", "without faults", "with faults", "drop", "injected", "recovered"]]
    for a in agents or ():
        off, on, drop = a.without_faults, a.with_faults, a.drop
        rows.append(
            [
                a.agent,
                f"{rate_text(off.pass_rate)} ({off.passes}/{off.valid})",
                f"{rate_text(on.pass_rate)} ({on.passes}/{on.valid})",
                "—" if drop is None else f"{drop * 100:.0f} points",
                str(a.injected),
                "—" if not a.injected else f"{a.recovered} ({rate_text(a.recovery_rate)})",
            ]
        )
    return rows
