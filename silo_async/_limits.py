"""Limits: the budgets of one rollout, checked once and applied at the rollout's boundary."""

from __future__ import annotations

import math
from typing import Any

import attrs

__all__ = ["Limits"]


def _count(name: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        allowed = " (or None)" if optional else ""
        raise ValueError(f"{name} must be an integer >= 0{allowed}, got {value!r}.")


@attrs.frozen
class Limits:
    """What one rollout may spend before it is stopped.

    Attributes:
        max_tool_calls: calls executed before the next one ends the rollout.
        timeout: seconds from the start (``None``: no limit).
        token_limit: recorded input + output tokens that end the rollout (``None``: no limit).

    Raises:
        ValueError: a limit that is not a number of the right kind.
    """

    max_tool_calls: int = 100
    timeout: float | None = 120.0
    token_limit: int | None = None

    def __attrs_post_init__(self) -> None:
        _count("max_tool_calls", self.max_tool_calls, optional=False)
        _count("token_limit", self.token_limit, optional=True)
        timeout = self.timeout
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
        ):
            raise ValueError(f"timeout must be a number of seconds > 0 (or None), got {timeout!r}.")

    @property
    def seconds(self) -> float:
        """The time limit in seconds (``inf`` when there is none)."""
        return math.inf if self.timeout is None else float(self.timeout)

    @property
    def timeout_ms(self) -> int | None:
        """The time limit in whole milliseconds, as recorded (``None``: no limit)."""
        seconds = self.seconds
        return None if math.isinf(seconds) else round(seconds * 1000)

    def config(self) -> dict[str, Any]:
        """The limits as recorded in ``run_start`` and ``run.json``."""
        return {
            "maxToolCalls": self.max_tool_calls,
            "timeoutMs": self.timeout_ms,
            "tokenLimit": self.token_limit,
        }
