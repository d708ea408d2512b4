"""Limits: the budgets of one rollout, checked once and applied at the rollout's boundary."""

from __future__ import annotations

import math
from typing import Any

import attrs

__all__ = ["DEFAULT_LIMITS", "Limits", "resolve_limits"]


def _count(name: str, value: object, *, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        allowed = " (or None)" if optional else ""
        raise ValueError(f"{name} must be an integer >= 0{allowed}, got {value!r}.")


@attrs.frozen
class Limits:
    """What one rollout may spend before it is stopped: one value, passed as ``limits=``.

    ``silo.run(env, task, agent, limits=silo.Limits(max_tool_calls=20, timeout=60))`` is the
    same as the keyword form ``silo.run(env, task, agent, max_tool_calls=20, timeout=60)``;
    every function that takes the keywords takes ``limits=`` too (not both at once).

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


#: The limits of a rollout nobody configured (``run``'s defaults).
DEFAULT_LIMITS = Limits()


def resolve_limits(
    limits: Limits | None,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    *,
    defaults: Limits = DEFAULT_LIMITS,
) -> Limits:
    """The one :class:`Limits` of a call that accepts ``limits=`` or the keyword form.

    Keywords left at their defaults beside ``limits=`` are fine; a keyword set to something
    else beside ``limits=`` is ambiguous and refused. ``defaults`` are the keywords' defaults
    in the caller's signature, when they are not :data:`DEFAULT_LIMITS`'.

    Raises:
        TypeError: ``limits`` is not a :class:`Limits`, or is given together with a keyword.
        ValueError: a keyword limit of the wrong kind.
    """
    if limits is None:
        return Limits(max_tool_calls, timeout, token_limit)
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a silo.Limits, got {type(limits).__name__}.")
    given = {
        "max_tool_calls": max_tool_calls != defaults.max_tool_calls,
        "timeout": timeout != defaults.timeout,
        "token_limit": token_limit != defaults.token_limit,
    }
    both = [name for name, differs in given.items() if differs]
    if both:
        raise TypeError(
            f"Give the limits either as limits=silo.Limits(...) or as keywords, not both "
            f"(got limits= and {', '.join(n + '=' for n in both)})."
        )
    return limits
