"""The project SDK: ``await silo.Project.open(cwd)`` and handles on its environments.

The SDK and the CLI are two interfaces over the same store and write the same files. Nothing
below :meth:`Project.open` reads the process working directory, so one process can serve many
projects. Methods are async so they compose with agents and runs; the file operations behind
them are small and done inline.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._environment import Environment
from .._errors import SiloError
from .._many import run_many as _run_many
from .._result import RunResult
from .._runner import Agent
from .._runner import run as _run
from .._task import Task
from ._files import find_environment, list_environment_names
from ._loader import build_environment, load_environment, open_environment
from ._scaffold import ScaffoldResult, create_environment, scaffold_tool, scaffold_verifier
from ._store import DataStore, Mode, TaskStore
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


def _project_dir(cwd: str | os.PathLike[str] | None) -> Path:
    path = Path(os.getcwd() if cwd is None else cwd).absolute()
    if not path.is_dir():
        raise SiloError(
            "environment_not_found",
            f'Project directory "{path}" was not found.',
            {"cwd": str(path)},
        )
    return path


class Project:
    """A project: the directory holding ``.silo/``. Open one with :meth:`open`.

    Attributes:
        cwd: the absolute project directory.
        environments: create, list and open environments.
    """

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.environments = Environments(self)

    @property
    def runs_dir(self) -> Path:
        """Where run artifacts go: ``<cwd>/.silo/runs``."""
        return self.cwd / ".silo" / "runs"

    @classmethod
    async def open(cls, cwd: str | os.PathLike[str] | None = None) -> Project:
        """Open the project in ``cwd`` (default: the current directory); ``.silo/`` may not exist.

        Raises:
            SiloError: ``environment_not_found`` when ``cwd`` is not an existing directory.
        """
        return cls(_project_dir(cwd))

    def __repr__(self) -> str:
        return f"Project({str(self.cwd)!r})"


class Environments:
    """The environments of a project (``.silo/environments/``)."""

    def __init__(self, project: Project) -> None:
        self.project = project

    async def list(self) -> builtins.list[str]:
        """Environment names, lower-cased and sorted."""
        return list_environment_names(self.project.cwd)

    async def create(
        self, name: str, template: str = "blank", *, tools: Sequence[str] = ()
    ) -> EnvironmentHandle:
        """Create an environment from a template, atomically.

        Raises:
            SiloError: ``unsafe_name``, ``template_not_found``, ``environment_already_exists``.
        """
        path = create_environment(self.project.cwd, name, template, tools)
        return EnvironmentHandle(self.project, path)

    async def open(self, name: str) -> EnvironmentHandle:
        """A handle on an existing environment (name matched ignoring case).

        Raises:
            SiloError: ``unsafe_name``, ``environment_not_found`` listing what exists.
        """
        return EnvironmentHandle(self.project, find_environment(self.project.cwd, name))


class EnvironmentHandle:
    """One environment of a project: its resources, validation and runs.

    Attributes:
        project: the project it belongs to.
        path: the environment directory.
        name: the environment name (the directory's name, exact case).
        data: datasets (``data/<name>.json``).
        tasks: tasks (``tasks/<id>.json``).
        tools: tool scaffolding and listing.
        verifiers: verifier scaffolding and listing.
    """

    def __init__(self, project: Project, path: Path) -> None:
        self.project = project
        self.path = path
        self.name = path.name
        self.data = DataResource(self)
        self.tasks = TaskResource(self)
        self.tools = ToolResource(self)
        self.verifiers = VerifierResource(self)

    def __repr__(self) -> str:
        return f"EnvironmentHandle({self.name!r}, {str(self.path)!r})"

    def require(self) -> Path:
        """The environment directory, checked to still exist.

        Raises:
            SiloError: ``environment_not_found``.
        """
        if not self.path.is_dir():
            return find_environment(self.project.cwd, self.name)
        return self.path

    async def load(self) -> Environment:
        """Import the environment afresh and build the runnable :class:`silo.Environment`."""
        self.require()
        return load_environment(self.name, self.project.cwd)

    async def validate(self) -> ValidationReport:
        """Check everything reachable without a real agent (see :class:`ValidationReport`)."""
        return await validate_environment(self.require(), self.project.cwd)

    async def run(
        self,
        task_id: str,
        agent: Agent,
        *,
        max_tool_calls: int = 100,
        timeout: float | None = 120.0,
        token_limit: int | None = None,
        agent_name: str | None = None,
    ) -> RunResult:
        """Run one rollout; artifacts go to ``.silo/runs/<run_id>/``."""
        env = await self.load()
        return await _run(
            env,
            task_id,
            agent,
            max_tool_calls=max_tool_calls,
            timeout=timeout,
            token_limit=token_limit,
            runs_dir=self.project.runs_dir,
            agent_name=agent_name,
        )

    async def run_many(
        self,
        task_ids: Sequence[str] | str,
        agent: Agent,
        *,
        runs: int = 1,
        concurrency: int = 64,
        max_tool_calls: int = 100,
        timeout: float | None = 120.0,
        token_limit: int | None = None,
        agent_name: str | None = None,
        on_result: Callable[[int, RunResult], None] | None = None,
    ) -> builtins.list[RunResult]:
        """Run every task ``runs`` times in one loop; artifacts go to ``.silo/runs/``."""
        env = await self.load()
        return await _run_many(
            env,
            task_ids,
            agent,
            runs=runs,
            concurrency=concurrency,
            max_tool_calls=max_tool_calls,
            timeout=timeout,
            token_limit=token_limit,
            runs_dir=self.project.runs_dir,
            agent_name=agent_name,
            on_result=on_result,
        )


class DataResource:
    """Datasets ``data/<name>.json`` of one environment; any JSON value."""

    def __init__(self, handle: EnvironmentHandle) -> None:
        self._handle = handle

    def _store(self) -> DataStore:
        return DataStore(self._handle.require(), self._handle.name)

    async def list(self) -> builtins.list[dict[str, Any]]:
        """``[{name, file, bytes}]`` sorted by file name."""
        return self._store().list()

    async def get(self, name: str) -> Any:
        """The content of dataset ``name`` (``data_not_found``, ``invalid_json``)."""
        return self._store().get(name)

    async def add(self, name: str, value: Any) -> str:
        """Create a dataset (``data_already_exists``); return ``data/<name>.json``."""
        return self._store().put(name, value, Mode.CREATE)

    async def update(self, name: str, value: Any) -> str:
        """Replace a dataset (``data_not_found``); return its file."""
        return self._store().put(name, value, Mode.UPDATE)

    async def put(self, name: str, value: Any) -> str:
        """Create or replace a dataset; return its file."""
        return self._store().put(name, value, Mode.UPSERT)

    async def remove(self, name: str) -> str:
        """Delete a dataset (``data_not_found``); return its file."""
        return self._store().remove(name)


class TaskResource:
    """Tasks ``tasks/<id>.json`` of one environment."""

    def __init__(self, handle: EnvironmentHandle) -> None:
        self._handle = handle

    def _store(self) -> TaskStore:
        return TaskStore(self._handle.require(), self._handle.name)

    async def list(self) -> builtins.list[Task]:
        """Every task, sorted by id."""
        return self._store().list()

    async def get(self, task_id: str) -> Task:
        """The task ``task_id`` (``task_not_found``)."""
        return self._store().get(task_id)

    async def add(self, task: Task | Mapping[str, Any]) -> str:
        """Create a task (``task_already_exists``, ``task_invalid``); return its file."""
        return self._store().put(task, Mode.CREATE)

    async def update(self, task: Task | Mapping[str, Any]) -> str:
        """Replace a task as a whole (``task_not_found``); return its file."""
        return self._store().put(task, Mode.UPDATE)

    async def put(self, task: Task | Mapping[str, Any]) -> str:
        """Create or replace a task; return its file."""
        return self._store().put(task, Mode.UPSERT)

    async def remove(self, task_id: str) -> str:
        """Delete the file task ``task_id`` came from (``task_not_found``); return it."""
        return self._store().remove(task_id)


class ToolResource:
    """Tools of one environment: code, so scaffolded and listed, never edited."""

    def __init__(self, handle: EnvironmentHandle) -> None:
        self._handle = handle

    async def list(self) -> builtins.list[dict[str, Any]]:
        """``[{name, description, inputSchema}]``: exactly what an agent would receive."""
        env = await self._handle.load()
        return [t.spec.to_dict() for t in env.bind_tools(env.create_state())]

    async def scaffold(
        self, name: str, description: str | None = None, *, state_type: str | None = None
    ) -> ScaffoldResult:
        """Create ``tools/<name>.py`` (a stub that fails on purpose) and register it."""
        path = self._handle.require()
        return scaffold_tool(path, self._handle.name, name, description, state_type)


class VerifierResource:
    """Verifiers of one environment: code, so scaffolded and listed, never edited."""

    def __init__(self, handle: EnvironmentHandle) -> None:
        self._handle = handle

    async def list(self) -> builtins.list[dict[str, Any]]:
        """``[{id, taskId, name}]`` in registry order (the data need not be valid)."""
        self._handle.require()
        opened = open_environment(self._handle.name, self._handle.project.cwd)
        env = build_environment(opened)
        return [{"id": v.id, "taskId": v.task_id, "name": v.name} for v in env.verifiers]

    async def scaffold(
        self,
        verifier_id: str,
        task_id: str,
        name: str | None = None,
        *,
        state_type: str | None = None,
    ) -> ScaffoldResult:
        """Create ``verifiers/<id>.py`` (one required, failing TODO check) and register it."""
        path = self._handle.require()
        return scaffold_verifier(path, self._handle.name, verifier_id, task_id, name, state_type)
