"""``validate()``: everything that can be checked without a real agent, as a report.

Findings carry stable codes (Silo's where they apply). ``ok`` means no error-level finding;
warnings never fail. Beyond Silo: tool schemas, scaffolded stubs left in place, worlds shared
between rollouts, and credibility — a do-nothing agent is run on every task (in memory) and any
task it passes is an error, because a verifier that passes an untouched world proves nothing.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from .._errors import DefinitionError, SiloError
from .._many import run_many
from .._task import Task
from .._tools import BoundTool, bind_tools
from .._verify import Verifier
from ._files import json_files
from ._loader import OpenedEnvironment, build_environment, open_environment
from ._stubs import TODO_MARKER, VERIFIER_TODO_LABEL

__all__ = ["Finding", "ValidationReport", "validate_environment"]

# Names every major model API accepts for a function/tool.
_PORTABLE_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NOOP_TIMEOUT = 30.0


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
    """

    environment: str
    findings: tuple[Finding, ...]
    counts: dict[str, int]

    @property
    def ok(self) -> bool:
        """True when no finding is an error."""
        return not any(f.level == "error" for f in self.findings)

    @property
    def errors(self) -> list[Finding]:
        """The error-level findings."""
        return [f for f in self.findings if f.level == "error"]

    def to_dict(self) -> dict[str, Any]:
        """``{environment, ok, findings, counts}`` as printed by ``env validate --json``."""
        return {
            "environment": self.environment,
            "ok": self.ok,
            "findings": [f.to_dict() for f in self.findings],
            "counts": dict(self.counts),
        }


class _Collector:
    def __init__(self, env_dir: Path) -> None:
        self.env_dir = env_dir
        self.findings: list[Finding] = []
        self.counts = {"data": 0, "tasks": 0, "tools": 0, "verifiers": 0}

    def error(self, code: str, message: str) -> None:
        self.findings.append(Finding("error", code, message))

    def warning(self, code: str, message: str) -> None:
        self.findings.append(Finding("warning", code, message))

    def where(self, fn: Callable[..., Any]) -> str:
        """The environment-relative file defining ``fn``, for messages."""
        try:
            path = Path(inspect.getsourcefile(fn) or "")
        except TypeError:
            return "?"
        if path.is_absolute() and path.is_relative_to(self.env_dir.resolve()):
            return path.relative_to(self.env_dir.resolve()).as_posix()
        return str(path)


def _check_data(c: _Collector) -> None:
    data_dir = c.env_dir / "data"
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


def _load_failure(c: _Collector, exc: SiloError) -> None:
    cause = exc.__cause__
    if isinstance(cause, DefinitionError):
        code = "tool_schema_invalid" if "input schema" in cause.message else "definition_invalid"
        c.error(code, f"{exc.message}")
    else:
        c.error("runtime_load_failed", exc.message)


def _shares_mutable(a: Any, b: Any) -> bool:
    """Whether two worlds share a mutable container (rollouts would leak into each other)."""
    if isinstance(a, dict | list) and a is b:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return any(k in b and _shares_mutable(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return any(_shares_mutable(x, y) for x, y in zip(a, b, strict=False))
    return False


def _make_state(c: _Collector, opened: OpenedEnvironment) -> tuple[bool, Any]:
    try:
        state = opened.create_state()
        again = opened.create_state()
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


def _check_tools(c: _Collector, opened: OpenedEnvironment, state: Any) -> bool:
    try:
        bound = bind_tools(state, opened.bind_tools(state))
    except DefinitionError as exc:
        code = "tool_duplicate_name" if "more than once" in exc.message else "bind_tools_failed"
        c.error(code, exc.message)
        return False
    except Exception as exc:
        c.error("bind_tools_failed", f"bind_tools(state) raised {type(exc).__name__}: {exc}")
        return False
    c.counts["tools"] = len(bound)
    for tool in bound:
        _check_tool(c, tool)
    return True


def _check_tool(c: _Collector, tool: BoundTool) -> None:
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
    if _source_contains(tool.tool.fn, TODO_MARKER):
        c.error(
            "tool_not_implemented",
            f'Tool "{name}" is still the scaffolded stub in {c.where(tool.tool.fn)}; implement it.',
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


def _check_verifiers(c: _Collector, opened: OpenedEnvironment) -> list[Verifier] | None:
    """Verifier findings; the verifiers when they are usable for a run, else None."""
    usable = True
    seen: set[str] = set()
    verifiers: list[Verifier] = []
    tasks = {t.id: t for t in opened.tasks}
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
        _check_verifier(c, item, tasks)
    return verifiers if usable else None


def _check_verifier(c: _Collector, item: Verifier, tasks: dict[str, Task]) -> None:
    task = tasks.get(item.task_id)
    if task is None:
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
    if _source_contains(item.fn, VERIFIER_TODO_LABEL):
        c.error(
            "verifier_not_implemented",
            f'Verifier "{item.id}" still has the scaffolded TODO check in {c.where(item.fn)}; '
            "replace it with the real success conditions.",
        )


def _check_tasks(c: _Collector, opened: OpenedEnvironment, verifier_ids: set[str]) -> list[str]:
    """Cross-references; returns the ids of tasks whose verifier resolves."""
    runnable: list[str] = []
    for task in opened.tasks:
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


async def _check_credibility(c: _Collector, opened: OpenedEnvironment, task_ids: list[str]) -> None:
    env = build_environment(opened)
    results = await run_many(
        env, task_ids, _noop_agent, max_tool_calls=0, timeout=_NOOP_TIMEOUT, agent_name="noop"
    )
    for result in results:
        task = result.task
        if result.error is not None:
            c.error(
                "verifier_failed",
                f'Verifier "{task.verifier_id}" failed on the untouched world of task '
                f'"{task.id}": {result.error}',
            )
        elif result.passed:
            c.error(
                "verifier_passes_noop",
                f'Task "{task.id}" passes with an agent that does nothing: verifier '
                f'"{task.verifier_id}" must require a change in the world or an answer.',
            )


def _check_compiles(c: _Collector) -> None:
    for path in sorted(c.env_dir.rglob("*.py")):
        rel = path.relative_to(c.env_dir)
        if any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
            continue
        try:
            # compile(), not py_compile: same check, but no __pycache__ is written.
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except SyntaxError as exc:
            c.error("compile_error", f"{rel.as_posix()}:{exc.lineno}:{exc.offset} {exc.msg}")
        except (OSError, ValueError) as exc:
            c.error("compile_error", f"{rel.as_posix()}: {exc}")


async def _check_runtime(c: _Collector, environment: str, cwd: Path) -> None:
    try:
        opened = open_environment(environment, cwd)
    except SiloError as exc:
        _load_failure(c, exc)
        return
    c.counts["tasks"] = len(opened.tasks)
    if not opened.manifest.found:
        c.warning("manifest_missing", "No silo.environment.json; defaults were used.")
    made, state = _make_state(c, opened)
    tools_ok = made and _check_tools(c, opened, state)
    verifiers = _check_verifiers(c, opened)
    ids = {v.id for v in opened.verifiers if isinstance(v, Verifier)}
    runnable = _check_tasks(c, opened, ids)
    if not opened.tasks:
        c.warning("no_tasks", "No tasks defined, so this environment cannot be run yet.")
    if made and c.counts["tools"] == 0 and tools_ok:
        c.warning(
            "no_tools", "No tools registered, so the agent cannot observe or change anything."
        )
    if tools_ok and verifiers is not None and runnable:
        await _check_credibility(c, opened, runnable)


async def validate_environment(env_dir: Path, cwd: Path) -> ValidationReport:
    """Validate the environment in ``env_dir`` (inside project ``cwd``).

    A missing environment is an error raised by the caller, never a finding.
    """
    c = _Collector(env_dir)
    _check_data(c)
    await _check_runtime(c, env_dir.name, cwd)
    _check_compiles(c)
    return ValidationReport(env_dir.name, tuple(c.findings), c.counts)
