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
from ._end import error_text, leaf_exception, settle
from ._environment import Environment
from ._errors import is_model_api_error
from ._faults import Faults
from ._limits import DEFAULT_LIMITS, Limits
from ._options import RunOptions, resolve_options
from ._result import RunResult
from ._rollout import Rollout
from ._setup import RolloutSetup
from ._user import UserFactory

__all__ = ["Agent", "agent_label", "run", "run_agent"]

Agent = Callable[[AgentContext], Awaitable[Any]]


def agent_label(agent: Agent) -> str:
    """The label a rollout records for ``agent``: its qualified name."""
    return str(getattr(agent, "__qualname__", None) or type(agent).__name__)


def _not_awaitable(returned: object) -> TypeError:
    return TypeError(
        "The agent must be an async function (async def agent(ctx)); "
        f"it returned {type(returned).__name__} instead of an awaitable."
    )


async def run(
    env: Environment,
    task_id: str,
    agent: Agent,
    *,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    runs_dir: str | Path | None = None,
    agent_name: str | None = None,
    limits: Limits | None = None,
    user: UserFactory | None = None,
    faults: Faults | str | None = None,
    options: RunOptions | None = None,
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
        limits: the three limits as one :class:`~silo_async.Limits` (instead of the keywords).
        user: for a task with a user, a function of the task returning a fresh
            :class:`~silo_async.User` (default: :meth:`~silo_async.ScriptedUser.from_task`).
        faults: faults to inject into the tool calls (a :class:`~silo_async.Faults`, or a
            SPEC string read with seed 0); a lone ``run()`` is run 1 of its task.
        options: how the rollout runs as one :class:`~silo_async.RunOptions` (instead of the
            limit, ``faults`` and ``user`` keywords).

    Returns:
        The graded :class:`RunResult`. Agent crashes, limits and verifier failures are
        recorded in it, never raised.

    Raises:
        SiloError: ``task_not_found`` or ``task_invalid`` (unknown verifier), before anything
            runs; ``faults_invalid`` for a SPEC that cannot be read.
        ValueError: invalid limits.
        TypeError: ``limits=`` given together with a limit keyword (or ``options=`` with any
            of the keywords it replaces), or ``user(task)`` is not a :class:`~silo_async.User`.
    """
    how = resolve_options(
        options,
        limits=limits,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        token_limit=token_limit,
        faults=faults,
        user=user,
    )
    task = env.task(task_id)
    setup = RolloutSetup.new(
        env,
        task,
        env.verifier_for(task),
        how,
        agent_name=agent_name or agent_label(agent),
        runs_dir=Path(runs_dir) if runs_dir is not None else None,
    )
    return await run_agent(setup, agent)


async def run_agent(setup: RolloutSetup, agent: Agent) -> RunResult:
    """Drive one rollout with ``agent``: what :func:`run`, ``run_many`` and ``evaluate`` share.

    The agent runs in its own cancel scope, cancelled by the deadline, by the call beyond the
    tool-call limit or by the token limit; then the end is settled (:func:`~silo_async._end.settle`)
    and the rollout graded and written, also after a crash or an outer cancellation (which is
    re-raised once the artifacts are written).

    The agent is awaited right here, not in a helper coroutine: with 10,000 rollouts waiting on a
    model, every frame per rollout is one more object for the garbage collector to walk.
    """
    rollout = Rollout(setup)
    await rollout.open()
    returned: Any = None
    crash: str | None = None
    # Raised while its scope was cancelled: the cancellation's doing (the agent's own cancel).
    crash_in_cancel = False
    model_error = False
    try:
        with anyio.move_on_at(rollout.deadline) as scope:
            try:
                await rollout.opening()
                awaitable = agent(AgentContext(rollout, scope))
                if not inspect.isawaitable(awaitable):
                    raise _not_awaitable(awaitable)
                returned = await awaitable
            except Exception as exc:
                crash = rollout.crash(exc)
                crash_in_cancel = scope.cancel_called
                model_error = is_model_api_error(leaf_exception(exc))
        end = settle(
            ended_at=anyio.current_time(),
            deadline=rollout.deadline,
            timeout_s=setup.limits.seconds,
            stop=rollout.stopped,
            crash=crash,
            scope_cancelled=crash_in_cancel,
            model_error=model_error,
            tool_faults=rollout.ledger.faults,
        )
    except BaseException as exc:
        # Only outer cancellation (or a bug of ours) gets here: grade and write, then re-raise.
        faults = rollout.ledger.faults
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            message = "Run cancelled by the caller."
            end = settle(ended_at=anyio.current_time(), cancelled=message, tool_faults=faults)
        else:
            failure = error_text(exc)
            end = settle(ended_at=anyio.current_time(), failure=failure, tool_faults=faults)
        await rollout.finish(end)
        raise
    return await rollout.finish(end, returned)
