"""RunResult: everything one rollout produced, and the JSON documents written for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, get_args

import attrs

from ._diff import unpack_diff
from ._family import split_of
from ._jsonutil import to_jsonable
from ._task import Task
from ._trace import unpack_lines
from ._verify import Check

__all__ = [
    "INVALID_REASONS",
    "TERMINATION_REASONS",
    "InvalidReason",
    "RunResult",
    "TerminationReason",
]

#: Why a rollout's agent phase ended. ``cancelled`` is recorded in artifacts only: the
#: cancellation itself is re-raised to the caller, never returned.
TerminationReason = Literal[
    "completed",
    "max_tool_calls",
    "max_tokens",
    "timeout",
    "agent_error",
    "cancelled",
]

#: The termination reasons, in the order reports list them.
TERMINATION_REASONS: tuple[str, ...] = get_args(TerminationReason)

#: Why a rollout's reward is not evidence: the model API failed after
#: the SDK's retries, the environment faulted (a tool or the verifier raised), or the worker
#: running the rollout was lost. The termination reason is unchanged by it.
InvalidReason = Literal["model_error", "environment_fault", "worker_lost"]

#: The reasons a reward is invalid, in the order reports list them.
INVALID_REASONS: tuple[str, ...] = get_args(InvalidReason)


@attrs.frozen
class RunResult:
    """The outcome of one rollout.

    Attributes:
        run_id: unique, time-sortable id (also the run directory's name).
        environment: the environment's name.
        task: the task that was run.
        agent_name: a label for the agent (file name or function name).
        agent_output: the agent's raw output (its return value, else its partial output).
        output_text: the text form verifiers see (``str`` as-is, ``None`` -> ``""``, else JSON).
        passed: every required check passed.
        reward: share of all checks passed, rounded to two decimals.
        termination_reason: ``completed``, ``max_tool_calls``, ``max_tokens``, ``timeout`` or
            ``agent_error`` (``cancelled`` only in the artifacts of a cancelled run).
        tool_calls: calls executed (a refused call beyond the limit is not counted).
        tool_errors: calls rejected because of the agent (invalid input, unknown tool, ToolError).
        tool_faults: calls that failed because the environment raised (``internal_error``).
        model_steps: model responses recorded (``model_step`` events).
        input_tokens: input tokens recorded over all model steps.
        output_tokens: output tokens recorded over all model steps.
        user_turns: ``message_user`` turns the task's user answered (0 without a user).
        user_tool_calls: tool calls the user made with its own tools (0 without a user).
        user_input_tokens: a model user's input tokens, counted apart from the agent's
            (``None`` when no user recorded usage).
        user_output_tokens: the same for output tokens.
        error: the agent's or the verifier's error message, if any (an agent's exception as
            ``"<Type>: <message>"``; its traceback is in the trace's ``agent_error`` event).
        verifier_id: the verifier that graded the run.
        checks: the verifier's checks, in order.
        required_passed: required checks passed.
        required_total: required checks.
        failed_required: labels of failed required checks.
        trace_lines: every event as its JSON line, exactly as written to ``trace.jsonl``
            (encoded on first access when the rollout kept its tool calls packed).
        state_diff_json: what the rollout changed, as compact JSON (see :attr:`state_diff`;
            computed on first access from the packed collections the rollout changed).
        run_dir: where artifacts were written, or ``None``.
        started_at: ISO-8601 UTC start time.
        finished_at: ISO-8601 UTC end time (after grading).
        duration_ms: wall time from start to the end of grading.
        config: the limits the run used (``maxToolCalls``, ``timeoutMs``, ``tokenLimit``).
        run_index: the rollout's run number for its task, 1-based (a lone ``run()`` is run 1).
        resumed_model_steps: model steps replayed from an interrupted attempt's recording when
            an eval resumed (0 otherwise): responses not asked of the model again.
        injected_faults: faults injected on purpose (``fault_injected`` events).
        recovered_faults: injected faults after which the same tool later succeeded.
        reward_valid: the reward is evidence: no model API failure, no environment fault
            (injected faults never invalidate).
        invalid_reason: why it is not (``model_error``, ``environment_fault``), or ``None``.
        faults: the fault plan the rollout ran under (``{"seed", "faults"}``, as in
            ``run.json``), or ``None``.
    """

    run_id: str
    environment: str
    task: Task
    agent_name: str
    agent_output: Any
    output_text: str
    passed: bool
    reward: float
    termination_reason: str
    tool_calls: int
    tool_errors: int
    tool_faults: int
    model_steps: int
    input_tokens: int
    output_tokens: int
    error: str | None
    verifier_id: str
    checks: list[Check]
    required_passed: int
    required_total: int
    failed_required: list[str]
    # Packed (bytes) until first read: see TraceRecorder.frozen and Rollout.diff.
    _trace: tuple[str, ...] | bytes = attrs.field(alias="trace_lines", eq=False, repr=False)
    _diff: str | bytes = attrs.field(alias="state_diff_json", eq=False, repr=False)
    run_dir: Path | None
    started_at: str
    finished_at: str
    duration_ms: float
    config: dict[str, Any]
    run_index: int = 1
    resumed_model_steps: int = 0
    user_turns: int = 0
    user_tool_calls: int = 0
    user_input_tokens: int | None = None
    user_output_tokens: int | None = None
    injected_faults: int = 0
    recovered_faults: int = 0
    reward_valid: bool = True
    invalid_reason: str | None = None
    faults: dict[str, Any] | None = None

    @property
    def trace_lines(self) -> tuple[str, ...]:
        """Every event as its JSON line, exactly as written to ``trace.jsonl``."""
        value = self._trace
        if isinstance(value, tuple):
            return value
        lines = unpack_lines(value)
        object.__setattr__(self, "_trace", lines)  # computed once, then kept
        return lines

    @property
    def state_diff_json(self) -> str:
        """What the rollout changed (``state-diff.json``) as compact JSON."""
        value = self._diff
        if isinstance(value, str):
            return value
        text = unpack_diff(value)
        object.__setattr__(self, "_diff", text)
        return text

    @property
    def trace(self) -> list[dict[str, Any]]:
        """Every event as a JSON-ready dict with a ``type`` key (decoded on each access)."""
        return [json.loads(line) for line in self.trace_lines]

    @property
    def state_diff(self) -> dict[str, Any]:
        """What the rollout changed (``state-diff.json``), decoded on each access.

        Kept as text, like the trace: thousands of finished results in memory then cost the
        garbage collector nothing for their diffs.
        """
        diff: dict[str, Any] = json.loads(self.state_diff_json)
        return diff

    @property
    def checks_passed(self) -> int:
        """Checks that passed, required or optional."""
        return sum(1 for c in self.checks if c.passed)

    def result_dict(self) -> dict[str, Any]:
        """``result.json``: Silo's keys and order plus faults, validity, tokens and user counts.

        No timestamps, no ids: a byte-exact regression oracle. ``userTurns`` and
        ``userToolCalls`` follow ``outputTokens`` (0 for a task without a user), then
        ``userInputTokens`` and ``userOutputTokens`` when a model user recorded usage.
        """
        data: dict[str, Any] = {
            "passed": self.passed,
            "reward": self.reward,
            "rewardValid": self.reward_valid,
            "invalidReason": self.invalid_reason,
            "requiredPassed": self.required_passed,
            "requiredTotal": self.required_total,
            "failedRequired": list(self.failed_required),
            "checksPassed": self.checks_passed,
            "checksFailed": len(self.checks) - self.checks_passed,
            "toolCalls": self.tool_calls,
            "toolErrors": self.tool_errors,
            "toolFaults": self.tool_faults,
            "injectedFaults": self.injected_faults,
            "recoveredFaults": self.recovered_faults,
            "modelSteps": self.model_steps,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "userTurns": self.user_turns,
            "userToolCalls": self.user_tool_calls,
        }
        if self.user_input_tokens is not None or self.user_output_tokens is not None:
            data["userInputTokens"] = self.user_input_tokens or 0
            data["userOutputTokens"] = self.user_output_tokens or 0
        data["terminationReason"] = self.termination_reason
        data["agentOutput"] = to_jsonable(self.agent_output)
        data["error"] = self.error
        data["checks"] = [c.to_dict() for c in self.checks]
        return data

    def run_dict(self) -> dict[str, Any]:
        """``run.json``: identity, resolved configuration and timings."""
        return {
            "runId": self.run_id,
            "environment": self.environment,
            "taskId": self.task.id,
            "task": self.task.to_dict(),
            # An instance's family, seed and split; null when hand-written.
            "family": self.task.family,
            "seed": self.task.seed,
            "split": split_of(self.task),
            "verifierId": self.verifier_id,
            "agent": self.agent_name,
            "run": self.run_index,
            "config": dict(self.config),
            **({} if self.faults is None else {"faults": self.faults}),
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
            "durationMs": self.duration_ms,
            "terminationReason": self.termination_reason,
            "toolCallCount": self.tool_calls,
            "modelSteps": self.model_steps,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "resumedModelSteps": self.resumed_model_steps,
            "passed": self.passed,
            "reward": self.reward,
            "rewardValid": self.reward_valid,
        }
