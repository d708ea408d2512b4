"""run(): one rollout driven by an agent, under real limits, always graded, never lost.

Phases: prepare (fresh world, bound tools, trace) -> drive (the agent in its own cancel scope,
cancelled by the time limit, by the call beyond the tool-call limit or by the token limit) ->
finish (verifier and artifacts, shielded and bounded, also after a crash, a limit or an outer
cancellation, which is re-raised once the artifacts are written). The rollout itself is the
core shared with episodes (:mod:`silo_async._rollout`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from ._context import AgentContext
from ._environment import Environment
from ._limits import Limits
from ._result import RunResult
from ._rollout import Rollout, error_text
from ._task import Task
from ._verify import Verifier

__all__ = ["Agent", "agent_label", "run", "run_rollout"]

Agent = Callable[[AgentContext], Awaitable[Any]]

#: An event loop may fire a timer a hair before its deadline as the clock reads it: a scope
#: cancelled this close to its deadline was cancelled by the deadline.
_CLOCK_SLACK_S = 0.001


def agent_label(agent: Agent) -> str:
    """The label a rollout records for ``agent``: its qualified name."""
    return str(getattr(agent, "__qualname__", None) or type(agent).__name__)


def _not_awaitable(returned: object) -> TypeError:
    return TypeError(
        "The agent must be an async function (async def agent(ctx)); "
        f"it returned {type(returned).__name__} instead of an awaitable."
    )


def _settle(rollout: Rollout, scope: anyio.CancelScope, crashed: bool) -> None:
    """Decide why the agent phase ended: a limit, the deadline, a crash, or completion.

    Whatever the agent did, a phase that ends past the deadline is a ``timeout`` (an agent that
    blocks the event loop cannot be interrupted, but is not graded as on time), and what it
    returned late is not its answer.
    """
    ended_at = anyio.current_time()
    if rollout.stopped is not None:
        rollout.reason, message = rollout.stopped
        rollout.error = rollout.error or message
    elif ended_at > rollout.deadline or (
        scope.cancel_called and ended_at >= rollout.deadline - _CLOCK_SLACK_S
    ):
        rollout.output = None  # only a partial answer left before the deadline counts
        rollout.timed_out(ended_at)
    elif crashed:
        rollout.reason = "agent_error"


async def run(
    env: Environment,
    task_id: str,
    agent: Agent,
    *,
    max_tool_calls: int = 100,
    timeout: float | None = 120.0,
    token_limit: int | None = None,
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
        token_limit: recorded input + output tokens that stop the agent (``None``: no limit).
        runs_dir: when given, artifacts go to ``runs_dir/<run_id>/``.
        agent_name: label recorded in the trace and ``run.json`` (default: the function name).

    Returns:
        The graded :class:`RunResult`. Agent crashes, limits and verifier failures are
        recorded in it, never raised.

    Raises:
        SiloError: ``task_not_found`` or ``task_invalid`` (unknown verifier), before anything runs.
        ValueError: invalid limits.
    """
    limits = Limits(max_tool_calls, timeout, token_limit)
    task = env.task(task_id)
    return await run_rollout(
        env,
        task,
        env.verifier_for(task),
        limits,
        agent,
        runs_dir=Path(runs_dir) if runs_dir is not None else None,
        agent_name=agent_name or agent_label(agent),
    )


async def run_rollout(
    env: Environment,
    task: Task,
    verifier: Verifier,
    limits: Limits,
    agent: Agent,
    *,
    runs_dir: Path | None,
    agent_name: str,
    run_index: int = 1,
) -> RunResult:
    """:func:`run` once its arguments are checked (``run_many`` and ``evaluate`` share them).

    The agent is awaited right here, not in a helper coroutine: with 10,000 rollouts waiting on a
    model, every frame per rollout is one more object for the garbage collector to walk.
    """
    rollout = Rollout(
        env, task, verifier, limits, runs_dir=runs_dir, agent_name=agent_name, run_index=run_index
    )
    await rollout.open()
    crashed = False
    try:
        with anyio.move_on_at(rollout.deadline) as scope:
            try:
                returned = agent(AgentContext(rollout, scope))
                if not inspect.isawaitable(returned):
                    raise _not_awaitable(returned)
                rollout.output = await returned
            except Exception as exc:
                rollout.crash(exc)
                crashed = not scope.cancel_called
        _settle(rollout, scope, crashed)
    except BaseException as exc:
        # Only outer cancellation (or a bug of ours) gets here: grade and write, then re-raise.
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            rollout.reason, rollout.error = "cancelled", "Run cancelled by the caller."
        else:
            rollout.reason, rollout.error = "agent_error", error_text(exc)
        await rollout.finish()
        raise
    return await rollout.finish()
