"""The runner: one rollout under real limits, always graded, never lost.

Phases: prepare (fresh world, bound tools, trace) -> drive (the agent in its own cancel scope,
cancelled by the time limit or by the call beyond the tool-call limit) -> finish (verifier and
artifacts, shielded and bounded, also after a crash, a limit or an outer cancellation, which is
re-raised once the artifacts are written).
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ._artifacts import create_run_dir, write_artifacts
from ._context import AgentContext, _Budget
from ._diff import state_diff
from ._environment import Environment
from ._jsonutil import Snapshot, compact_json, output_text
from ._result import RunResult
from ._runid import new_run_id
from ._task import Task
from ._trace import TraceRecorder, utc_now_iso
from ._verify import Verifier, VerifierContext, VerifierOutcome

__all__ = ["Agent", "run"]

Agent = Callable[[AgentContext], Awaitable[Any]]

#: A verifier's outcome, or the error that replaced it.
Graded = tuple[VerifierOutcome | None, str | None]

#: An event loop may fire a timer a hair before its deadline as the clock reads it: a scope
#: cancelled this close to its deadline was cancelled by the deadline.
_CLOCK_SLACK_S = 0.001

#: How long grading and artifact writing may take once the agent phase is over.
FINISH_GRACE_S = 30.0


def _check_limits(max_tool_calls: int, timeout: float | None) -> None:
    if (
        isinstance(max_tool_calls, bool)
        or not isinstance(max_tool_calls, int)
        or max_tool_calls < 0
    ):
        raise ValueError(f"max_tool_calls must be an integer >= 0, got {max_tool_calls!r}.")
    if timeout is not None and (not isinstance(timeout, int | float) or not timeout > 0):
        raise ValueError(f"timeout must be a number of seconds > 0 (or None), got {timeout!r}.")


def _agent_label(agent: Agent) -> str:
    return str(getattr(agent, "__qualname__", None) or type(agent).__name__)


def _error_text(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc)
    return text or type(exc).__name__


def _not_awaitable(returned: object) -> TypeError:
    return TypeError(
        "The agent must be an async function (async def agent(ctx)); "
        f"it returned {type(returned).__name__} instead of an awaitable."
    )


class _Rollout:
    """The state of one rollout between its phases."""

    def __init__(
        self,
        env: Environment,
        task: Task,
        verifier: Verifier,
        *,
        max_tool_calls: int,
        timeout: float | None,
        runs_dir: Path | None,
        agent_name: str,
    ) -> None:
        self.env, self.task, self.verifier = env, task, verifier
        self.timeout = math.inf if timeout is None else float(timeout)
        self.config = {
            "maxToolCalls": max_tool_calls,
            "timeoutMs": None if timeout is None else round(timeout * 1000),
        }
        self.agent_name = agent_name
        self.started = time.time()
        self.clock0 = time.perf_counter()
        self.run_id = new_run_id(self.started)
        self.state = env.create_state()
        self.snapshot: Snapshot | None = Snapshot(self.state)
        self.initial: Any = None  # thawed from the snapshot once the agent is done
        self.tools = env.bind_tools(self.state)
        self.budget = _Budget(max_tool_calls)
        self.run_dir = Path(runs_dir) / self.run_id if runs_dir is not None else None
        self.trace = TraceRecorder()
        self.ctx: AgentContext | None = None
        self.output: Any = None
        self.error: str | None = None
        self.reason = "completed"

    async def open_run_dir(self) -> None:
        """Create the run directory and its trace file, off the event loop.

        Creating files can cost a millisecond on a busy disk: a worker thread keeps that from
        stalling every other rollout in the loop.
        """
        if self.run_dir is not None:
            self.trace.attach(await create_run_dir(self.run_dir))

    def start_event(self) -> None:
        self.trace.emit(
            "run_start",
            {
                "runId": self.run_id,
                "environment": self.env.name,
                "task": self.task.to_dict(),
                "agent": self.agent_name,
                "config": dict(self.config),
                "tools": [t.name for t in self.tools],
            },
        )

    async def drive(self, agent: Agent) -> None:
        """Run the agent in its own cancel scope until it returns, fails or a limit trips."""
        with anyio.move_on_after(self.timeout) as scope:
            self.ctx = AgentContext(
                self.task.instruction, self.tools, self.budget, self.trace, scope
            )
            try:
                # Awaited here rather than in a helper coroutine: one frame less per live rollout.
                returned = agent(self.ctx)
                if not inspect.isawaitable(returned):
                    raise _not_awaitable(returned)
                self.output = await returned
            except Exception as exc:
                self.error = _error_text(exc)
                if not scope.cancel_called:
                    self.reason = "agent_error"
        if self.budget.limit_hit:
            self.reason = "max_tool_calls"
            self.error = self.error or f"Tool call limit exceeded ({self.budget.max_calls})."
        elif scope.cancel_called and anyio.current_time() >= scope.deadline - _CLOCK_SLACK_S:
            self.reason = "timeout"
            self.error = self.error or f"Time limit exceeded ({self.timeout:g} s)."

    def end_events(self, text: str) -> None:
        self.trace.emit("agent_output", {"output": text})
        self.trace.emit(
            "run_end",
            {
                "terminationReason": self.reason,
                "error": self.error,
                "toolCalls": self.budget.calls,
                "toolErrors": self.budget.errors,
                "toolFaults": self.budget.faults,
                "durationMs": round((time.perf_counter() - self.clock0) * 1000, 3),
            },
        )

    def start_grading(self, text: str) -> Graded | Awaitable[Any]:
        """Call the verifier: a sync body is graded at once, an async one is returned to await."""
        ctx = VerifierContext(agent_output=text, task=self.task, output=self.output)
        try:
            checks = self.verifier.start(self.state, self.initial, ctx)
            if inspect.isawaitable(checks):
                return checks
            return self.verifier.outcome(checks), None
        except Exception as exc:
            return None, self.verifier_failure(exc)

    async def finish_grading(self, pending: Awaitable[Any]) -> Graded:
        """Await an async verifier body under its own time bound."""
        try:
            with anyio.fail_after(FINISH_GRACE_S):
                checks = await pending
            return self.verifier.outcome(checks), None
        except TimeoutError:
            return None, f"Verifier {self.verifier.id} did not finish within {FINISH_GRACE_S:g} s."
        except Exception as exc:
            return None, self.verifier_failure(exc)

    def verifier_failure(self, exc: Exception) -> str:
        return f"Verifier {self.verifier.id} failed: {type(exc).__name__}: {exc}"

    async def finish(self) -> RunResult:
        """Grade, record the last events, write the artifacts; shielded from outer cancellation.

        A sync verifier and no run directory mean nothing left to await: no checkpoint, so no
        cancellation can arrive and the shield (a cancel scope per rollout) is skipped.
        """
        if self.output is None and self.ctx is not None:
            self.output = self.ctx.output  # a partial answer left with ctx.set_output()
        text = self.output_text()
        self.initial = self.snapshot.thaw() if self.snapshot is not None else None
        self.end_events(text)
        graded = self.start_grading(text)
        if isinstance(graded, tuple) and self.run_dir is None:
            return self.conclude(text, graded)
        with anyio.CancelScope(shield=True):
            if not isinstance(graded, tuple):
                graded = await self.finish_grading(graded)
            result = self.conclude(text, graded)
            if self.run_dir is not None:
                await write_artifacts(result)
        return result

    def conclude(self, text: str, graded: Graded) -> RunResult:
        """Record the verifier's event, close the trace, build the result, let go of the world."""
        outcome, verifier_error = graded
        if outcome is None:  # the verifier failed: graded as nothing passed
            outcome = VerifierOutcome(self.verifier.id, self.task.id, False, 0.0, 0, 0, [], [])
        self.verifier_event(outcome, verifier_error)
        self.trace.close()
        result = self.result(text, outcome, verifier_error)
        # A finished rollout may still queue to write its files: it must not hold its world,
        # the world's copy and the tools bound to it meanwhile (1,000 crm worlds are 300 MB).
        self.state = self.initial = self.snapshot = self.ctx = None
        self.tools = []
        return result

    def output_text(self) -> str:
        """The output's text form; an output JSON cannot hold is kept as its ``str()``."""
        try:
            return output_text(self.output)
        except ValueError as exc:  # a circular structure
            text = str(self.output)
            self.output = text
            problem = f"The agent's output cannot be written as JSON ({exc}); kept as its str()."
            self.error = f"{self.error}; {problem}" if self.error else problem
            if self.reason == "completed":
                self.reason = "agent_error"
            return text

    def diff(self) -> dict[str, Any]:
        """The state diff, skipping the top-level collections the snapshot shows untouched."""
        same = self.snapshot.unchanged(self.state) if self.snapshot is not None else set()
        if not same:
            return state_diff(self.initial, self.state)
        before = {k: v for k, v in self.initial.items() if k not in same}
        after = {k: v for k, v in self.state.items() if k not in same}
        return state_diff(before, after)

    def verifier_event(self, outcome: VerifierOutcome, error: str | None) -> None:
        fields: dict[str, Any] = {
            "verifierId": self.verifier.id,
            "passed": outcome.passed,
            "reward": outcome.reward,
            "requiredPassed": outcome.required_passed,
            "requiredTotal": outcome.required_total,
            "failedRequired": list(outcome.failed_required),
        }
        if error is not None:
            fields["error"] = error
        self.trace.emit("verifier_result", fields)

    def result(self, text: str, outcome: VerifierOutcome, verifier_error: str | None) -> RunResult:
        errors = [e for e in (self.error, verifier_error) if e]
        return RunResult(
            run_id=self.run_id,
            environment=self.env.name,
            task=self.task,
            agent_name=self.agent_name,
            agent_output=self.output,
            output_text=text,
            passed=outcome.passed,
            reward=outcome.reward,
            termination_reason=self.reason,
            tool_calls=self.budget.calls,
            tool_errors=self.budget.errors,
            tool_faults=self.budget.faults,
            error="; ".join(errors) if errors else None,
            verifier_id=self.verifier.id,
            checks=list(outcome.checks),
            required_passed=outcome.required_passed,
            required_total=outcome.required_total,
            failed_required=list(outcome.failed_required),
            trace_lines=self.trace.freeze(),
            state_diff_json=compact_json(self.diff()),
            run_dir=self.run_dir,
            started_at=utc_now_iso(self.started),
            finished_at=utc_now_iso(),
            duration_ms=round((time.perf_counter() - self.clock0) * 1000, 3),
            config=dict(self.config),
        )


async def run(
    env: Environment,
    task_id: str,
    agent: Agent,
    *,
    max_tool_calls: int = 100,
    timeout: float | None = 120.0,
    runs_dir: str | Path | None = None,
    agent_name: str | None = None,
) -> RunResult:
    """Run one rollout of ``task_id`` with ``agent`` on a fresh world and grade it.

    Args:
        env: the environment.
        task_id: the task to run.
        agent: ``async def agent(ctx: AgentContext) -> object``.
        max_tool_calls: calls executed before the next one stops the agent (default 100).
        timeout: seconds before the agent is cancelled (default 120; ``None``: no limit).
        runs_dir: when given, artifacts go to ``runs_dir/<run_id>/``.
        agent_name: label recorded in the trace and ``run.json`` (default: the function name).

    Returns:
        The graded :class:`RunResult`. Agent crashes, limits and verifier failures are
        recorded in it, never raised.

    Raises:
        SiloError: ``task_not_found`` or ``task_invalid`` (unknown verifier), before anything runs.
        ValueError: invalid limits.
    """
    _check_limits(max_tool_calls, timeout)
    task = env.task(task_id)
    verifier = env.verifier_for(task)
    rollout = _Rollout(
        env,
        task,
        verifier,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        runs_dir=Path(runs_dir) if runs_dir is not None else None,
        agent_name=agent_name or _agent_label(agent),
    )
    await rollout.open_run_dir()
    try:
        rollout.start_event()
        await rollout.drive(agent)
    except BaseException as exc:
        # Only outer cancellation (or a bug of ours) gets here: grade and write, then re-raise.
        cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
        rollout.reason = "cancelled" if cancelled else "agent_error"
        rollout.error = "Run cancelled by the caller." if cancelled else _error_text(exc)
        await rollout.finish()
        raise
    return await rollout.finish()
