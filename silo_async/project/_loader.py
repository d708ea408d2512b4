"""The single loader: from ``.silo/environments/<name>/`` to a runnable ``silo.Environment``.

Two layers: :func:`open_environment` reads the manifest, imports the entrypoint, checks the
contract and discovers the tasks without judging the pieces (``validate`` inspects them one by
one); :func:`load_environment` then builds the :class:`~silo_async.Environment` a run needs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs

from .._environment import Environment, check_reserved_name
from .._errors import SiloError
from .._family import TaskFamily
from .._origin import remember
from .._task import Task
from .._tools import Tool
from .._verify import Verifier
from ._files import find_environment, json_files, read_json_as
from ._importer import import_environment
from ._manifest import Manifest, read_manifest, resolve_entrypoint

__all__ = [
    "OpenedEnvironment",
    "check_data_files",
    "discover_tasks",
    "load_environment",
    "open_environment",
]


@attrs.frozen(eq=False)
class OpenedEnvironment:
    """An imported environment whose contract has the right shape.

    Attributes:
        name: the environment's directory name.
        path: the environment directory.
        manifest: the manifest, defaults filled in.
        entrypoint: the absolute entrypoint file.
        module: the imported entrypoint module.
        create_state: the module's ``create_state``.
        bind_tools: the module's ``bind_tools``.
        verifiers: the module's ``verifiers`` entries, unchecked.
        tasks: the discovered tasks, sorted by id, then the module's own ``tasks`` (a world
            whose tasks come from elsewhere, such as an imported benchmark, exports them).
        families: the module's ``families`` entries, unchecked (empty when it exports none).
        vary: the module's ``vary``, or ``None``.
        setup: the module's ``setup`` (``Environment(setup=...)``), if it exports one.
        snapshot: the module's ``snapshot`` (``Environment(snapshot=...)``), if any.
        policy: the module's ``policy`` (``Environment(policy=...)``), if any.
    """

    name: str
    path: Path
    manifest: Manifest
    entrypoint: Path
    module: ModuleType
    create_state: Callable[[], Any]
    bind_tools: Callable[[Any], Sequence[Any]]
    verifiers: tuple[Any, ...]
    tasks: tuple[Task, ...]
    families: tuple[Any, ...] = ()
    vary: Any = None
    setup: Callable[[Any, Task], Any] | None = None
    snapshot: Callable[[Any], Any] | None = None
    policy: str | None = None


def _contract(module: ModuleType, environment: str) -> tuple[Any, Any, tuple[Any, ...]]:
    create_state = getattr(module, "create_state", None)
    bind_tools = getattr(module, "bind_tools", None)
    verifiers = getattr(module, "verifiers", None)
    missing = [
        label
        for label, ok in (
            ("create_state()", callable(create_state)),
            ("bind_tools()", callable(bind_tools)),
            ("a verifiers list", isinstance(verifiers, list | tuple)),
        )
        if not ok
    ]
    if missing:
        raise SiloError(
            "runtime_contract_invalid",
            f'Environment "{environment}" does not export {", ".join(missing)}. '
            "A runnable environment must export create_state, bind_tools and verifiers.",
            {"environment": environment, "missing": missing},
        )
    assert isinstance(verifiers, list | tuple)
    return create_state, bind_tools, tuple(verifiers)


def _families(module: ModuleType, environment: str) -> tuple[tuple[Any, ...], Any]:
    """The entrypoint's ``families`` list (optional) and ``vary`` (optional), shapes checked.

    Only the entrypoint's exports are read: a ``families/`` directory it does not export
    is not looked at (magic for data, never for code).
    """
    families = getattr(module, "families", None)
    vary = getattr(module, "vary", None)
    if families is not None and not isinstance(families, list | tuple):
        raise SiloError(
            "runtime_contract_invalid",
            f'Environment "{environment}" exports families as a {type(families).__name__}; it '
            "must be the list of task families (families/__init__.py's registry).",
            {"environment": environment, "missing": ["a families list"]},
        )
    if vary is not None and not callable(vary):
        raise SiloError(
            "runtime_contract_invalid",
            f'Environment "{environment}" exports vary as a {type(vary).__name__}; it must be '
            "a function vary(world, rng).",
            {"environment": environment, "missing": ["vary()"]},
        )
    return tuple(families or ()), vary


def _optional_exports(module: ModuleType, environment: str) -> dict[str, Any]:
    """The entrypoint's optional exports: ``setup``, ``snapshot``, ``policy`` and ``tasks``.

    Raises:
        SiloError: ``runtime_contract_invalid`` naming an export of the wrong kind.
    """
    found = {name: getattr(module, name, None) for name in ("setup", "snapshot", "policy")}
    tasks = getattr(module, "tasks", None)
    wrong = [
        label
        for label, ok in (
            ("setup (a function of the world and the task)", found["setup"] is None
             or callable(found["setup"])),
            ("snapshot (a function of the world)", found["snapshot"] is None
             or callable(found["snapshot"])),
            ("policy (text)", found["policy"] is None or isinstance(found["policy"], str)),
            ("tasks (a list of silo.Task)", tasks is None or (
                isinstance(tasks, list | tuple) and all(isinstance(t, Task) for t in tasks))),
        )
        if not ok
    ]  # fmt: skip
    if wrong:
        raise SiloError(
            "runtime_contract_invalid",
            f'Environment "{environment}" exports {", ".join(wrong)} of the wrong kind.',
            {"environment": environment, "exports": wrong},
        )
    found["tasks"] = tuple(tasks or ())
    return found


def _task_invalid(message: str, details: dict[str, Any]) -> SiloError:
    return SiloError("task_invalid", message, details)


def _named(data: object, key: str) -> str | None:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def _read_task(path: Path, environment: str) -> Task:
    """One task file, read and checked.

    Raises:
        SiloError: ``invalid_json`` or ``task_invalid`` naming every problem of the file; its
            details hold ``file``, the ``id`` the file is for (its own, else the file's
            name) and the ``verifierId`` it names (when it names one).
    """
    rel = f"tasks/{path.name}"
    source = f'Task file "{rel}" in environment "{environment}"'
    where: dict[str, str | None] = {"environment": environment, "file": rel, "id": path.stem}
    try:
        data = read_json_as(path, source, where)
    except SiloError as exc:
        raise SiloError(exc.code, exc.message, {**exc.details, **where}) from None
    where = {
        **where,
        "id": _named(data, "id") or path.stem,
        "verifierId": _named(data, "verifierId"),
    }
    if not isinstance(data, dict):
        raise _task_invalid(f"{source} is not a JSON object.", where)
    try:
        return Task.from_dict(data, source=source)
    except SiloError as exc:
        details = {**exc.details, **where, "field": exc.details.get("field")}
        details.pop("source", None)
        raise _task_invalid(exc.message, details) from None


def discover_tasks(
    env_dir: Path, environment: str, problems: list[SiloError] | None = None
) -> list[Task]:
    """Read every ``tasks/*.json`` (sorted by file name), reject duplicates, sort by id.

    Args:
        env_dir: the environment directory.
        environment: its name (for messages).
        problems: when given, a broken file is appended here and skipped, so every broken
            file is reported at once and the good tasks are still found (``env validate``).

    Raises:
        SiloError: ``invalid_json`` for an unparsable file; ``task_invalid`` naming the file and
            the field, or both files of a duplicated id (unless ``problems`` collects them).
    """
    tasks_dir = env_dir / "tasks"
    files = json_files(tasks_dir)
    found: dict[str, tuple[Task, str]] = {}
    for path in files:
        rel = f"tasks/{path.name}"
        try:
            task = _read_task(path, environment)
        except SiloError as exc:
            if problems is None:
                raise
            problems.append(exc)
            continue
        if task.id in found:
            first = found[task.id][1]
            twice = _task_invalid(
                f'Task id "{task.id}" is declared twice in environment "{environment}": '
                f"{first} and {rel}.",
                {"environment": environment, "id": task.id, "files": [first, rel]},
            )
            if problems is None:
                raise twice
            problems.append(twice)
            continue
        found[task.id] = (task, rel)
    return sorted((t for t, _ in found.values()), key=lambda t: t.id)


def check_data_files(env_dir: Path, environment: str) -> None:
    """Check that every ``data/*.json`` parses, before environment code reads it.

    ``create_state`` reads the data with its own code, so a broken file would otherwise surface
    mid-run as a bare JSONDecodeError naming no file.

    Raises:
        SiloError: ``invalid_json`` naming the first broken file (relative to the environment).
    """
    data_dir = env_dir / "data"
    files = json_files(data_dir)
    for path in files:
        rel = f"data/{path.name}"
        read_json_as(
            path,
            f'Dataset file "{rel}" in environment "{environment}"',
            {"environment": environment, "file": rel},
        )


def _project_dir(cwd: str | os.PathLike[str] | None) -> Path:
    return Path(os.getcwd() if cwd is None else cwd).absolute()


def open_environment(
    name: str,
    cwd: str | os.PathLike[str] | None = None,
    *,
    task_problems: list[SiloError] | None = None,
) -> OpenedEnvironment:
    """Find, import and contract-check environment ``name``; discover its tasks.

    ``task_problems`` (see :func:`discover_tasks`) collects broken task files instead of
    raising on the first one.

    Raises:
        SiloError: ``environment_not_found``, ``unsafe_name``, ``invalid_json``,
            ``entrypoint_outside_environment``, ``runtime_contract_invalid``, ``task_invalid``.
    """
    env_dir = find_environment(_project_dir(cwd), name)
    environment = env_dir.name
    manifest = read_manifest(env_dir)
    entrypoint = resolve_entrypoint(env_dir, manifest.entrypoint, environment)
    module = import_environment(env_dir, entrypoint, environment)
    create_state, bind_tools, verifiers = _contract(module, environment)
    families, vary = _families(module, environment)
    extra = _optional_exports(module, environment)
    tasks = discover_tasks(env_dir, environment, task_problems)
    exported: tuple[Task, ...] = extra.pop("tasks")
    on_disk = {t.id for t in tasks}
    twice = [t.id for t in exported if t.id in on_disk]
    if twice:
        raise SiloError(
            "task_invalid",
            f'Task id "{twice[0]}" is declared twice in environment "{environment}": in '
            "tasks/ and by the entrypoint's tasks.",
            {"environment": environment, "id": twice[0]},
        )
    return OpenedEnvironment(
        name=environment,
        path=env_dir,
        manifest=manifest,
        entrypoint=entrypoint,
        module=module,
        create_state=create_state,
        bind_tools=bind_tools,
        verifiers=verifiers,
        tasks=(*tasks, *exported),
        families=families,
        vary=vary,
        **extra,
    )


def check_verifiers(opened: OpenedEnvironment) -> list[Verifier]:
    """The verifiers, each checked to be a :class:`~silo_async.Verifier`.

    Raises:
        SiloError: ``runtime_contract_invalid`` naming the first entry that is not.
    """
    checked: list[Verifier] = []
    for index, item in enumerate(opened.verifiers):
        if not isinstance(item, Verifier):
            raise SiloError(
                "runtime_contract_invalid",
                f'verifiers[{index}] in environment "{opened.name}" is a {type(item).__name__}, '
                "not a verifier made with @silo.verifier.",
                {"environment": opened.name, "index": index},
            )
        checked.append(item)
    return checked


def check_families(opened: OpenedEnvironment) -> list[TaskFamily]:
    """The task families, each checked to be a :class:`~silo_async.TaskFamily`.

    Raises:
        SiloError: ``runtime_contract_invalid`` naming the first entry that is not.
    """
    checked: list[TaskFamily] = []
    for index, item in enumerate(opened.families):
        if not isinstance(item, TaskFamily):
            raise SiloError(
                "runtime_contract_invalid",
                f'families[{index}] in environment "{opened.name}" is a {type(item).__name__}, '
                "not a silo.TaskFamily.",
                {"environment": opened.name, "index": index},
            )
        checked.append(item)
    return checked


def build_environment(opened: OpenedEnvironment) -> Environment:
    """The runnable :class:`~silo_async.Environment` for an opened environment.

    Raises:
        SiloError: ``runtime_contract_invalid`` for a verifiers or families entry of the wrong
            kind; ``definition_invalid`` for duplicate verifier or family ids.
    """
    return Environment(
        opened.name,
        create_state=opened.create_state,
        bind=opened.bind_tools,
        verifiers=check_verifiers(opened),
        tasks=opened.tasks,
        families=check_families(opened),
        vary=opened.vary,
        setup=opened.setup,
        snapshot=opened.snapshot,
        policy=opened.policy,
    )


def _check_registry_names(opened: OpenedEnvironment) -> None:
    """A registry (the module's ``tools`` list) with a reserved tool name is refused at load.

    The tools are known for sure only once bound to a world, which every rollout does (and
    checks again); the registry list, when the module exports one, says it sooner.
    """
    registry = getattr(opened.module, "tools", None)
    if isinstance(registry, list | tuple):
        check_reserved_name((t.name for t in registry if isinstance(t, Tool)), opened.name)


def load_environment(
    name: str,
    cwd: str | os.PathLike[str] | None = None,
    *,
    broken_tasks: list[SiloError] | None = None,
) -> Environment:
    """Load ``<cwd>/.silo/environments/<name>/`` as a runnable environment.

    Every call imports the environment's code afresh, so edits are always picked up.

    Args:
        name: the environment name (case-insensitive).
        cwd: the project directory holding ``.silo/`` (default: the current directory).
        broken_tasks: when given, a task file that cannot be read is appended here (its
            error, whose details name the ``file`` and the task ``id``) and left out, so the
            other tasks still run; by default it is raised.

    Raises:
        SiloError: see :func:`open_environment` and :func:`build_environment`; ``invalid_json``
            for a ``data/*.json`` file that does not parse; ``tool_name_reserved`` for a tool
            of the registry named ``message_user``.
    """
    opened = open_environment(name, cwd, task_problems=broken_tasks)
    check_data_files(opened.path, opened.name)
    _check_registry_names(opened)
    # Recorded as (name, project): processes that cannot import this private module (Ray
    # workers) load the environment from disk themselves.
    return remember(build_environment(opened), load_environment, opened.name, _project_dir(cwd))
