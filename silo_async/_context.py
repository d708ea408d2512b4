"""AgentContext: everything an agent gets — the task, the tools, ``call_tool`` and its budget.

The context drives a rollout from inside: the agent calls, the rollout core executes. A limit
is enforced the anyio way, by cancelling the agent's scope.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
from anyio.lowlevel import checkpoint

from ._end import Refusal
from ._errors import SiloError
from ._modelstep import ModelStep, ModelStepRecorder
from ._rollout import Rollout
from ._setup import RolloutSetup
from ._tools import ToolResult, ToolSpec

__all__ = ["AgentContext", "ToolCallLimitExceededError", "rollout_setup"]


class ToolCallLimitExceededError(SiloError):
    """Raised by ``call_tool`` refused by a limit if the agent shielded itself from cancellation.

    Normally the refused call (beyond ``max_tool_calls``, after the token limit, or past the
    deadline) cancels the agent's scope and never returns. Its ``code`` is the limit, as the
    result's termination reason names it: ``max_tool_calls``, ``max_tokens`` or ``timeout``.
    Called ``ToolCallLimitExceeded`` before (that name works, with a warning, until the next
    release).
    """


class AgentContext(ModelStepRecorder):
    """What ``async def agent(ctx)`` receives.

    Attributes:
        task: the task's instruction — the only text the agent is given; for a task with a
            user, followed by a blank line and ``User: <opening>``.
        policy: the environment's policy (``Environment(policy=...)``), or ``None``: the rules
            the agent works under. Model agents send it as their system prompt.
        cancel_scope: the anyio cancel scope the limits cancel (Silo's abort signal).
    """

    __slots__ = ("_rollout", "_tools", "cancel_scope", "policy", "task")

    def __init__(self, rollout: Rollout, cancel_scope: anyio.CancelScope) -> None:
        self.task = rollout.prompt
        self.policy: str | None = rollout.setup.env.policy
        self.cancel_scope = cancel_scope
        self._rollout = rollout
        self._tools: list[ToolSpec] | None = None

    @property
    def tools(self) -> list[ToolSpec]:
        """The tools the agent may call, as :class:`ToolSpec`, in registry order.

        A task with a user lists ``message_user`` last, and not the user's own tools.
        """
        # Built on first use: a scripted agent never reads it, and 10,000 waiting rollouts
        # would otherwise keep 10,000 lists alive for nothing.
        if self._tools is None:
            self._tools = self._rollout.specs()
        return self._tools

    @property
    def cancelled(self) -> bool:
        """True once a limit (or anyone) cancelled the agent's scope."""
        return self.cancel_scope.cancel_called

    @property
    def tool_calls(self) -> int:
        """Tool calls executed so far."""
        return self._rollout.ledger.calls

    @property
    def remaining_tool_calls(self) -> int:
        """How many more tool calls will be executed before the limit stops the agent."""
        rollout = self._rollout
        return max(0, rollout.setup.limits.max_tool_calls - rollout.ledger.calls)

    @property
    def remaining_time(self) -> float:
        """Seconds left before the time limit (``inf`` when there is none)."""
        deadline = self._rollout.deadline
        if math.isinf(deadline):
            return math.inf
        return max(0.0, deadline - anyio.current_time())

    @property
    def tokens_used(self) -> int:
        """Input + output tokens recorded so far with :meth:`record_model_step`."""
        return self._rollout.ledger.tokens

    @property
    def output(self) -> Any:
        """The partial output left with :meth:`set_output` (``None`` if none)."""
        return self._rollout.partial_output()

    @property
    def has_output(self) -> bool:
        """True once :meth:`set_output` was called (before the deadline)."""
        return self._rollout.has_partial

    def set_output(self, value: Any) -> None:
        """Leave a partial answer, graded if the agent is stopped before it returns.

        The agent's return value wins when it returns one (anything but ``None``) before the
        deadline. A partial answer left after the deadline is not graded.
        """
        self._rollout.set_partial(value)

    def _record_step(self, step: ModelStep) -> None:
        if self._rollout.record_step(step):  # the token limit: stop the agent
            self.cancel_scope.cancel()

    def _note(self, kind: str, fields: dict[str, Any]) -> None:
        """Record an event of silo_async's own in the trace (an eval's resume says what it did)."""
        self._rollout.trace.emit(kind, fields)

    async def call_tool(self, name: str, input: dict[str, Any] | None = None) -> ToolResult:
        """Call a tool by name. Always a checkpoint; rejected calls come back as values.

        Beyond the tool-call limit the call is neither executed nor recorded: it cancels the
        agent's scope, so this never returns. Past the deadline (an agent that held the event
        loop) the call is not executed either, on every backend.
        """
        result = await self._rollout.call(name, input)
        if isinstance(result, ToolResult):
            return result
        return await self._refused(result)

    async def _refused(self, refusal: Refusal) -> ToolResult:
        """A refused call stops the agent: its scope is cancelled, so this does not return."""
        rollout = self._rollout
        if refusal is Refusal.ENDED:  # a call from a task that outlived the run
            reason = rollout.end.reason if rollout.end is not None else "completed"
            message = f"The run has ended ({reason})."
            return ToolResult({"code": "invalid_state", "message": message}, is_error=True)
        self.cancel_scope.cancel()
        await checkpoint()
        # Still here: the agent shielded itself from its own cancellation.
        stop = rollout.stopped
        if stop is not None:
            message = f"{stop.message} The agent's scope is cancelled."
            raise ToolCallLimitExceededError(stop.reason, message)
        limit = f"Time limit exceeded ({rollout.setup.limits.seconds:g} s)."
        raise ToolCallLimitExceededError("timeout", f"{limit} The agent's scope is cancelled.")


def rollout_setup(ctx: AgentContext) -> RolloutSetup:
    """What the rollout behind ``ctx`` is (its environment, task, limits).

    Not for agents under test (they get the instruction and the tools, nothing more): for
    silo_async's own players, such as :func:`silo_async.testing.gold_agent`, which plays an
    instance's gold solution.
    """
    return ctx._rollout.setup
