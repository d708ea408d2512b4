"""RolloutRecord: the few facts of one finished rollout that an eval keeps in memory.

A record is what ``runs/index.jsonl`` holds per line and what the statistics read; the heavy
parts of a rollout (trace, state diff) stay in its run directory and, compacted, in the report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from ..._result import RunResult

if TYPE_CHECKING:
    from ._prices import Prices

__all__ = ["RolloutRecord", "verifier_error_of"]


def verifier_error_of(result: RunResult) -> str | None:
    """The verifier's own error (it raised, timed out or returned no required check), if any."""
    for line in reversed(result.trace_lines):  # the last event, as a rule: decode just that
        event = json.loads(line)
        if event.get("type") == "verifier_result":
            error = event.get("error")
            return str(error) if error else None
    return None


@attrs.frozen
class RolloutRecord:
    """One finished rollout of an eval.

    Attributes:
        task_id: the task.
        agent: the agent's label.
        run: 1-based run number of this task and agent.
        run_id: the rollout's run id.
        run_dir: its run directory relative to the eval directory (None without artifacts).
        passed: every required check passed.
        reward: share of checks passed.
        termination_reason: why the agent phase ended.
        tool_calls: calls executed.
        tool_errors: calls rejected because of the agent.
        tool_faults: calls that failed because the environment raised.
        verifier_error: the verifier failed (an environment fault, not an agent failure).
        error: the rollout's error message, if any.
        failed_required: labels of failed required checks.
        checks_passed: checks passed.
        checks_total: checks.
        duration_ms: wall time of the rollout.
        worker_lost: every worker that ran this rollout died (the Ray executor gave up on it
            after a bounded number of tries); an environment fault with no run directory.
        model_steps: model responses recorded.
        input_tokens: input tokens recorded.
        output_tokens: output tokens recorded.
        cost: what the model steps cost by the eval's price table (None without one).
        unpriced_tokens: tokens of models the price table has no price for.
        reward_valid: the reward is evidence (``rewardValid``); statistics use valid
            rollouts only.
        invalid_reason: why it is not (``model_error``, ``environment_fault``,
            ``worker_lost``), or None.
        injected_faults: faults injected on purpose (``injectedFaults``).
        recovered_faults: injected faults the agent recovered from (``recoveredFaults``).
        baseline: a rollout of an eval's baseline (the plan run again without faults).
    """

    task_id: str
    agent: str
    run: int
    run_id: str
    run_dir: str | None
    passed: bool
    reward: float
    termination_reason: str
    tool_calls: int
    tool_errors: int
    tool_faults: int
    verifier_error: bool
    error: str | None
    failed_required: list[str]
    checks_passed: int
    checks_total: int
    duration_ms: float
    worker_lost: bool = False
    model_steps: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    unpriced_tokens: int = 0
    reward_valid: bool = True
    invalid_reason: str | None = None
    injected_faults: int = 0
    recovered_faults: int = 0
    baseline: bool = False

    @property
    def env_fault(self) -> bool:
        """True when the environment, not the agent, went wrong (tool, verifier or worker)."""
        return self.tool_faults > 0 or self.verifier_error or self.worker_lost

    @classmethod
    def from_result(
        cls,
        result: RunResult,
        agent: str,
        run: int,
        base: Path | None = None,
        prices: Prices | None = None,
        *,
        baseline: bool = False,
    ) -> RolloutRecord:
        """The record of ``result``; ``run_dir`` is made relative to ``base`` when given.

        With ``prices``, the record carries what its model steps cost; ``baseline`` marks a
        rollout of the eval's baseline.
        """
        run_dir: str | None = None
        if result.run_dir is not None:
            path = result.run_dir
            if base is not None and path.is_relative_to(base):
                path = path.relative_to(base)
            run_dir = path.as_posix()
        cost, unpriced = prices.cost(result) if prices is not None else (None, 0)
        return cls(
            task_id=result.task.id,
            agent=agent,
            run=run,
            run_id=result.run_id,
            run_dir=run_dir,
            passed=result.passed,
            reward=result.reward,
            termination_reason=result.termination_reason,
            tool_calls=result.tool_calls,
            tool_errors=result.tool_errors,
            tool_faults=result.tool_faults,
            verifier_error=verifier_error_of(result) is not None,
            error=result.error,
            failed_required=list(result.failed_required),
            checks_passed=result.checks_passed,
            checks_total=len(result.checks),
            duration_ms=result.duration_ms,
            model_steps=result.model_steps,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost=cost,
            unpriced_tokens=unpriced,
            reward_valid=result.reward_valid,
            invalid_reason=result.invalid_reason,
            injected_faults=result.injected_faults,
            recovered_faults=result.recovered_faults,
            baseline=baseline,
        )

    def to_dict(self) -> dict[str, Any]:
        """One ``runs/index.jsonl`` line (camelCase keys, result.json names where they exist)."""
        return {
            "task": self.task_id,
            "agent": self.agent,
            "run": self.run,
            "runId": self.run_id,
            "runDir": self.run_dir,
            "passed": self.passed,
            "reward": self.reward,
            "rewardValid": self.reward_valid,
            "invalidReason": self.invalid_reason,
            "terminationReason": self.termination_reason,
            "toolCalls": self.tool_calls,
            "toolErrors": self.tool_errors,
            "toolFaults": self.tool_faults,
            "injectedFaults": self.injected_faults,
            "recoveredFaults": self.recovered_faults,
            "verifierError": self.verifier_error,
            "workerLost": self.worker_lost,
            "envFault": self.env_fault,
            "error": self.error,
            "failedRequired": list(self.failed_required),
            "checksPassed": self.checks_passed,
            "checksTotal": self.checks_total,
            "durationMs": self.duration_ms,
            "modelSteps": self.model_steps,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            **(
                {}
                if self.cost is None
                else {"cost": round(self.cost, 6), "unpricedTokens": self.unpriced_tokens}
            ),
            **({"baseline": True} if self.baseline else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RolloutRecord:
        """Read back one ``runs/index.jsonl`` line."""
        return cls(
            task_id=data["task"],
            agent=data["agent"],
            run=int(data["run"]),
            run_id=data["runId"],
            run_dir=data.get("runDir"),
            passed=bool(data["passed"]),
            reward=float(data["reward"]),
            termination_reason=data["terminationReason"],
            tool_calls=int(data["toolCalls"]),
            tool_errors=int(data["toolErrors"]),
            tool_faults=int(data["toolFaults"]),
            verifier_error=bool(data.get("verifierError", False)),
            error=data.get("error"),
            failed_required=list(data.get("failedRequired", [])),
            checks_passed=int(data.get("checksPassed", 0)),
            checks_total=int(data.get("checksTotal", 0)),
            duration_ms=float(data.get("durationMs", 0.0)),
            worker_lost=bool(data.get("workerLost", False)),
            model_steps=int(data.get("modelSteps", 0)),
            input_tokens=int(data.get("inputTokens", 0)),
            output_tokens=int(data.get("outputTokens", 0)),
            cost=None if data.get("cost") is None else float(data["cost"]),
            unpriced_tokens=int(data.get("unpricedTokens", 0)),
            reward_valid=bool(data.get("rewardValid", True)),
            invalid_reason=data.get("invalidReason"),
            injected_faults=int(data.get("injectedFaults", 0)),
            recovered_faults=int(data.get("recoveredFaults", 0)),
            baseline=bool(data.get("baseline", False)),
        )
