"""Episodes: one rollout driven from outside, one call at a time.

``run()`` calls an agent; an MCP client, an RL trainer or an HTTP gym drives the rollout itself.
An :class:`Episode` is that rollout: the same core (:mod:`silo_async._rollout`) validates and
records the calls, grades and writes the artifacts, so the same calls and the same output give
the same ``result.json`` and ``state-diff.json`` as ``run()``.

Nobody may be calling when a limit passes, so an episode enforces its limits itself: a
supervisor task finishes it at the deadline (cancelling any call in flight) or once the token
limit is reached; the call beyond ``max_tool_calls`` finishes it before returning. After the end,
every call answers ``invalid_state`` and executes nothing.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from ._end import Refusal, leaf_exception, settle
from ._environment import Environment
from ._errors import is_model_api_error
from ._faults import Faults
from ._limits import DEFAULT_LIMITS, Limits
from ._modelstep import ModelStep, ModelStepRecorder
from ._options import RunOptions, resolve_options
from ._result import RunResult
from ._rollout import Rollout
from ._setup import RolloutSetup
from ._tools import ToolResult, ToolSpec
from ._user import UserFactory

__all__ = ["Episode", "episode", "open_episode"]


def _refusal(code: str, message: str) -> ToolResult:
    return ToolResult({"code": code, "message": message}, is_error=True)


class Episode(ModelStepRecorder):
    """One rollout driven from outside (docs/agents.md). Make one with :func:`episode`.

    Use it as an async context manager, entered and exited in one task; inside, ``call_tool``,
    ``finish`` and the rest may be called from any task of the same event loop. Leaving the
    block finishes the episode if nobody did (``completed``, with the output set so far); an
    exception leaving the block finishes it as ``agent_error`` and an outer cancellation as
    ``cancelled`` (written, then re-raised).

    Attributes:
        task: the task's instruction (as ``AgentContext.task``: with a user, its opening too).
        task_id: the task's id.
        tools: the tools, as :class:`ToolSpec` (as ``AgentContext.tools``).
        policy: the environment's policy, or ``None`` (as ``AgentContext.policy``).
    """

    def __init__(
        self,
        env: Environment,
        task_id: str,
        options: RunOptions,
        *,
        runs_dir: Path | None,
        agent_name: str,
    ) -> None:
        self._env = env
        self._task = env.task(task_id)
        self._verifier = env.verifier_for(self._task)
        self._options = options
        self._runs_dir = runs_dir
        self._agent_name = agent_name
        self._rollout: Rollout | None = None
        self._group: TaskGroup | None = None
        self._ending = False
        self._done: anyio.Event | None = None
        self._wake: anyio.Event | None = None
        self._result: RunResult | None = None
        self.task = self._task.prompt
        self.task_id = self._task.id
        self.policy: str | None = env.policy
        self.tools: list[ToolSpec] = []

    # -- the block ---------------------------------------------------------------------------

    async def __aenter__(self) -> Episode:
        if self._rollout is not None:
            raise RuntimeError("An episode can be entered only once; open a new one.")
        setup = RolloutSetup.new(
            self._env,
            self._task,
            self._verifier,
            self._options,
            agent_name=self._agent_name,
            runs_dir=self._runs_dir,
        )
        # A call in flight when the episode ends is cut short: nobody else would stop it.
        rollout = Rollout(setup, cut_on_end=True)
        self._rollout = rollout
        self._done, self._wake = anyio.Event(), anyio.Event()
        self.tools = rollout.specs()
        await rollout.open()
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._supervise)
        await rollout.opening()  # a user who writes its own first message, under the limits
        self.task = rollout.prompt
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        group = self._group
        assert group is not None
        cancelled = isinstance(exc, anyio.get_cancelled_exc_class())
        try:
            if exc is None:
                await self._end()
            elif cancelled:
                await self._end(cancelled="Episode cancelled by the caller.")
            elif not self._ending:
                model_error = is_model_api_error(leaf_exception(exc))
                await self._end(crash=self._core.crash(exc), model_error=model_error)
        finally:
            group.cancel_scope.cancel()
            # Only a cancellation is handed to the task group, so that it propagates: any other
            # exception must leave the block as it is, not wrapped in an exception group.
            if cancelled:
                await group.__aexit__(exc_type, exc, tb)
            else:
                await group.__aexit__(None, None, None)
        return None

    async def _supervise(self) -> None:
        """Finish the episode at its deadline, or once a limit asks for it, with nobody calling."""
        assert self._wake is not None
        with anyio.move_on_at(self._core.deadline):
            await self._wake.wait()
        if not self._ending:
            await self._end()

    # -- what a client does ------------------------------------------------------------------

    @property
    def finished(self) -> bool:
        """True once the episode has ended and :attr:`result` holds its graded result.

        While an ending is being graded and written, ``finished`` is still false but every
        call already answers ``invalid_state``.
        """
        return self._result is not None

    @property
    def ended(self) -> bool:
        """True from the moment the episode ends (its grading may still be under way)."""
        return self._ending

    @property
    def result(self) -> RunResult | None:
        """The graded result, once the episode has finished."""
        return self._result

    @property
    def run_id(self) -> str:
        """The rollout's run id (also its run directory's name)."""
        return self._core.setup.run_id

    @property
    def run_dir(self) -> Path | None:
        """Where the artifacts go, or ``None``."""
        return self._core.setup.run_dir

    @property
    def tool_calls(self) -> int:
        """Tool calls executed so far."""
        return self._core.ledger.calls

    @property
    def remaining_time(self) -> float:
        """Seconds left before the deadline (``inf`` when there is none)."""
        deadline = self._core.deadline
        return math.inf if math.isinf(deadline) else max(0.0, deadline - anyio.current_time())

    def set_output(self, value: Any) -> None:
        """Leave the answer graded if the episode ends without :meth:`finish` giving one."""
        self._core.set_partial(value)

    def _record_step(self, step: ModelStep) -> None:
        if self._ending:
            return
        if self._core.record_step(step) and self._wake is not None:  # the token limit
            self._wake.set()  # the episode finishes itself

    async def call_tool(self, name: str, input: dict[str, Any] | None = None) -> ToolResult:
        """Call a tool by name: the same validation, errors-as-values and trace as ``run()``.

        Always a checkpoint. The call beyond ``max_tool_calls`` is neither executed nor
        recorded: it finishes the episode and returns ``limit_exceeded``. A call in flight at
        the deadline is cancelled and returns ``limit_exceeded``. After the end, every call
        returns ``invalid_state``.
        """
        result = await self._core.call(name, input)
        if isinstance(result, ToolResult):
            return result
        return await self._refused(result)

    async def _refused(self, refusal: Refusal) -> ToolResult:
        """What a refused call means to an episode: a limit or the deadline finishes it."""
        if refusal is Refusal.CUT:  # only the episode's end cuts a call: wait until it is written
            await self.wait_finished()
            message = f"The call was cancelled: the episode ended ({self._end_reason()})."
            return _refusal("limit_exceeded", message)
        if refusal is not Refusal.ENDED:
            await self._end()
        stop = self._core.stopped
        if refusal is Refusal.OVER_LIMIT and stop is not None:
            return _refusal("limit_exceeded", f"{stop.message[:-1]}: the episode has ended.")
        return self._after_end()

    async def finish(self, answer: Any = None) -> RunResult:
        """End the episode with ``answer`` as the output; grade and write it once.

        Idempotent: later calls (and calls after a limit ended it) return the same result.
        ``None`` keeps the output left with :meth:`set_output`.
        """
        return await self._end(answer)

    async def wait_finished(self) -> RunResult:
        """Wait until the episode has ended, by any cause, and return its result."""
        if self._result is None:
            if self._done is None:
                raise RuntimeError("The episode has not started: use `async with episode(...)`.")
            await self._done.wait()
        if self._result is None:
            raise RuntimeError("The episode could not be graded (see the error above).")
        return self._result

    # -- the end -----------------------------------------------------------------------------

    @property
    def _core(self) -> Rollout:
        if self._rollout is None:
            raise RuntimeError("The episode has not started: use it as `async with episode(...)`.")
        return self._rollout

    def _end_reason(self) -> str:
        end = self._core.end
        return end.reason if end is not None else "completed"

    def _after_end(self) -> ToolResult:
        return _refusal("invalid_state", f"The episode has ended ({self._end_reason()}).")

    async def _end(
        self,
        answer: Any = None,
        *,
        crash: str | None = None,
        cancelled: str | None = None,
        model_error: bool = False,
    ) -> RunResult:
        """Finish once: settle how it ended, grade and write; later callers wait for that."""
        if self._ending:
            return await self.wait_finished()
        self._ending = True
        core = self._core
        end = settle(
            ended_at=anyio.current_time(),
            deadline=core.deadline,
            timeout_s=core.setup.limits.seconds,
            stop=core.stopped,
            crash=crash,
            cancelled=cancelled,
            model_error=model_error,
            tool_faults=core.ledger.faults,
        )
        assert self._wake is not None and self._done is not None
        self._wake.set()
        try:
            self._result = await core.finish(end, answer)
        finally:
            self._done.set()  # waiters must never hang, even if grading broke
        return self._result


def episode(
    env: Environment,
    task_id: str,
    *,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    runs_dir: str | Path | None = None,
    agent_name: str = "mcp",
    limits: Limits | None = None,
    user: UserFactory | None = None,
    faults: Faults | str | None = None,
) -> Episode:
    """Open one rollout of ``task_id`` to be driven from outside (use it with ``async with``).

    Example::

        async with silo.episode(env, "TASK-001", timeout=60) as ep:
            r = await ep.call_tool("get_opportunity", {"opportunityId": "OPP-004"})
            result = await ep.finish("answer")

    Args:
        env: the environment.
        task_id: the task to play.
        max_tool_calls: calls executed before the next one ends the episode (default 100).
        timeout: seconds from the start before the episode ends itself (``None``: no limit).
        token_limit: recorded input + output tokens that end the episode (``None``: no limit).
        runs_dir: when given, artifacts go to ``runs_dir/<run_id>/``.
        agent_name: label recorded in the trace and ``run.json``.
        limits: the three limits as one :class:`~silo_async.Limits` (instead of the keywords).
        user: for a task with a user, a function of the task returning a fresh
            :class:`~silo_async.User` (default: :meth:`~silo_async.ScriptedUser.from_task`).
        faults: faults to inject into the tool calls (a :class:`~silo_async.Faults`, or a
            SPEC string read with seed 0); an episode is run 1 of its task, so the same calls
            meet the same faults as a lone ``run()``.

    Returns:
        The :class:`Episode`; the world is built when the block is entered.

    Raises:
        SiloError: ``task_not_found`` or ``task_invalid`` (unknown verifier);
            ``faults_invalid`` for a SPEC that cannot be read.
        ValueError: invalid limits.
        TypeError: ``limits=`` given together with a limit keyword.
    """
    how = resolve_options(
        None,
        limits=limits,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        token_limit=token_limit,
        faults=faults,
        user=user,
    )
    return open_episode(env, task_id, how, runs_dir=runs_dir, agent_name=agent_name)


def open_episode(
    env: Environment,
    task_id: str,
    options: RunOptions,
    *,
    runs_dir: str | Path | None = None,
    agent_name: str = "mcp",
) -> Episode:
    """Open an episode from one :class:`RunOptions` (how the servers open theirs)."""
    runs = Path(runs_dir) if runs_dir is not None else None
    return Episode(env, task_id, options, runs_dir=runs, agent_name=agent_name)
