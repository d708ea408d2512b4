"""run_many: many rollouts in one event loop, isolated, results in input order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio

from ._environment import Environment
from ._faults import Faults
from ._limits import DEFAULT_LIMITS, Limits
from ._options import RunOptions, resolve_options
from ._result import RunResult
from ._runner import Agent, agent_label, run_agent
from ._setup import RolloutSetup
from ._user import UserFactory

__all__ = ["check_counts", "check_tasks", "run_many", "run_pool"]


async def run_many(
    env: Environment,
    tasks: Sequence[str] | str,
    agent: Agent,
    *,
    runs: int = 1,
    concurrency: int = 64,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    runs_dir: str | Path | None = None,
    agent_name: str | None = None,
    on_result: Callable[[int, RunResult], None] | None = None,
    limits: Limits | None = None,
    user: UserFactory | None = None,
    faults: Faults | str | None = None,
    options: RunOptions | None = None,
) -> list[RunResult]:
    """Run every task ``runs`` times, at most ``concurrency`` rollouts at once, in one loop.

    Each rollout gets its own fresh world; one rollout's crash, limit or verifier failure never
    disturbs another. Results come back in input order — each task in the order given, its runs
    in order — never in completion order.

    Args:
        env: the environment.
        tasks: task ids (a single id is accepted too).
        agent: ``async def agent(ctx)``, called once per rollout.
        runs: rollouts per task (>= 1).
        concurrency: the most rollouts in flight at once (>= 1).
        max_tool_calls: per rollout, as for :func:`run`.
        timeout: per rollout, in seconds, as for :func:`run`.
        token_limit: per rollout, recorded tokens that stop the agent, as for :func:`run`.
        runs_dir: when given, each rollout writes ``runs_dir/<run_id>/``.
        agent_name: label recorded in traces and ``run.json``.
        on_result: called as ``on_result(index, result)`` as each rollout finishes (progress).
        limits: per rollout, the three limits as one :class:`~silo_async.Limits` (instead of
            the keywords).
        user: for tasks with a user, a function of the task returning a fresh
            :class:`~silo_async.User` for each rollout (default:
            :meth:`~silo_async.ScriptedUser.from_task`).
        faults: faults to inject into the tool calls (a :class:`~silo_async.Faults`, or a
            SPEC string read with seed 0); each rollout draws its own from its task and run
            number, so the results do not depend on ``concurrency``.
        options: how every rollout runs as one :class:`~silo_async.RunOptions` (instead of the
            limit, ``faults`` and ``user`` keywords).

    Raises:
        SiloError: an unknown task id or verifier, before any rollout starts;
            ``faults_invalid`` for a SPEC that cannot be read.
        ValueError: ``runs`` or ``concurrency`` below 1, or invalid limits.
        TypeError: ``limits=`` given together with a limit keyword (or ``options=`` with any
            of the keywords it replaces).
    """
    task_ids = [tasks] if isinstance(tasks, str) else list(tasks)
    check_counts(runs, concurrency)
    # Invalid limits fail before any rollout.
    how = resolve_options(
        options,
        limits=limits,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        token_limit=token_limit,
        faults=faults,
        user=user,
    )
    check_tasks(env, task_ids)
    plan = [env.task(task_id) for task_id in task_ids for _ in range(runs)]
    verifiers = {task.id: env.verifier_for(task) for task in plan}
    results: list[RunResult | None] = [None] * len(plan)
    pending = iter(range(len(plan)))
    base = Path(runs_dir) if runs_dir is not None else None
    label = agent_name or agent_label(agent)

    async def worker() -> None:
        # The worker awaits the rollout itself (no coroutine per job in between): at 10,000
        # concurrent rollouts each frame is one more live object for the garbage collector.
        for index in pending:
            task = plan[index]
            setup = RolloutSetup.new(
                env,
                task,
                verifiers[task.id],
                how,
                agent_name=label,
                runs_dir=base,
                run_index=index % runs + 1,
            )
            result = await run_agent(setup, agent)
            results[index] = result
            if on_result is not None:
                on_result(index, result)

    async with anyio.create_task_group() as tg:
        for _ in range(min(concurrency, len(plan))):
            tg.start_soon(worker)
    return [r for r in results if r is not None]


def check_counts(runs: int, concurrency: int) -> None:
    """Raise ValueError unless ``runs`` and ``concurrency`` are integers >= 1."""
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, got {runs!r}.")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an integer >= 1, got {concurrency!r}.")


def check_tasks(env: Environment, task_ids: Sequence[str]) -> None:
    """Fail fast, before any world is built: an unknown task or verifier raises SiloError."""
    for task_id in task_ids:
        env.verifier_for(env.task(task_id))


async def run_pool(count: int, concurrency: int, job: Callable[[int], Awaitable[None]]) -> None:
    """Await ``job(0)`` .. ``job(count - 1)``, at most ``concurrency`` at once, in one task group.

    A fixed pool of workers pulls indices from one iterator: no limiter, and no coroutine per
    job waiting its turn (10,000 queued rollouts would cost memory and garbage-collector time).
    """
    pending = iter(range(count))

    async def worker() -> None:
        for index in pending:
            await job(index)

    async with anyio.create_task_group() as tg:
        for _ in range(min(concurrency, count)):
            tg.start_soon(worker)
