"""The ledger: what one rollout has done and spent so far, counted in one place.

Every counter that reaches ``run_end``, ``result.json`` and the limits lives here, and nowhere
else: a driver reads it, the rollout core writes it. Injected faults are
counted here with the ones the agent recovered from. A conversational task's user has counters of
its own (turns, its tool calls, a model user's tokens): they are never the agent's ``toolCalls``,
nor its limits.
"""

from __future__ import annotations

from typing import Any

from ._modelstep import ModelStep
from ._tools import ToolFault

__all__ = ["Ledger"]


class Ledger:
    """The counters of one rollout (plain integers: nothing for the garbage collector to walk).

    Attributes:
        calls: tool calls executed (a refused call is not one).
        errors: calls rejected because of the agent (invalid input, unknown tool, ToolError).
        faults: calls that failed because the environment raised (``internal_error``).
        injected: faults injected on purpose (``fault_injected`` events, latencies included).
        recovered: injected faults after which the same tool later succeeded.
        steps: model responses recorded.
        input_tokens: input tokens over all model steps.
        output_tokens: output tokens over all model steps.
        replayed: model steps replayed from an interrupted attempt's recording (an eval that
            resumed), counted in ``steps`` too: ``run.json``'s ``resumedModelSteps``.
        user_turns: ``message_user`` turns the user answered.
        user_calls: tool calls the user made with its own tools.
        user_input_tokens: a model user's input tokens (``None`` until one is recorded).
        user_output_tokens: a model user's output tokens (``None`` until one is recorded).
    """

    __slots__ = (
        "calls",
        "errors",
        "faults",
        "injected",
        "input_tokens",
        "output_tokens",
        "pending",
        "recovered",
        "replayed",
        "steps",
        "user_calls",
        "user_input_tokens",
        "user_output_tokens",
        "user_turns",
    )

    def __init__(self) -> None:
        self.calls = self.errors = self.faults = 0
        self.injected = self.recovered = 0
        # Injected faults per tool not yet followed by a success of that tool (made on the
        # first injection: a rollout without faults holds no dict).
        self.pending: dict[str, int] | None = None
        self.steps = self.input_tokens = self.output_tokens = self.replayed = 0
        self.user_turns = self.user_calls = 0
        self.user_input_tokens: int | None = None
        self.user_output_tokens: int | None = None

    @property
    def tokens(self) -> int:
        """Input + output tokens recorded so far."""
        return self.input_tokens + self.output_tokens

    def count_failure(self, fault: ToolFault | None) -> None:
        """Count a failed call: the environment's fault if it raised, else the agent's error."""
        if fault is None:
            self.errors += 1
        else:
            self.faults += 1

    def count_injected(self, tool: str, count: int) -> None:
        """Count ``count`` faults injected into a call of ``tool``."""
        self.injected += count
        pending = self.pending
        if pending is None:
            pending = self.pending = {}
        pending[tool] = pending.get(tool, 0) + count

    def count_success(self, tool: str) -> None:
        """A call of ``tool`` succeeded: the faults injected into it so far are recovered."""
        pending = self.pending
        if pending:
            self.recovered += pending.pop(tool, 0)

    def count_step(self, step: ModelStep) -> None:
        """Count one model response and its tokens."""
        self.steps += 1
        self.replayed += step.replayed
        self.input_tokens += step.input_tokens
        self.output_tokens += step.output_tokens

    def count_user_usage(self, input_tokens: int | None, output_tokens: int | None) -> None:
        """Count a model user's tokens (apart from the agent's: never against its limit)."""
        if input_tokens is None and output_tokens is None:
            return
        self.user_input_tokens = (self.user_input_tokens or 0) + (input_tokens or 0)
        self.user_output_tokens = (self.user_output_tokens or 0) + (output_tokens or 0)

    def totals(self) -> dict[str, Any]:
        """The counters as ``run_end`` records them, in its order."""
        totals: dict[str, Any] = {
            "toolCalls": self.calls,
            "toolErrors": self.errors,
            "toolFaults": self.faults,
            "injectedFaults": self.injected,
            "recoveredFaults": self.recovered,
            "modelSteps": self.steps,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "userTurns": self.user_turns,
            "userToolCalls": self.user_calls,
        }
        if self.user_input_tokens is not None:
            totals["userInputTokens"] = self.user_input_tokens
            totals["userOutputTokens"] = self.user_output_tokens
        return totals
