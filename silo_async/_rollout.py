"""The rollout core: one rollout's world, calls, ledger, trace, grading and artifacts.

Two drivers sit on this one core. :func:`silo_async.run` calls the agent, which drives the
rollout from inside through an :class:`~silo_async.AgentContext` (``_runner.py``,
``_context.py``); an :class:`~silo_async.Episode` is driven from outside, one call at a time
(``_episode.py``). Both send every call through :meth:`Rollout.call`, record model steps here,
and hand the rollout's :class:`~silo_async._end.End` to :meth:`Rollout.finish`, so the same calls
and the same output give the same ``result.json`` and ``state-diff.json`` whichever drove them.
What differs is only what a refused call means: a run cancels its agent's scope, an episode
finishes itself.

The parts: the setup (``_setup.py``: what the rollout is, frozen before it starts), the ledger
(``_ledger.py``: its counters), the trace (``_trace.py``), the end (``_end.py``: decided once,
by one pure function), grading (``_grading.py``), the loop's checkpoint and clock
(``_fastpath.py``) and the faults injected on purpose (``_faults.py``: a rollout without a fault
plan pays one ``is None`` per call for them).

Phases: :meth:`Rollout.open` (run directory, ``run_start``, the clock starts) -> calls ->
the driver settles the :class:`~silo_async._end.End` -> :meth:`Rollout.finish` (output,
verifier, artifacts; shielded and bounded).
"""

from __future__ import annotations

import difflib
import math
import time
import traceback
from collections.abc import Awaitable
from typing import Any, TypeVar

import anyio

from ._conversation import Conversation, RolloutPort, split_tools
from ._end import End, Refusal, Stop, error_text, leaf_exception
from ._fastpath import loop_hooks
from ._faults import FaultSchedule, Injection
from ._grading import (
    Graded,
    finish_grading,
    outcome_of,
    rendered_output,
    start_grading,
    verifier_event,
    world_diff,
)
from ._jsonutil import Packed, ThawedOnRead, compact_json, thaw
from ._ledger import Ledger
from ._modelstep import POLICY_VERSION, ModelStep
from ._play import replayer
from ._result import RunResult
from ._setup import RolloutSetup
from ._taskuser import MESSAGE_USER, task_prompt
from ._telemetry import rollout_observer
from ._tools import BoundTool, ToolFault, ToolOutcome, ToolResult, ToolSpec
from ._trace import TraceRecorder, utc_now_iso
from ._user import MESSAGE_USER_TOOL
from ._verify import VerifierContext
from .runs import RunDir

__all__ = ["Rollout"]

_UNSET: Any = object()
_T = TypeVar("_T")


class Rollout:
    """One rollout as it happens: its world, ledger and trace, and how it ended.

    Attributes:
        setup: what the rollout is (frozen).
        ledger: its counters.
        trace: its events.
        deadline: the time limit's deadline on the event loop's clock (set by :meth:`open`).
        stopped: the first limit that tripped, if any.
        end: how it ended, once :meth:`finish` has begun.
        chat: a conversational task's conversation (``None`` when the task has no user).
    """

    __slots__ = (
        "by_name",
        "chat",
        "deadline",
        "end",
        "hooks",
        "in_flight",
        "ledger",
        "observer",
        "partial",
        "prompt",
        "schedule",
        "setup",
        "snapshot",
        "state",
        "stopped",
        "trace",
    )

    def __init__(self, setup: RolloutSetup, *, cut_on_end: bool = False) -> None:
        """Build the rollout's fresh world.

        Args:
            setup: what the rollout is.
            cut_on_end: cancel ``async`` tool calls still in flight when the rollout ends
                (an episode's; a run's agent scope does that itself).
        """
        self.setup = setup
        self.hooks = loop_hooks()
        self.state, snapshot = setup.env.fresh_world(setup.task)
        self.snapshot: Packed | None = snapshot
        self.by_name = setup.env.runtime_tools(self.state)
        #: What the agent is given (``ctx.task``): the task's prompt, with the user's own
        #: first message once it wrote one (:meth:`opening`).
        self.prompt = setup.task.prompt
        self.trace = TraceRecorder()
        self.ledger = Ledger()
        self.deadline = math.inf
        self.stopped: Stop | None = None
        self.partial: Any = _UNSET
        self.end: End | None = None
        self.in_flight: set[anyio.CancelScope] | None = set() if cut_on_end else None
        self.chat: Conversation | None = None
        script = setup.task.user_script
        if script is not None and setup.user is not None:
            self.by_name, owned = split_tools(self.by_name, script.tools)
            self.chat = Conversation(setup.user, script, owned, self.port())
        faults = setup.faults
        self.schedule: FaultSchedule | None = (
            None if faults is None else faults.schedule(setup.task.id, setup.run_index)
        )
        #: Told the finished result when telemetry is on (``None``, and nothing loaded, if off).
        self.observer = rollout_observer(setup.options)

    def port(self) -> RolloutPort:
        """What this rollout's conversation may use of it."""
        return RolloutPort(
            task=self.setup.task,
            ledger=self.ledger,
            trace=self.trace,
            checkpoint=self.hooks.checkpoint,
            ended=self.ended,
            awaited=None if self.in_flight is None else self.awaited,
        )

    def ended(self) -> str | None:
        """The end's reason once the rollout has ended, else ``None``."""
        return None if self.end is None else self.end.reason

    def specs(self) -> list[ToolSpec]:
        """What the agent sees of its tools, in registry order (``message_user`` last)."""
        specs = [tool.spec for tool in self.by_name.values()]
        if self.chat is not None:
            specs.append(MESSAGE_USER_TOOL.spec)
        return specs

    async def open(self) -> None:
        """Create the run directory (off the event loop), start the clock, record ``run_start``.

        The time limit starts once the rollout is ready for its first call: a slow disk (or a
        busy machine) creating the run directory does not eat into the agent's time.
        """
        setup = self.setup
        if setup.run_dir is not None:
            self.trace.attach(await RunDir(setup.run_dir).create())
        self.deadline = self.hooks.time() + setup.limits.seconds
        self.trace.emit_plain(
            "run_start",
            {
                "runId": setup.run_id,
                "environment": setup.env.name,
                "task": setup.task.to_dict(),
                "agent": setup.agent_name,
                # The rollout's place in its eval, so a directory torn by a kill can be placed.
                "run": setup.run_index,
                "config": setup.limits.config(),
                "tools": [spec.name for spec in self.specs()],
                # The fault plan it meets: in an eval with a baseline, what tells a torn
                # directory of a faulted rollout from one of the baseline (eval._resume).
                **({} if setup.faults is None else {"faults": setup.faults.config()}),
            },
        )

    async def opening(self) -> None:
        """Ask a user whose task gives no ``opening`` for its first message, before the agent.

        The drivers call it once the rollout is open, under its limits (a run: inside the
        agent's scope; an episode: cut by its end). The agent's prompt is then the instruction,
        a blank line and ``User: <that message>``; the instruction alone if there is none.
        """
        chat = self.chat
        if chat is None or chat.script.opening:
            return
        said = await chat.open()
        if said is not None:
            self.prompt = task_prompt(self.setup.task.instruction, said)

    # -- calls -------------------------------------------------------------------------------

    async def call(self, name: str, input: Any) -> ToolResult | Refusal:
        """Execute one call, or refuse it: the one call path of both drivers.

        Always a checkpoint first. A refused call is neither executed nor recorded. An executed
        one is counted and traced as ``tool_call`` then ``tool_result``; rejected and failing
        calls come back as error values.
        """
        await self.hooks.checkpoint()
        chat = self.chat
        if chat is not None and name == MESSAGE_USER:
            # A turn, not a world call: never counted in toolCalls nor refused by their limit
            # (the user's own tool calls take the sibling path, user_call).
            refusal = self.closed()
            if refusal is not None:
                return refusal
            said = await chat.turn(input)
            return Refusal.CUT if said is None else said
        ledger = self.ledger
        if (
            self.end is not None
            or self.stopped is not None
            or ledger.calls >= self.setup.limits.max_tool_calls
            or self.hooks.time() >= self.deadline
        ):  # the common case in one test; refusal() says which one, in its order
            refusal = self.refusal()
            if refusal is not None:
                return refusal
        tool = self.by_name.get(name)
        ledger.calls = call_id = ledger.calls + 1
        if tool is None:
            tool_json = compact_json(name)
            at = self.trace.tool_call(call_id, tool_json, input)
            unknown = ToolOutcome(self.unknown_tool(name))
            return self.answer(call_id, None, tool_json, unknown, time.perf_counter(), at)
        at = self.trace.tool_call(call_id, tool.name_json, input)
        # The call's injected faults are drawn here: a world tool's call
        # only, once it is counted, so a faulted call counts against max_tool_calls.
        schedule = self.schedule
        if schedule is not None:
            drawn = schedule.draw(call_id, tool.name)
            if drawn is not None:
                return await self.call_faulted(call_id, tool, input, drawn, at)
        started = time.perf_counter()
        if tool.is_async:
            outcome = await self.awaited(tool.invoke(input))
            if isinstance(outcome, Refusal):
                return outcome
        else:
            outcome = tool.invoke_sync(input)
        return self.answer(call_id, tool.name, tool.name_json, outcome, started, at)

    def answer(
        self,
        call_id: int,
        tool: str | None,
        tool_json: str,
        outcome: ToolOutcome,
        started: float,
        at: str,
        *,
        counted: bool = True,
    ) -> ToolResult:
        """Count and trace what an executed call gave (the one place either happens).

        ``tool`` is the name of the world tool that ran (``None``: an unknown name); a failure
        is the agent's error or the environment's fault, a success recovers the faults injected
        into that tool so far. An answer that is itself an injected fault is not ``counted``.
        """
        result, fault = outcome
        if counted:
            if result.is_error:
                self.ledger.count_failure(fault)
            elif tool is not None and self.schedule is not None:
                self.ledger.count_success(tool)
        elapsed = time.perf_counter() - started
        self.trace.tool_result(call_id, tool_json, result, elapsed, fault, at)
        return result

    async def call_faulted(
        self, call_id: int, tool: BoundTool, input: Any, drawn: Injection, at: str
    ) -> ToolResult | Refusal:
        """The rest of a call that faults strike: record them, wait, then fail or run the tool.

        An error fault answers instead of the tool (the world is unchanged) and is neither a
        ``toolErrors`` nor a ``toolFaults``; a wait counts against the deadline, and a call
        whose wait reaches it is refused as late (``Refusal.LATE``), never executed.
        """
        name = tool.name
        for kind, ms in drawn.events:
            self.trace.emit(
                "fault_injected", {"callId": call_id, "tool": name, "kind": kind, "ms": ms}
            )
        self.ledger.count_injected(name, len(drawn.events))
        started = time.perf_counter()
        if drawn.wait_ms:
            refused = await self.wait_injected(drawn.wait_ms)
            if refused is not None:
                return refused
        if drawn.error is not None:
            injected = ToolOutcome(ToolResult(drawn.error, True))
            return self.answer(call_id, name, tool.name_json, injected, started, at, counted=False)
        outcome = await self.awaited(tool.invoke(input))
        if isinstance(outcome, Refusal):
            return outcome
        return self.answer(call_id, name, tool.name_json, outcome, started, at)

    async def awaited(self, call: Awaitable[_T]) -> _T | Refusal:
        """Await ``call`` (a tool's or a user's); ``Refusal.CUT`` when the rollout's end cut it.

        Only an episode's end cuts what is in flight (``cut_on_end``); a run's agent scope
        cancels its own calls.
        """
        in_flight = self.in_flight
        if in_flight is None:
            return await call
        with anyio.CancelScope() as scope:
            in_flight.add(scope)
            try:
                return await call
            finally:
                in_flight.discard(scope)
        return Refusal.CUT

    async def wait_injected(self, ms: int) -> Refusal | None:
        """Wait an injected fault's ``ms``; why the call may not go on (``None``: it may).

        A run's agent scope cancels the wait at the deadline itself; an episode's wait is cut
        like an ``async`` tool in flight when the episode ends (``CUT``). A wait that ends at
        or past the deadline leaves the call late (``LATE``), whichever backend woke first.
        """
        if await self.awaited(anyio.sleep(ms / 1000)) is Refusal.CUT:
            return Refusal.CUT
        return Refusal.LATE if self.hooks.time() >= self.deadline else None

    def closed(self) -> Refusal | None:
        """Why nothing more may happen (ended, stopped by a limit, late), or ``None``."""
        if self.end is not None:
            return Refusal.ENDED
        if self.stopped is not None:
            return Refusal.STOPPED
        if self.hooks.time() >= self.deadline:
            return Refusal.LATE
        return None

    def refusal(self) -> Refusal | None:
        """Why the next call may not run (``None``: it may); the call beyond the limit stops all."""
        closed = self.closed()
        if closed is not None:
            return closed
        limit = self.setup.limits.max_tool_calls
        if self.ledger.calls < limit:
            return None
        self.stopped = Stop("max_tool_calls", f"Tool call limit exceeded ({limit}).")
        return Refusal.OVER_LIMIT

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

    # -- what else the driver feeds in -------------------------------------------------------

    def record_step(self, step: ModelStep) -> bool:
        """Record a ``model_step`` event; True once a limit has stopped the rollout."""
        if self.end is not None:
            return False
        version = self.setup.options.policy_version
        if version is not None and POLICY_VERSION not in step.event:
            step.event[POLICY_VERSION] = version
        self.trace.emit("model_step", step.event)
        ledger = self.ledger
        ledger.count_step(step)
        limit = self.setup.limits.token_limit
        if self.stopped is None and limit is not None and ledger.tokens >= limit:
            message = f"Token limit reached ({ledger.tokens} of {limit} tokens)."
            self.stopped = Stop("max_tokens", message)
        return self.stopped is not None

    @property
    def has_partial(self) -> bool:
        """True once a partial answer was left (before the deadline)."""
        return self.partial is not _UNSET

    def partial_output(self) -> Any:
        """The partial answer left so far (``None`` if none)."""
        return None if self.partial is _UNSET else self.partial

    def set_partial(self, value: Any) -> None:
        """Keep a partial answer; one left after the deadline (or the end) is not graded."""
        if self.end is None and self.hooks.time() < self.deadline:
            self.partial = value

    def crash(self, exc: BaseException) -> str:
        """Record the agent's exception as an ``agent_error`` event; its error text."""
        leaf = leaf_exception(exc)
        fault = ToolFault(
            type=type(leaf).__name__,
            message=str(leaf),
            traceback="".join(traceback.format_exception(exc)),
        )
        self.trace.emit("agent_error", {"error": fault.to_dict()})
        return error_text(exc)

    # -- the end -----------------------------------------------------------------------------

    async def finish(self, end: End, answer: Any = None) -> RunResult:
        """End the rollout as ``end`` says: grade ``answer``, record the last events, write files.

        ``answer`` (the agent's return value, or ``finish()``'s) is graded unless it is
        ``None`` or came too late; the partial answer is graded otherwise. Shielded from outer
        cancellation and bounded. A sync verifier and no run directory mean nothing left to
        await: no checkpoint, so no cancellation can arrive and the shield (a cancel scope per
        rollout) is skipped.
        """
        if end.held_ms is not None:
            self.trace.emit("loop_blocked", {"overrunMs": end.held_ms})
        kept = answer if answer is not None and end.keeps_answer else self.partial_output()
        text, output, problem = rendered_output(kept)
        if problem is not None:
            end = end.with_output_problem(problem)
        self.end = end
        for scope in self.in_flight or ():
            scope.cancel()
        setup = self.setup
        initial = self.initial_world()
        self.trace.emit_plain("agent_output", {"output": text})
        self.trace.emit_plain(
            "run_end",
            {
                "terminationReason": end.reason,
                "error": end.error,
                **self.ledger.totals(),
                "durationMs": self.elapsed_ms(),
            },
        )
        chat = self.chat
        ctx = VerifierContext(
            agent_output=text,
            task=setup.task,
            output=output,
            conversation=() if chat is None else chat.record(),
            termination_reason=end.reason,
            replayer=replayer(setup.env, setup.task, self.snapshot),
        )
        graded = start_grading(setup.verifier, self.state, initial, ctx)
        if isinstance(graded, tuple) and setup.run_dir is None:
            return self.conclude(end, output, text, graded, initial)
        with anyio.CancelScope(shield=True):
            if not isinstance(graded, tuple):
                graded = await finish_grading(setup.verifier, graded)
            result = self.conclude(end, output, text, graded, initial)
            if setup.run_dir is not None:
                await RunDir(setup.run_dir).write(result)
        return result

    def initial_world(self) -> Any:
        """The verifier's ``initial``: a fresh copy of the snapshot taken before the agent acted.

        An environment with ``snapshot=`` (a world that is not JSON, often a large one) gets
        a mapping thawed as it is read (:class:`~silo_async._jsonutil.ThawedOnRead`).
        """
        snapshot = self.snapshot
        if snapshot is None:
            return None
        if self.setup.env.snapshot is not None and isinstance(snapshot, dict):
            return ThawedOnRead(snapshot)
        return thaw(snapshot)

    def conclude(self, end: End, output: Any, text: str, graded: Graded, initial: Any) -> RunResult:
        """Record the verifier's event, close the trace, build the result, let go of the world."""
        setup = self.setup
        outcome = outcome_of(setup.verifier, setup.task.id, graded)
        verifier_error = graded[1]
        event = verifier_event(setup.verifier, outcome, verifier_error)
        self.trace.emit_plain("verifier_result", event)
        self.trace.close()
        diff = world_diff(self.snapshot, setup.env.as_json(self.state), initial)
        # A finished rollout may still queue to write its files: it must not hold its world,
        # the world's copy and the tools bound to it meanwhile (1,000 crm worlds are 300 MB).
        self.state = self.snapshot = None
        self.by_name = {}
        self.chat = None
        errors = [e for e in (end.error, verifier_error) if e]
        if verifier_error is not None:
            end = end.with_verifier_failure()
        ledger = self.ledger
        result = RunResult(
            run_id=setup.run_id,
            environment=setup.env.name,
            task=setup.task,
            agent_name=setup.agent_name,
            agent_output=output,
            output_text=text,
            passed=outcome.passed,
            reward=outcome.reward,
            termination_reason=end.reason,
            tool_calls=ledger.calls,
            tool_errors=ledger.errors,
            tool_faults=ledger.faults,
            model_steps=ledger.steps,
            input_tokens=ledger.input_tokens,
            output_tokens=ledger.output_tokens,
            user_turns=ledger.user_turns,
            user_tool_calls=ledger.user_calls,
            user_input_tokens=ledger.user_input_tokens,
            user_output_tokens=ledger.user_output_tokens,
            error="; ".join(errors) if errors else None,
            verifier_id=setup.verifier.id,
            checks=list(outcome.checks),
            required_passed=outcome.required_passed,
            required_total=outcome.required_total,
            failed_required=list(outcome.failed_required),
            trace_lines=self.trace.frozen(),
            state_diff_json=diff,
            run_dir=setup.run_dir,
            started_at=utc_now_iso(setup.started),
            finished_at=utc_now_iso(),
            duration_ms=self.elapsed_ms(),
            config=setup.limits.config(),
            run_index=setup.run_index,
            resumed_model_steps=ledger.replayed,
            injected_faults=ledger.injected,
            recovered_faults=ledger.recovered,
            reward_valid=end.reward_valid,
            invalid_reason=end.invalid,
            faults=None if setup.faults is None else setup.faults.config(),
        )
        if self.observer is not None:
            self.observer(result, self.trace)
        return result

    def elapsed_ms(self) -> float:
        """Milliseconds since the rollout was set up."""
        return round((time.perf_counter() - self.setup.started_perf) * 1000, 3)


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
