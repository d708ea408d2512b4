"""Checks of a runnable environment that need no real agent: the heart of ``env validate``.

Shared by :func:`silo_async.testing.check_environment` (any :class:`~silo_async.Environment`)
and the project layer's ``validate`` (which adds the checks of files on disk), so both report
the same findings, in the same order, with the same codes. Credibility: a do-nothing agent runs
every task and any task it passes is an error, because a verifier that passes an untouched world
proves nothing; given a solver, every task must pass with reward 1.0.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from ._checks_users import check_ends, check_scripts
from ._environment import Environment, check_reserved_name
from ._errors import DefinitionError, SiloError
from ._limits import Limits
from ._many import run_many
from ._task import Task
from ._tools import BoundTool, bind_tools
from ._verify import Verifier

__all__ = [
    "Checker",
    "Finding",
    "ValidationReport",
    "check_credibility",
    "check_solver",
    "check_task_links",
    "check_tools",
    "check_verifier_links",
    "check_worlds",
]

# Names every major model API accepts for a function/tool.
_PORTABLE_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
NOOP_TIMEOUT = 30.0


@attrs.frozen
class Finding:
    """One problem found by ``validate``.

    Attributes:
        level: ``error`` (fails validation) or ``warning``.
        code: a stable machine-readable code such as ``task_verifier_unresolved``.
        message: one sentence naming the problem and where it is.
    """

    level: str
    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        """``{level, code, message}``."""
        return {"level": self.level, "code": self.code, "message": self.message}


@attrs.frozen
class ValidationReport:
    """The result of validating one environment.

    Attributes:
        environment: the environment name.
        findings: the findings in check order.
        counts: ``{data, tasks, tools, verifiers}``.
        solver: what a solver did (``{"passed", "tasks"}``: the tasks it passed with reward
            1.0, of those it ran), or None when no solver ran.
    """

    environment: str
    findings: tuple[Finding, ...]
    counts: dict[str, int]
    solver: dict[str, int] | None = None

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return not any(f.level == "error" for f in self.findings)

    @property
    def errors(self) -> list[Finding]:
        """The error-level findings."""
        return [f for f in self.findings if f.level == "error"]

    def to_dict(self) -> dict[str, Any]:
        """``{environment, ok, findings, counts, solver}`` as ``env validate --json`` prints it."""
        return {
            "environment": self.environment,
            "ok": self.ok,
            "findings": [f.to_dict() for f in self.findings],
            "counts": dict(self.counts),
            "solver": None if self.solver is None else dict(self.solver),
        }


class Checker:
    """Collects findings and counts while the checks run.

    Args:
        name: the environment name.
        base: the environment directory, so messages name files relative to it (optional).
    """

    def __init__(self, name: str, base: Path | None = None) -> None:
        self.name = name
        self.base = base
        self.findings: list[Finding] = []
        self.counts = {"data": 0, "tasks": 0, "tools": 0, "verifiers": 0}
        #: The bound tools' names, once they bound (what a task's ``user.tools`` may name).
        self.tool_names: set[str] | None = None
        #: What the solver did, once it ran: ``{"passed", "tasks"}``.
        self.solver: dict[str, int] | None = None

    def error(self, code: str, message: str) -> None:
        """Record an error (it fails validation)."""
        self.findings.append(Finding("error", code, message))

    def warning(self, code: str, message: str) -> None:
        """Record a warning (it never fails validation)."""
        self.findings.append(Finding("warning", code, message))

    def where(self, fn: Callable[..., Any]) -> str:
        """The file defining ``fn``, relative to the environment directory when inside it."""
        try:
            path = Path(inspect.getsourcefile(fn) or "")
        except TypeError:
            return "?"
        base = self.base.resolve() if self.base is not None else None
        if base is not None and path.is_absolute() and path.is_relative_to(base):
            return path.relative_to(base).as_posix()
        return str(path)

    def report(self) -> ValidationReport:
        """The findings so far, as a report."""
        return ValidationReport(self.name, tuple(self.findings), dict(self.counts), self.solver)


def _shares_mutable(a: Any, b: Any) -> bool:
    """Whether two worlds share a mutable container (rollouts would leak into each other)."""
    if isinstance(a, dict | list) and a is b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return any(k in b and _shares_mutable(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return any(_shares_mutable(x, y) for x, y in zip(a, b, strict=False))
    return False


def check_worlds(c: Checker, create_state: Callable[[], Any]) -> tuple[bool, Any]:
    """Two worlds can be made and share nothing mutable; returns ``(made, one world)``."""
    try:
        state = create_state()
        again = create_state()
    except Exception as exc:
        c.error("create_state_failed", f"create_state() raised {type(exc).__name__}: {exc}")
        return False, None
    if _shares_mutable(state, again) or (state is again and state is not None):
        c.error(
            "create_state_shared",
            "create_state() returned worlds that share mutable data, so rollouts would leak "
            "into each other. Return a fresh copy every call (silo.clone_json).",
        )
    return True, state


ToolHook = Callable[[Checker, BoundTool], None]


def check_tools(
    c: Checker, bind: Callable[[Any], Sequence[Any]], state: Any, extra: ToolHook | None = None
) -> bool:
    """The tools bind to a world, with portable names, descriptions and object schemas."""
    try:
        bound = bind_tools(state, bind(state))
        check_reserved_name((t.name for t in bound), c.name)
    except DefinitionError as exc:
        code = "tool_duplicate_name" if "more than once" in exc.message else "bind_tools_failed"
        c.error(code, exc.message)
        return False
    except SiloError as exc:  # a tool named message_user
        c.error(exc.code, exc.message)
        return False
    except Exception as exc:
        c.error("bind_tools_failed", f"bind_tools(state) raised {type(exc).__name__}: {exc}")
        return False
    c.counts["tools"] = len(bound)
    c.tool_names = {t.name for t in bound}
    for tool in bound:
        _check_tool(c, tool)
        if extra is not None:
            extra(c, tool)
    return True


def _check_tool(c: Checker, tool: BoundTool) -> None:
    name = tool.name
    if not _PORTABLE_TOOL_NAME.fullmatch(name):
        c.warning(
            "tool_name_unportable",
            f'Tool name "{name}" is rejected by some model APIs; use at most 64 letters, '
            "digits, underscores or hyphens.",
        )
    if not tool.spec.description.strip():
        c.warning("tool_no_description", f'Tool "{name}" has no description; the agent sees this.')
    if tool.spec.input_schema.get("type") != "object":
        c.error(
            "tool_schema_invalid",
            f'Tool "{name}" has an input schema whose type is not "object"; tool arguments are '
            "always an object.",
        )


VerifierHook = Callable[[Checker, Verifier], None]


def check_verifier_links(
    c: Checker,
    verifiers: Iterable[Verifier],
    tasks: Iterable[Task],
    extra: VerifierHook | None = None,
    broken: Collection[str] = (),
) -> None:
    """Each verifier grades a task that exists and names it back.

    ``broken``: ids of tasks whose files exist but cannot be read; each is a finding of its
    own, so a verifier of one is no orphan.
    """
    by_id = {t.id: t for t in tasks}
    for item in verifiers:
        task = by_id.get(item.task_id)
        if task is None and item.task_id in broken:
            pass
        elif task is None:
            c.warning(
                "verifier_orphan",
                f'Verifier "{item.id}" names task "{item.task_id}", which does not exist.',
            )
        elif task.verifier_id != item.id:
            c.error(
                "verifier_task_mismatch",
                f'Verifier "{item.id}" claims task "{item.task_id}", but that task is graded by '
                f'"{task.verifier_id}".',
            )
        if extra is not None:
            extra(c, item)


def check_task_links(c: Checker, tasks: Iterable[Task], verifier_ids: set[str]) -> list[str]:
    """Every task names a registered verifier; returns the ids of the tasks that do."""
    runnable: list[str] = []
    for task in tasks:
        if task.verifier_id in verifier_ids:
            runnable.append(task.id)
        else:
            c.error(
                "task_verifier_unresolved",
                f'Task "{task.id}" names verifier "{task.verifier_id}", which is not registered.',
            )
    return runnable


async def _noop_agent(ctx: Any) -> str:
    # The baseline every verifier must fail: it looks at nothing and changes nothing.
    return ""


async def check_credibility(c: Checker, env: Environment, task_ids: list[str]) -> None:
    """A do-nothing agent must pass no task, and every verifier must run on an untouched world.

    The do-nothing agent never speaks either: on a task with a user, passing means an agent
    that never talks to the user succeeds, which is an error too. The tasks' users are checked
    first (:func:`~silo_async._checks_users.check_scripts`).
    """
    check_scripts(c, env.tasks, c.tool_names)
    noop_limits = Limits(max_tool_calls=0, timeout=NOOP_TIMEOUT)
    results = await run_many(env, task_ids, _noop_agent, limits=noop_limits, agent_name="noop")
    for result in results:
        task = result.task
        if result.error is not None:
            c.error(
                "verifier_failed",
                f'Verifier "{task.verifier_id}" failed on the untouched world of task '
                f'"{task.id}": {result.error}',
            )
        elif result.passed and task.user_script is not None:
            c.error(
                "verifier_passes_noop",
                f'Task "{task.id}" passes with an agent that does nothing and never speaks to '
                f'the user: verifier "{task.verifier_id}" must require a change in the world, '
                "something told to the user or an answer.",
            )
        elif result.passed:
            c.error(
                "verifier_passes_noop",
                f'Task "{task.id}" passes with an agent that does nothing: verifier '
                f'"{task.verifier_id}" must require a change in the world or an answer.',
            )


async def check_solver(
    c: Checker, env: Environment, task_ids: list[str], solver: Any, limits: Limits
) -> None:
    """The solver must pass every task with reward 1.0 (so every task is solvable).

    Tasks with a user are played with their scripted user, whose script must then not end the
    conversation before a write the solver needs (:func:`~silo_async._checks_users.check_ends`).
    """
    results = await run_many(env, task_ids, solver, limits=limits, agent_name="solver")
    passed = sum(1 for r in results if r.passed and r.reward == 1.0)
    c.solver = {"passed": passed, "tasks": len(results)}
    for result in results:
        if result.passed and result.reward == 1.0:
            continue
        why = result.error or "failed checks: " + (", ".join(result.failed_required) or "none")
        user = " with the scripted user" if result.task.user_script is not None else ""
        c.error(
            "solver_failed",
            f'Task "{result.task.id}" is not solved by the solver{user} (passed '
            f"{result.passed}, reward {result.reward:.2f}, {result.termination_reason}): {why}",
        )
    await check_ends(c, env, results)
