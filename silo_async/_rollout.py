"""The rollout core: one rollout's world, tool calls, counters, trace, grading and artifacts.

Two drivers sit on this one core. :func:`silo_async.run` calls the agent, which drives the
rollout from inside through an :class:`~silo_async.AgentContext`; an :class:`~silo_async.Episode`
is driven from outside, one call at a time (an MCP client, a trainer). Both execute calls,
count them, record model steps and tokens, grade and write artifacts here, so the same calls and
the same output give the same ``result.json`` and ``state-diff.json`` whichever drove them.
What differs is only how a limit is enforced: a run cancels its agent's scope, an episode
finishes itself.

Phases: :meth:`Rollout.open` (run directory, ``run_start``) -> calls -> the driver settles why
the rollout ended (:attr:`Rollout.reason`, :attr:`Rollout.error`, :attr:`Rollout.output`) ->
:meth:`Rollout.finish` (verifier and artifacts, shielded and bounded).
"""

from __future__ import annotations

import difflib
import inspect
import time
import traceback
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from ._diff import pack_diff, state_diff, unpack_diff
from ._environment import Environment
from ._jsonutil import Packed, changes, compact_json, output_text, pack, text_form, thaw
from ._limits import Limits
from ._modelstep import ModelStep
from ._result import RunResult
from ._runid import new_run_id
from ._task import Task
from ._tools import BoundTool, Tool, ToolFault, ToolResult
from ._trace import TraceRecorder, utc_now_iso
from ._verify import Verifier, VerifierContext, VerifierOutcome
from .runs import RunDir

__all__ = ["FINISH_GRACE_S", "LOOP_BLOCKED_S", "Rollout", "error_text"]

#: A verifier's outcome, or the error that replaced it.
Graded = tuple[VerifierOutcome | None, str | None]

#: A packed diff larger than this is computed at once rather than kept (memory per result).
PACKED_DIFF_MAX_BYTES = 16_384

#: How long grading and artifact writing may take once the rollout is over.
FINISH_GRACE_S = 30.0

#: An agent phase that ends this long after its deadline means the event loop was held (a
#: blocking call in the agent): the trace records a ``loop_blocked`` event with the overrun.
LOOP_BLOCKED_S = 0.1

_UNSET: Any = object()

#: ``time.monotonic()`` and the loop's clock are read a moment apart when a rollout starts.
_SCREEN_SLACK_S = 0.001


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


class Rollout:
    """The state of one rollout, shared by the driver that runs it and its grading."""

    __slots__ = (
        "agent_name",
        "backend",
        "by_name",
        "calls",
        "clock0",
        "deadline",
        "env",
        "error",
        "errors",
        "faults",
        "input_tokens",
        "limits",
        "max_calls",
        "output",
        "output_tokens",
        "partial",
        "reason",
        "run_dir",
        "run_id",
        "run_index",
        "screen_deadline",
        "snapshot",
        "started",
        "state",
        "steps",
        "stopped",
        "task",
        "tools",
        "trace",
        "verifier",
    )

    def __init__(
        self,
        env: Environment,
        task: Task,
        verifier: Verifier,
        limits: Limits,
        *,
        runs_dir: Path | None,
        agent_name: str,
        run_index: int = 1,
    ) -> None:
        self.env, self.task, self.verifier, self.limits = env, task, verifier, limits
        self.agent_name = agent_name
        self.run_index = run_index
        self.started = time.time()
        self.clock0 = time.perf_counter()
        self.start_clock()
        self.max_calls = limits.max_tool_calls
        self.backend = async_backend()
        self.run_id = new_run_id(self.started)
        self.state = env.create_state()
        self.snapshot: Packed | None = pack(self.state)
        self.tools, self.by_name = env.runtime_tools(self.state)
        self.run_dir = runs_dir / self.run_id if runs_dir is not None else None
        self.trace = TraceRecorder()
        self.calls = self.errors = self.faults = 0
        self.steps = self.input_tokens = self.output_tokens = 0
        self.partial: Any = _UNSET
        self.output: Any = None
        self.reason = "completed"
        self.error: str | None = None
        # The first limit that tripped (max_tool_calls, max_tokens), with its message.
        self.stopped: tuple[str, str] | None = None

    def start_clock(self) -> None:
        """Start the time limit now."""
        self.deadline = anyio.current_time() + self.limits.seconds
        # time.monotonic() screens the deadline cheaply (see past_deadline).
        self.screen_deadline = time.monotonic() + self.limits.seconds - _SCREEN_SLACK_S

    async def open(self) -> None:
        """Create the run directory (off the event loop) and record ``run_start``.

        The time limit starts once the rollout is ready for its first call: a slow disk (or a
        busy machine) creating the run directory does not eat into the agent's time.
        """
        if self.run_dir is not None:
            self.trace.attach(await RunDir(self.run_dir).create())
            self.start_clock()
        self.trace.emit(
            "run_start",
            {
                "runId": self.run_id,
                "environment": self.env.name,
                "task": self.task.to_dict(),
                "agent": self.agent_name,
                "config": self.limits.config(),
                "tools": [t.name for t in self.tools],
            },
        )

    # -- limits ------------------------------------------------------------------------------

    def past_deadline(self) -> bool:
        """True once the time limit has passed (as the event loop's clock reads it).

        The loop's clock costs half a microsecond to read; ``time.monotonic()`` (the same clock
        on asyncio, the same rate on trio) costs a tenth of that, so it screens the common case
        first. In virtual time (trio's MockClock) the deadline's own cancellation applies.
        """
        return time.monotonic() >= self.screen_deadline and anyio.current_time() >= self.deadline

    def stop(self, reason: str, message: str) -> bool:
        """Record the limit that ends the rollout; False when an earlier one already did."""
        if self.stopped is not None:
            return False
        self.stopped = (reason, message)
        return True

    def refuse_call(self) -> bool:
        """True when the next call would exceed ``max_tool_calls`` (and records that limit)."""
        limit = self.max_calls
        if self.calls < limit:
            return False
        self.stop("max_tool_calls", f"Tool call limit exceeded ({limit}).")
        return True

    def timed_out(self, ended_at: float) -> None:
        """Settle a rollout whose agent phase ended at ``ended_at``, past its deadline."""
        self.reason = "timeout"
        limit = f"Time limit exceeded ({self.limits.seconds:g} s)."
        overrun = ended_at - self.deadline
        if overrun > LOOP_BLOCKED_S:
            overrun_ms = round(overrun * 1000, 3)
            self.trace.emit("loop_blocked", {"overrunMs": overrun_ms})
            limit += f" The event loop was held {overrun_ms / 1000:.3g} s past the deadline."
        self.error = self.error or limit

    # -- what the driver feeds in ------------------------------------------------------------

    @property
    def has_partial(self) -> bool:
        """True once a partial answer was left (before the deadline)."""
        return self.partial is not _UNSET

    def partial_output(self) -> Any:
        """The partial answer left so far (``None`` if none)."""
        return None if self.partial is _UNSET else self.partial

    def set_partial(self, value: Any) -> None:
        """Keep a partial answer; one left after the deadline is not graded."""
        if not self.past_deadline():
            self.partial = value

    def crash(self, exc: BaseException) -> None:
        """Record an exception of the agent (or its driver): the error and an ``agent_error``."""
        leaf = leaf_exception(exc)
        self.error = error_text(exc)
        fault = ToolFault(
            type=type(leaf).__name__,
            message=str(leaf),
            traceback="".join(traceback.format_exception(exc)),
        )
        self.trace.emit("agent_error", {"error": fault.to_dict()})

    def record_step(self, step: ModelStep) -> bool:
        """Record a ``model_step`` event; True once the token limit is reached."""
        self.trace.emit("model_step", step.event)
        self.steps += 1
        self.input_tokens += step.input_tokens
        self.output_tokens += step.output_tokens
        limit = self.limits.token_limit
        if limit is None or self.input_tokens + self.output_tokens < limit:
            return False
        used = self.input_tokens + self.output_tokens
        self.stop("max_tokens", f"Token limit reached ({used} of {limit} tokens).")
        return True

    # -- tool calls --------------------------------------------------------------------------

    def call_sync(self, tool: Tool | BoundTool | None, name: str, input: Any) -> ToolResult:
        """Execute one call of a ``def`` tool (or of an unknown name): no coroutine at all."""
        # The hot path of every scripted rollout: written out rather than split into helpers,
        # each of which would cost a call (call_tool's budget is 2.5 checkpoints).
        self.calls = call_id = self.calls + 1
        trace = self.trace
        tool_json = tool.name_json if tool is not None else compact_json(name)
        at = trace.tool_call(call_id, tool_json, input)
        started = time.perf_counter()
        if tool is None:
            result, fault = self.unknown_tool(name), None
        else:
            result, fault = tool.execute_sync(self.state, input)
        elapsed = time.perf_counter() - started
        if result.is_error:
            if fault is None:
                self.errors += 1
            else:
                self.faults += 1
        trace.tool_result(call_id, tool_json, result, elapsed, fault, at)
        return result

    async def call_async(self, tool: Tool | BoundTool, input: Any) -> ToolResult:
        """Execute one call of an ``async def`` tool (cancellable while it awaits)."""
        self.calls = call_id = self.calls + 1
        trace = self.trace
        tool_json = tool.name_json
        at = trace.tool_call(call_id, tool_json, input)
        started = time.perf_counter()
        result, fault = await tool.execute(self.state, input)
        elapsed = time.perf_counter() - started
        if result.is_error:
            if fault is None:
                self.errors += 1
            else:
                self.faults += 1
        trace.tool_result(call_id, tool_json, result, elapsed, fault, at)
        return result

    def unknown_tool(self, name: str) -> ToolResult:
        """``tool_not_found``, naming the closest real tools."""
        close = closest_names(name, list(self.by_name))
        hint = (
            f" Closest tools: {', '.join(close)}." if close else " This environment has no tools."
        )
        output = {
            "code": "tool_not_found",
            "message": f'Unknown tool "{name}".{hint}',
            "details": {"tool": name, "suggestions": close},
        }
        return ToolResult(output, is_error=True)

    # -- the end -----------------------------------------------------------------------------

    async def finish(self) -> RunResult:
        """Grade, record the last events, write the artifacts; shielded from outer cancellation.

        A sync verifier and no run directory mean nothing left to await: no checkpoint, so no
        cancellation can arrive and the shield (a cancel scope per rollout) is skipped.
        """
        if self.output is None and self.partial is not _UNSET:
            self.output = self.partial
        text = self.output_text()
        initial = thaw(self.snapshot) if self.snapshot is not None else None
        self.end_events(text)
        graded = self.start_grading(text, initial)
        if isinstance(graded, tuple) and self.run_dir is None:
            return self.conclude(text, graded, initial)
        with anyio.CancelScope(shield=True):
            if not isinstance(graded, tuple):
                graded = await self.finish_grading(graded)
            result = self.conclude(text, graded, initial)
            if self.run_dir is not None:
                await RunDir(self.run_dir).write(result)
        return result

    def end_events(self, text: str) -> None:
        self.trace.emit("agent_output", {"output": text})
        self.trace.emit(
            "run_end",
            {
                "terminationReason": self.reason,
                "error": self.error,
                "toolCalls": self.calls,
                "toolErrors": self.errors,
                "toolFaults": self.faults,
                "modelSteps": self.steps,
                "inputTokens": self.input_tokens,
                "outputTokens": self.output_tokens,
                "durationMs": round((time.perf_counter() - self.clock0) * 1000, 3),
            },
        )

    def start_grading(self, text: str, initial: Any) -> Graded | Awaitable[Any]:
        """Call the verifier: a sync body is graded at once, an async one is returned to await."""
        ctx = VerifierContext(agent_output=text, task=self.task, output=self.output)
        try:
            checks = self.verifier.start(self.state, initial, ctx)
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

    def conclude(self, text: str, graded: Graded, initial: Any) -> RunResult:
        """Record the verifier's event, close the trace, build the result, let go of the world."""
        outcome, verifier_error = graded
        if outcome is None:  # the verifier failed: graded as nothing passed
            outcome = VerifierOutcome(self.verifier.id, self.task.id, False, 0.0, 0, 0, [], [])
        self.verifier_event(outcome, verifier_error)
        self.trace.close()
        result = self.result(text, outcome, verifier_error, self.diff(initial))
        # A finished rollout may still queue to write its files: it must not hold its world,
        # the world's copy and the tools bound to it meanwhile (1,000 crm worlds are 300 MB).
        self.state = self.snapshot = None
        self.tools = ()
        self.by_name = {}
        return result

    def output_text(self) -> str:
        """The output's text form; an output JSON cannot hold is kept as its ``str()``."""
        try:
            return output_text(self.output)
        except ValueError as exc:  # a circular structure, or one nested too deeply
            text = text_form(self.output)
            self.output = text
            problem = f"The agent's output cannot be written as JSON ({exc}); kept as its str()."
            self.error = f"{self.error}; {problem}" if self.error else problem
            if self.reason == "completed":
                self.reason = "agent_error"
            return text

    def diff(self, initial: Any) -> str | bytes:
        """The state diff, or the packed collections it is computed from when first read.

        Top-level collections whose bytes are unchanged are left out either way. Packed, a
        diff costs nothing until someone reads it (an RL loop reading only rewards never does)
        and is computed from the snapshot taken before the agent acted.
        """
        found = changes(self.snapshot, self.state) if self.snapshot is not None else None
        if found is None:  # not a dict world of plain data: compared the slow way, now
            return compact_json(state_diff(initial, self.state))
        packed = pack_diff(*found)
        return packed if len(packed) <= PACKED_DIFF_MAX_BYTES else unpack_diff(packed)

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

    def result(
        self,
        text: str,
        outcome: VerifierOutcome,
        verifier_error: str | None,
        diff: str | bytes,
    ) -> RunResult:
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
            tool_calls=self.calls,
            tool_errors=self.errors,
            tool_faults=self.faults,
            model_steps=self.steps,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            error="; ".join(errors) if errors else None,
            verifier_id=self.verifier.id,
            checks=list(outcome.checks),
            required_passed=outcome.required_passed,
            required_total=outcome.required_total,
            failed_required=list(outcome.failed_required),
            trace_lines=self.trace.frozen(),
            state_diff_json=diff,
            run_dir=self.run_dir,
            started_at=utc_now_iso(self.started),
            finished_at=utc_now_iso(),
            duration_ms=round((time.perf_counter() - self.clock0) * 1000, 3),
            config=self.limits.config(),
            run_index=self.run_index,
        )


class _Anyio:
    """Stands in for anyio's backend class should anyio's internals move."""

    checkpoint = staticmethod(anyio.lowlevel.checkpoint)


def async_backend() -> Any:
    """The running backend's class, whose ``checkpoint()`` ``anyio.lowlevel.checkpoint`` awaits.

    Kept per rollout (a class, shared: nothing for the garbage collector), it spares
    ``call_tool`` anyio's per-call backend lookup (a quarter of a microsecond) and one coroutine
    frame.
    """
    try:
        from anyio._core._eventloop import get_async_backend

        return get_async_backend()
    except (ImportError, AttributeError):  # pragma: no cover - another anyio layout
        return _Anyio


def closest_names(name: str, names: list[str], count: int = 3) -> list[str]:
    """The real tool names most like ``name`` (never empty when tools exist)."""
    if not names:
        return []
    wanted = str(name).lower()
    lowered = {n.lower(): n for n in names}
    found = [lowered[c] for c in difflib.get_close_matches(wanted, list(lowered), count, 0.5)]
    if not found:
        ranked = sorted(
            names, key=lambda n: -difflib.SequenceMatcher(None, wanted, n.lower()).ratio()
        )
        found = ranked[:count]
    return found
