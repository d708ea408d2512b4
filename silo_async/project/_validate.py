"""``validate()``: everything that can be checked without a real agent, as a report.

Findings carry stable codes (Silo's where they apply). ``ok`` means no error-level finding;
warnings never fail. Beyond Silo: tool schemas, scaffolded stubs left in place, worlds shared
between rollouts, and credibility — a do-nothing agent is run on every task (in memory) and any
task it passes is an error, because a verifier that passes an untouched world proves nothing.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread

from .._checks import (
    Checker,
    Finding,
    ValidationReport,
    check_credibility,
    check_solver,
    check_task_links,
    check_tools,
    check_verifier_links,
    check_worlds,
)
from .._environment import Environment
from .._errors import DefinitionError, SiloError
from .._limits import Limits
from .._runner import Agent
from .._tools import BoundTool
from .._verify import Verifier
from ..testing._families_check import DEFAULT_INSTANCES, check_families
from ._files import json_files
from ._loader import OpenedEnvironment, build_environment, open_environment
from ._stubs import TODO_MARKER, VERIFIER_TODO_LABEL

__all__ = ["Finding", "ValidationReport", "validate_environment"]


def _check_data(c: Checker, env_dir: Path) -> None:
    data_dir = env_dir / "data"
    if not data_dir.is_dir():
        c.warning("data_dir_missing", "No data/ directory.")
        return
    for path in json_files(data_dir):
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            c.error("data_invalid_json", f"data/{path.name} is not valid JSON: {exc}")
        else:
            c.counts["data"] += 1


def _load_failure(c: Checker, exc: SiloError) -> None:
    cause = exc.__cause__
    if isinstance(cause, DefinitionError):
        code = "tool_schema_invalid" if "input schema" in cause.message else "definition_invalid"
        c.error(code, f"{exc.message}")
    else:
        c.error("runtime_load_failed", exc.message)


def _tool_stub(c: Checker, tool: BoundTool) -> None:
    if _source_contains(tool.tool.fn, TODO_MARKER):
        c.error(
            "tool_not_implemented",
            f'Tool "{tool.name}" is still the scaffolded stub in {c.where(tool.tool.fn)}; '
            "implement it.",
        )


def _verifier_stub(c: Checker, item: Verifier) -> None:
    if _source_contains(item.fn, VERIFIER_TODO_LABEL):
        c.error(
            "verifier_not_implemented",
            f'Verifier "{item.id}" still has the scaffolded TODO check in {c.where(item.fn)}; '
            "replace it with the real success conditions.",
        )


def _source_contains(fn: Callable[..., Any], marker: str) -> bool:
    """Whether the body of ``fn``, read fresh from disk, contains ``marker``.

    Not :func:`inspect.getsource`: its line cache can serve a stale copy of a file edited a
    moment ago in this same process (same size, same mtime).
    """
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    try:
        text = Path(code.co_filename).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return False
    lines = text.splitlines()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if code.co_firstlineno in (first, node.lineno) and node.end_lineno is not None:
            return marker in "\n".join(lines[first - 1 : node.end_lineno])
    return False


def _check_verifiers(
    c: Checker, opened: OpenedEnvironment, broken: set[str]
) -> list[Verifier] | None:
    """Verifier findings; the verifiers when they are usable for a run, else None."""
    usable = True
    seen: set[str] = set()
    verifiers: list[Verifier] = []
    c.counts["verifiers"] = len(opened.verifiers)
    for index, item in enumerate(opened.verifiers):
        if not isinstance(item, Verifier):
            usable = False
            c.error(
                "verifier_invalid",
                f"verifiers[{index}] is a {type(item).__name__}, not a verifier made with "
                "@silo.verifier.",
            )
            continue
        verifiers.append(item)
        if item.id in seen:
            usable = False
            c.error(
                "verifier_duplicate_id", f'Verifier id "{item.id}" is registered more than once.'
            )
        seen.add(item.id)
    check_verifier_links(c, verifiers, opened.tasks, _verifier_stub, broken)
    return verifiers if usable else None


def _broken_task(problem: SiloError, verifier_ids: set[str]) -> str:
    """A broken task file's finding: its problems, and the verifier it names if unregistered."""
    named = problem.details.get("verifierId")
    if named is None or named in verifier_ids:
        return problem.message
    return f'{problem.message} It also names verifier "{named}", which is not registered.'


def _check_compiles(c: Checker, env_dir: Path) -> None:
    for path in sorted(env_dir.rglob("*.py")):
        rel = path.relative_to(env_dir)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        try:
            # compile(), not py_compile: same check, but no __pycache__ is written.
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:
            c.error("compile_error", f"{rel.as_posix()}:{exc.lineno}:{exc.offset} {exc.msg}")
        except (OSError, ValueError) as exc:
            c.error("compile_error", f"{rel.as_posix()}: {exc}")


def _check_runtime(c: Checker, environment: str, cwd: Path) -> tuple[Environment, list[str]] | None:
    """Load, world, tool, verifier and link checks (blocking: imports and builds worlds).

    Returns the environment and the tasks a do-nothing agent should run, when everything
    credibility needs is usable.
    """
    # A broken task file is one finding among others: the rest is still loaded and checked.
    broken: list[SiloError] = []
    try:
        opened = open_environment(environment, cwd, task_problems=broken)
    except SiloError as exc:
        _load_failure(c, exc)
        return None
    ids = {v.id for v in opened.verifiers if isinstance(v, Verifier)}
    for problem in broken:  # one finding per file, with every problem it has
        c.error(problem.code, _broken_task(problem, ids))
    c.counts["tasks"] = len(opened.tasks) + len(broken)
    if not opened.manifest.found:
        c.warning("manifest_missing", "No silo.environment.json; defaults were used.")
    made, state = check_worlds(c, opened.create_state)
    tools_ok = made and check_tools(c, opened.bind_tools, state, _tool_stub)
    verifiers = _check_verifiers(c, opened, {str(p.details.get("id")) for p in broken})
    runnable = check_task_links(c, opened.tasks, ids)
    if not opened.tasks and not opened.families:
        c.warning("no_tasks", "No tasks defined, so this environment cannot be run yet.")
    if made and c.counts["tools"] == 0 and tools_ok:
        c.warning(
            "no_tools", "No tools registered, so the agent cannot observe or change anything."
        )
    if tools_ok and verifiers is not None and (runnable or opened.families):
        try:
            return build_environment(opened), runnable
        except SiloError as exc:  # a families entry that is not a family, a duplicate id
            c.error(exc.code, exc.message)
    return None


def _check_files(c: Checker, env_dir: Path, cwd: Path) -> tuple[Environment, list[str]] | None:
    _check_data(c, env_dir)
    return _check_runtime(c, env_dir.name, cwd)


async def validate_environment(
    env_dir: Path,
    cwd: Path,
    *,
    solver: Agent | None = None,
    limits: Limits | None = None,
    instances: int = DEFAULT_INSTANCES,
) -> ValidationReport:
    """Validate the environment in ``env_dir`` (inside project ``cwd``).

    The file checks run on a worker thread (they read files, import the environment's code
    and build worlds); the do-nothing rollouts run on the caller's event loop.
    A missing environment is an error raised by the caller, never a finding.

    Args:
        env_dir: the environment directory.
        cwd: the project directory.
        solver: an agent expected to solve every task (``env validate --solver``): every task
            must pass with reward 1.0 (tasks with a user, with their scripted user, whose
            script must not end the conversation before a write the solver needs).
        limits: the solver's limits per task (default: :class:`~silo_async.Limits`).
        instances: how many instances of each task family are checked (``--instances``).
    """
    c = Checker(env_dir.name, env_dir)
    credible = await anyio.to_thread.run_sync(_check_files, c, env_dir, cwd)
    if credible is not None:
        environment, runnable = credible
        if runnable:
            await check_credibility(c, environment, runnable)
            if solver is not None:
                await check_solver(c, environment, runnable, solver, limits or Limits())
        await check_families(c, environment, instances)
    await anyio.to_thread.run_sync(_check_compiles, c, env_dir)
    return c.report()
