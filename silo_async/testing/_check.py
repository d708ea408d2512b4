"""``check_environment``: the checks of ``env validate`` on any :class:`~silo_async.Environment`."""

from __future__ import annotations

from typing import Any

from .._checks import (
    Checker,
    ValidationReport,
    check_credibility,
    check_solver,
    check_task_links,
    check_tools,
    check_verifier_links,
    check_worlds,
)
from .._environment import Environment
from .._limits import Limits, resolve_limits
from ._families_check import DEFAULT_INSTANCES, check_families

__all__ = ["check_environment"]


async def check_environment(
    env: Environment,
    *,
    solver: Any = None,
    timeout: float = 120.0,
    limits: Limits | None = None,
    instances: int = DEFAULT_INSTANCES,
) -> ValidationReport:
    """Check a code-first (or loaded) environment the way ``silo-async env validate`` does.

    Fresh worlds share nothing mutable; the tools bind, with portable names, descriptions and
    object schemas; verifiers and tasks name each other; a do-nothing agent (which never
    speaks to a task's user) passes no task and every verifier runs on an untouched world; a
    task's user answers every rule with a message and owns only tools that exist. Given a
    ``solver``, every task must also pass with reward 1.0 (a task with a user, with its
    scripted user), and no script may end its conversation before a write the solver needs
    (``user_ends_early``). Every task family is checked on its first ``instances`` distinct
    instances (``family_invalid`` findings naming family and seed: an instance that does not
    build, a gold call that fails, a gold solution that changes nothing and asks no answer,
    the gold agent failing, a do-nothing agent passing, instructions all alike). The findings
    carry ``env validate``'s codes (plus ``solver_failed``); what only exists on disk (data
    files, the manifest, scaffolded stubs) is not checked here.

    Args:
        env: the environment.
        solver: an agent expected to solve every task (optional).
        timeout: the solver's time limit per task, in seconds.
        limits: the solver's limits per task, as one :class:`~silo_async.Limits` (instead of
            ``timeout``).
        instances: how many instances of each task family are checked (``env validate
            --instances``).

    Returns:
        The report; ``report.ok`` is True when no finding is an error.

    Raises:
        TypeError: ``limits=`` given together with ``timeout=``.
        ValueError: ``instances`` below 1.
    """
    if isinstance(instances, bool) or not isinstance(instances, int) or instances < 1:
        raise ValueError(f"instances must be a whole number >= 1; got {instances!r}.")
    solver_limits = resolve_limits(limits, timeout=timeout)
    c = Checker(env.name)
    c.counts["tasks"] = len(env.tasks)
    c.counts["verifiers"] = len(env.verifiers)
    made, state = check_worlds(c, env.create_state)
    tools_ok = made and check_tools(c, env.bind_tools, state)
    check_verifier_links(c, env.verifiers, env.tasks)
    runnable = check_task_links(c, env.tasks, {v.id for v in env.verifiers})
    if not env.tasks and not env.families:
        c.warning("no_tasks", "No tasks defined, so this environment cannot be run yet.")
    if made and tools_ok and c.counts["tools"] == 0:
        c.warning(
            "no_tools", "No tools registered, so the agent cannot observe or change anything."
        )
    if tools_ok and runnable:
        await check_credibility(c, env, runnable)
        if solver is not None:
            await check_solver(c, env, runnable, solver, solver_limits)
    if tools_ok:
        await check_families(c, env, instances)
    return c.report()
