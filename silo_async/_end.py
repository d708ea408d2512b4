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
result names what actually went wrong.

The end also says whether the reward is evidence: a rollout in which the
environment faulted (a tool raised; the verifier's failure is added once grading is over, by
:meth:`End.with_verifier_failure`) is ``environment_fault``, else one whose agent failed because
its model API did (:class:`~silo_async.ModelError`, or an SDK's API error) is ``model_error``.
The termination reason is unchanged by validity; faults injected on purpose never invalidate.

A call the rollout did not execute says why with a :class:`Refusal`; what that means (the
agent's scope cancelled, or the episode finished) is each driver's to decide.
"""

from __future__ import annotations

import enum
import math
from typing import Literal

import attrs

from ._result import InvalidReason, TerminationReason

__all__ = [
    "LOOP_BLOCKED_S",
    "End",
    "LimitReason",
    "Refusal",
    "Stop",
    "error_text",
    "leaf_exception",
    "settle",
    "validity",
]

#: The limits that stop a rollout before its deadline.
LimitReason = Literal["max_tool_calls", "max_tokens"]

#: An agent phase that ends this long after its deadline means the event loop was held (a
#: blocking call in the agent): the trace records a ``loop_blocked`` event with the overrun.
LOOP_BLOCKED_S = 0.1


class Refusal(enum.Enum):
    """Why a rollout's call executed nothing; what it means is the driver's to decide."""

    #: This call is the one beyond ``max_tool_calls``: it stopped the rollout.
    OVER_LIMIT = "over_limit"
    #: A limit had already stopped the rollout.
    STOPPED = "stopped"
    #: The deadline has passed (the event loop was held past it).
    LATE = "late"
    #: The rollout has ended.
    ENDED = "ended"
    #: The call was in flight when the rollout ended (``cut_on_end`` rollouts only).
    CUT = "cut"


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
        invalid: why the reward is not evidence (``environment_fault``, ``model_error``), or
            ``None`` when it is.
    """

    reason: TerminationReason
    error: str | None = None
    held_ms: float | None = None
    invalid: InvalidReason | None = None

    @property
    def reward_valid(self) -> bool:
        """True when the reward can be trusted (``rewardValid``)."""
        return self.invalid is None

    def with_verifier_failure(self) -> End:
        """This end once the verifier failed: the environment faulted; the reward is no evidence."""
        return attrs.evolve(self, invalid="environment_fault")

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
    model_error: bool = False,
    tool_faults: int = 0,
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
        model_error: the agent's exception is a model API failure (:func:`is_model_api_error
            <silo_async._errors.is_model_api_error>`).
        tool_faults: calls that failed because a tool raised (the ledger's ``faults``).

    Returns:
        The :class:`End`.
    """
    invalid = validity(model_error=model_error, tool_faults=tool_faults)
    if cancelled is not None:
        return End("cancelled", cancelled, invalid=invalid)
    if failure is not None:
        return End("agent_error", failure, invalid=invalid)
    if stop is not None:
        return End(stop.reason, crash or stop.message, invalid=invalid)
    if ended_at >= deadline:
        return _timed_out(ended_at - deadline, timeout_s, crash, invalid)
    if crash is not None and not scope_cancelled:
        return End("agent_error", crash, invalid=invalid)
    return End("completed", crash, invalid=invalid)


def validity(*, model_error: bool = False, tool_faults: int = 0) -> InvalidReason | None:
    """Why a rollout's reward is not evidence, or ``None``: the environment's fault first."""
    if tool_faults:
        return "environment_fault"
    if model_error:
        return "model_error"
    return None


def _timed_out(
    overrun: float, timeout_s: float, crash: str | None, invalid: InvalidReason | None
) -> End:
    message = f"Time limit exceeded ({timeout_s:g} s)."
    if overrun <= LOOP_BLOCKED_S:
        return End("timeout", crash or message, invalid=invalid)
    held_ms = round(overrun * 1000, 3)
    message += f" The event loop was held {held_ms / 1000:.3g} s past the deadline."
    return End("timeout", crash or message, held_ms, invalid)


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
