"""The project SDK: ``await silo.Project.open(cwd)`` and handles on its environments.

The SDK and the CLI are two faces of one synchronous store (:mod:`._authoring`) and write the
same files. Every SDK method is truly async: the store's blocking work (file I/O, importing an
environment's code, building a world) runs on a worker thread through
:func:`anyio.to_thread.run_sync`, so an SDK call never holds the event loop that agents and other
rollouts share. Nothing below :meth:`Project.open` reads the process working directory, so one
process can serve many projects.
"""

from __future__ import annotations

import builtins
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread

from .._environment import Environment
from .._limits import DEFAULT_LIMITS, Limits
from .._many import run_many as _run_many
from .._options import RunOptions, resolve_options
from .._result import RunResult
from .._runner import Agent
from .._runner import run as _run
from .._task import Task
from ._authoring import EnvironmentStore, ProjectStore, project_dir
from ._scaffold import ScaffoldResult
from ._validate import ValidationReport, validate_environment

__all__ = [
    "DataResource",
    "EnvironmentHandle",
    "Environments",
    "Project",
    "TaskResource",
    "ToolResource",
    "VerifierResource",
]

P = ParamSpec("P")
T = TypeVar("T")


async def _off_loop(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``fn(*args, **kwargs)`` on a worker thread: blocking work never holds the event loop.

    Cancelling the caller waits for the call to finish (anyio's default), so a write is
    never abandoned half-way.
    """
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


class Project:
    """A project: the directory holding ``.silo/``. Open one with :meth:`open`.

    Attributes:
        cwd: the absolute project directory.
        environments: create, list and open environments.
        store: the synchronous store behind it (what the CLI uses).
    """

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.store = ProjectStore(cwd)
        self.environments = Environments(self)

    @property
    def runs_dir(self) -> Path:
        """Where run artifacts go: ``<cwd>/.silo/runs``."""
        return self.store.runs_dir

    @classmethod
    async def open(cls, cwd: str | os.PathLike[str] | None = None) -> Project:
        """Open the project in ``cwd`` (default: the current directory); ``.silo/`` may not exist.

        Raises:
            SiloError: ``environment_not_found`` when ``cwd`` is not an existing directory.
        """
        return cls(await _off_loop(project_dir, cwd))

    def __repr__(self) -> str:
        return f"Project({str(self.cwd)!r})"


class Environments:
    """The environments of a project (``.silo/environments/``)."""

    def __init__(self, project: Project) -> None:
        self.project = project

    async def list(self) -> builtins.list[str]:
        """Environment names, lower-cased and sorted."""
        return await _off_loop(self.project.store.list_environments)

    async def create(
        self, name: str, template: str = "blank", *, tools: Sequence[str] = ()
    ) -> EnvironmentHandle:
        """Create an environment from a template, atomically.

        Raises:
            SiloError: ``unsafe_name``, ``template_not_found``, ``environment_already_exists``.
        """
        store = self.project.store
        created = await _off_loop(store.create_environment, name, template, tools)
        return EnvironmentHandle(self.project, created.path)

    async def open(self, name: str) -> EnvironmentHandle:
        """A handle on an existing environment (name matched ignoring case).

        Raises:
            SiloError: ``unsafe_name``, ``environment_not_found`` listing what exists.
        """
        found = await _off_loop(self.project.store.open_environment, name)
        return EnvironmentHandle(self.project, found.path)


class EnvironmentHandle:
    """One environment of a project: its resources, validation and runs.

    Attributes:
        project: the project it belongs to.
        path: the environment directory.
        name: the environment name (the directory's name, exact case).
        store: the synchronous store behind it (what the CLI uses).
        data: datasets (``data/<name>.json``).
        tasks: tasks (``tasks/<id>.json``).
        tools: tool scaffolding and listing.
        verifiers: verifier scaffolding and listing.
    """

    def __init__(self, project: Project, path: Path) -> None:
        self.project = project
        self.path = path
        self.name = path.name
        self.store = EnvironmentStore(project.store, path)
        self.data = DataResource(self)
        self.tasks = TaskResource(self)
        self.tools = ToolResource(self)
        self.verifiers = VerifierResource(self)

    def __repr__(self) -> str:
        return f"EnvironmentHandle({self.name!r}, {str(self.path)!r})"

    def require(self) -> Path:
        """The environment directory, checked to still exist (a quick ``stat``).

        Raises:
            SiloError: ``environment_not_found``.
        """
        return self.store.require()

    async def load(self) -> Environment:
        """Import the environment afresh and build the runnable :class:`silo.Environment`."""
        return await _off_loop(self.store.load)

    async def validate(
        self, *, solver: Agent | None = None, limits: Limits | None = None
    ) -> ValidationReport:
        """Check everything reachable without a real agent (see :class:`ValidationReport`).

        Args:
            solver: an agent expected to solve every task (as ``env validate --solver``).
            limits: the solver's limits per task.
        """
        env_dir = await _off_loop(self.store.require)
        return await validate_environment(env_dir, self.project.cwd, solver=solver, limits=limits)

    async def run(
        self,
        task_id: str,
        agent: Agent,
        *,
        limits: Limits | None = None,
        max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
        timeout: float | None = DEFAULT_LIMITS.timeout,
        token_limit: int | None = DEFAULT_LIMITS.token_limit,
        agent_name: str | None = None,
        options: RunOptions | None = None,
    ) -> RunResult:
        """Run one rollout; artifacts go to ``.silo/runs/<run_id>/``.

        ``options=silo.RunOptions(...)``, ``limits=silo.Limits(...)`` or the keywords
        ``max_tool_calls``, ``timeout`` and ``token_limit`` (one form), as for :func:`silo.run`.

        Raises:
            TypeError: ``limits=`` together with a limit keyword, or ``options=`` with either.
        """
        how = resolve_options(
            options,
            limits=limits,
            max_tool_calls=max_tool_calls,
            timeout=timeout,
            token_limit=token_limit,
        )
        env = await self.load()
        runs_dir = self.project.runs_dir
        return await _run(
            env, task_id, agent, runs_dir=runs_dir, agent_name=agent_name, options=how
        )

    async def run_many(
        self,
        task_ids: Sequence[str] | str,
        agent: Agent,
        *,
        runs: int = 1,
        concurrency: int = 64,
        limits: Limits | None = None,
        max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
        timeout: float | None = DEFAULT_LIMITS.timeout,
        token_limit: int | None = DEFAULT_LIMITS.token_limit,
        agent_name: str | None = None,
        on_result: Callable[[int, RunResult], None] | None = None,
        options: RunOptions | None = None,
    ) -> builtins.list[RunResult]:
        """Run every task ``runs`` times in one loop; artifacts go to ``.silo/runs/``.

        Limits and options as for :meth:`run`.

        Raises:
            TypeError: ``limits=`` together with a limit keyword, or ``options=`` with either.
        """
        how = resolve_options(
            options,
            limits=limits,
            max_tool_calls=max_tool_calls,
            timeout=timeout,
            token_limit=token_limit,
        )
        env = await self.load()
        return await _run_many(
            env,
            task_ids,
            agent,
            runs=runs,
            concurrency=concurrency,
            runs_dir=self.project.runs_dir,
            agent_name=agent_name,
            on_result=on_result,
            options=how,
        )


class DataResource:
    """Datasets ``data/<name>.json`` of one environment; any JSON value."""

    def __init__(self, handle: EnvironmentHandle) -> None:
        self._store = handle.store

    async def list(self) -> builtins.list[dict[str, Any]]:
        """``[{name, file, bytes}]`` sorted by file name."""
        return await _off_loop(lambda: self._store.data.list())

    async def get(self, name: str) -> Any:
        """The content of dataset ``name`` (``data_not_found``, ``invalid_json``)."""
        return await _off_loop(lambda: self._store.data.get(name))

    async def add(self, name: str, value: Any) -> str:
        """Create a dataset (``data_already_exists``); return ``data/<name>.json``."""
        return await _off_loop(lambda: self._store.data.add(name, value))

    async def update(self, name: str, value: Any) -> str:
        """Replace a dataset (``data_not_found``); return its file."""
        return await _off_loop(lambda: self._store.data.update(name, value))

    async def put(self, name: str, value: Any) -> str:
        """Create or replace a dataset; return its file."""
        return await _off_loop(lambda: self._store.data.put(name, value))

    async def remove(self, name: str) -> str:
        """Delete a dataset (``data_not_found``); return its file."""
        return await _off_loop(lambda: self._store.data.remove(name))


class TaskResource:
    """Tasks ``tasks/<id>.json`` of one environment."""

    def __init__(self, handle: EnvironmentHandle) -> None:
        self._store = handle.store

    async def list(self) -> builtins.list[Task]:
        """Every task, sorted by id."""
        return await _off_loop(lambda: self._store.tasks.list())

    async def get(self, task_id: str) -> Task:
        """The task ``task_id`` (``task_not_found``)."""
        return await _off_loop(lambda: self._store.tasks.get(task_id))

    async def add(self, task: Task | Mapping[str, Any]) -> str:
        """Create a task (``task_already_exists``, ``task_invalid``); return its file."""
        return await _off_loop(lambda: self._store.tasks.add(task))

    async def update(self, task: Task | Mapping[str, Any]) -> str:
        """Replace a task as a whole (``task_not_found``); return its file."""
        return await _off_loop(lambda: self._store.tasks.update(task))

    async def put(self, task: Task | Mapping[str, Any]) -> str:
        """Create or replace a task; return its file."""
        return await _off_loop(lambda: self._store.tasks.put(task))

    async def remove(self, task_id: str) -> str:
        """Delete the file task ``task_id`` came from (``task_not_found``); return it."""
        return await _off_loop(lambda: self._store.tasks.remove(task_id))


class ToolResource:
    """Tools of one environment: code, so scaffolded and listed, never edited."""

    def __init__(self, handle: EnvironmentHandle) -> None:
        self._store = handle.store

    async def list(self) -> builtins.list[dict[str, Any]]:
        """``[{name, description, inputSchema}]``: exactly what an agent would receive."""
        return await _off_loop(self._store.list_tools)

    async def scaffold(
        self, name: str, description: str | None = None, *, state_type: str | None = None
    ) -> ScaffoldResult:
        """Create ``tools/<name>.py`` (a stub that fails on purpose) and register it."""
        return await _off_loop(self._store.scaffold_tool, name, description, state_type)


class VerifierResource:
    """Verifiers of one environment: code, so scaffolded and listed, never edited."""

    def __init__(self, handle: EnvironmentHandle) -> None:
        self._store = handle.store

    async def list(self) -> builtins.list[dict[str, Any]]:
        """``[{id, taskId, name}]`` in registry order (the data need not be valid)."""
        return await _off_loop(self._store.list_verifiers)

    async def scaffold(
        self,
        verifier_id: str,
        task_id: str,
        name: str | None = None,
        *,
        state_type: str | None = None,
    ) -> ScaffoldResult:
        """Create ``verifiers/<id>.py`` (one required, failing TODO check) and register it."""
        store = self._store
        return await _off_loop(store.scaffold_verifier, verifier_id, task_id, name, state_type)
