"""How a rollout ends: one value, :class:`End`, decided by one pure function, :func:`settle`.

Both drivers observe the same facts when a rollout's agent phase is over — which limit
stopped it, when the phase ended next to its deadline, whether the agent crashed, whether the
caller cancelled — and hand them to :func:`settle`, which applies one order of precedence:

1. an outer cancellation (``cancelled``), then a failure of our own (``agent_error``);
2. the first limit that tripped (``max_tool_calls``, ``max_tokens``);
3. the deadline (``timeout``): a phase that ends at or past it is late, whatever the agent did;
4. the agent's own crash (``agent_error``);
5. otherwise ``completed``.

An error already known (the agent's crash) is kept over the message of a later cause, so the
result names what actually went wrong. Issue 23 adds reward validity to the end (whether the
reward can be trusted, and why not); it belongs on :class:`End`, decided here from the same facts.
"""

from __future__ import annotations

import math
from typing import Literal

import attrs

from ._result import TerminationReason

__all__ = [
    "LOOP_BLOCKED_S",
    "End",
    "LimitReason",
    "Stop",
    "error_text",
    "leaf_exception",
    "settle",
]

#: The limits that stop a rollout before its deadline.
LimitReason = Literal["max_tool_calls", "max_tokens"]

#: An agent phase that ends this long after its deadline means the event loop was held (a
#: blocking call in the agent): the trace records a ``loop_blocked`` event with the overrun.
LOOP_BLOCKED_S = 0.1


@attrs.frozen
class Stop:
    """A limit that stopped the rollout (the first one to trip wins).

    Attributes:
        reason: ``max_tool_calls`` or ``max_tokens``.
        message: what the result's ``error`` says about it.
    """

    reason: LimitReason
    message: str


@attrs.frozen
class End:
    """Why a rollout ended, as recorded in ``run_end`` and ``result.json``.

    Attributes:
        reason: the termination reason.
        error: the error message, if any.
        held_ms: for a timeout reached while the event loop was held, the overrun in
            milliseconds (the trace gets a ``loop_blocked`` event); otherwise ``None``.
    """

    reason: TerminationReason
    error: str | None = None
    held_ms: float | None = None

    @property
    def keeps_answer(self) -> bool:
        """False for a timeout: a late answer is not graded (a partial one left in time is)."""
        return self.reason != "timeout"

    def with_output_problem(self, problem: str) -> End:
        """This end once the output proved unwritable as JSON.

        The problem joins the error, and a rollout that would have completed is an agent error.
        """
        error = f"{self.error}; {problem}" if self.error else problem
        reason: TerminationReason = "agent_error" if self.reason == "completed" else self.reason
        return attrs.evolve(self, reason=reason, error=error)


def settle(
    *,
    ended_at: float,
    deadline: float = math.inf,
    timeout_s: float = math.inf,
    stop: Stop | None = None,
    crash: str | None = None,
    scope_cancelled: bool = False,
    cancelled: str | None = None,
    failure: str | None = None,
) -> End:
    """Decide how a rollout ended (see the module docstring for the order).

    Args:
        ended_at: when the agent phase ended, on the event loop's clock.
        deadline: the time limit's deadline on the same clock (``inf``: none).
        timeout_s: the time limit in seconds, for the message.
        stop: the first limit that tripped, if any.
        crash: the agent's exception as :func:`error_text`, if it raised.
        scope_cancelled: the agent's scope was cancelled when it raised: its exception came
            out of a cancellation (by the agent itself, say), not of a crash.
        cancelled: the caller cancelled the rollout: the message to record.
        failure: an exception that escaped the driver (a bug of ours, or a BaseException of
            the agent such as KeyboardInterrupt), as :func:`error_text`.

    Returns:
        The :class:`End`.
    """
    if cancelled is not None:
        return End("cancelled", cancelled)
    if failure is not None:
        return End("agent_error", failure)
    if stop is not None:
        return End(stop.reason, crash or stop.message)
    if ended_at >= deadline:
        return _timed_out(ended_at - deadline, timeout_s, crash)
    if crash is not None and not scope_cancelled:
        return End("agent_error", crash)
    return End("completed", crash)


def _timed_out(overrun: float, timeout_s: float, crash: str | None) -> End:
    message = f"Time limit exceeded ({timeout_s:g} s)."
    if overrun <= LOOP_BLOCKED_S:
        return End("timeout", crash or message)
    held_ms = round(overrun * 1000, 3)
    message += f" The event loop was held {held_ms / 1000:.3g} s past the deadline."
    return End("timeout", crash or message, held_ms)


def error_text(exc: BaseException) -> str:
    """``"<Type>: <message>"`` of the exception that matters (the first leaf of a group)."""
    exc = leaf_exception(exc)
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def leaf_exception(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc`` (``exc`` itself when it is not a group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
