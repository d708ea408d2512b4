"""The ledger: what one rollout has done and spent so far, counted in one place.

Every counter that reaches ``run_end``, ``result.json`` and the limits lives here, and nowhere
else: a driver reads it, the rollout core writes it. Issue 23 adds the injected and recovered
faults; issue 25 the user's turns and tool calls (which are not the agent's ``toolCalls``).
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
        steps: model responses recorded.
        input_tokens: input tokens over all model steps.
        output_tokens: output tokens over all model steps.
        replayed: model steps replayed from an interrupted attempt's recording (an eval that
            resumed), counted in ``steps`` too: ``run.json``'s ``resumedModelSteps``.
    """

    __slots__ = ("calls", "errors", "faults", "input_tokens", "output_tokens", "replayed", "steps")

    def __init__(self) -> None:
        self.calls = self.errors = self.faults = 0
        self.steps = self.input_tokens = self.output_tokens = self.replayed = 0

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

    def count_step(self, step: ModelStep) -> None:
        """Count one model response and its tokens."""
        self.steps += 1
        self.replayed += step.replayed
        self.input_tokens += step.input_tokens
        self.output_tokens += step.output_tokens

    def totals(self) -> dict[str, Any]:
        """The counters as ``run_end`` records them, in its order."""
        return {
            "toolCalls": self.calls,
            "toolErrors": self.errors,
            "toolFaults": self.faults,
            "modelSteps": self.steps,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
        }
