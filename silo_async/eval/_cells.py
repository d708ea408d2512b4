"""One statistics cell as text, shared by ``summary.md`` and the CLI's side-by-side table."""

from __future__ import annotations

from ._stats import GroupStats

__all__ = ["REASON_LETTERS", "cost_text", "early_text", "tokens_text"]


#: One-letter marks for the reasons a rollout ended early, for narrow side-by-side cells.
REASON_LETTERS = {
    "agent_error": "E",
    "timeout": "T",
    "max_tool_calls": "L",
    "max_tokens": "K",
    "cancelled": "C",
}


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
