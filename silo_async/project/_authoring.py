"""The synchronous authoring store: one project and its environments, as plain method calls.

This is the one store behind both faces: the CLI calls it directly (so authoring commands start
no event loop), and the async SDK (:mod:`._sdk`) hands each call to a worker thread (so its
file I/O and imports never hold an event loop). Both therefore write byte-identical files.
Nothing here reads the process working directory: every path is relative to ``cwd``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._environment import Environment
from .._errors import SiloError
from ._files import find_environment, list_environment_names
from ._loader import build_environment, load_environment, open_environment
from ._scaffold import ScaffoldResult, create_environment, scaffold_tool, scaffold_verifier
from ._store import DataStore, TaskStore

__all__ = ["EnvironmentStore", "ProjectStore", "project_dir"]


def project_dir(cwd: str | os.PathLike[str] | None) -> Path:
    """``cwd`` (default: the current directory) as an absolute path, checked to exist.

    Raises:
        SiloError: ``environment_not_found`` when it is not an existing directory.
    """
    path = Path(os.getcwd() if cwd is None else cwd).absolute()
    if not path.is_dir():
        raise SiloError(
            "environment_not_found",
            f'Project directory "{path}" was not found.',
            {"cwd": str(path)},
        )
    return path


class ProjectStore:
    """A project directory (the one holding ``.silo/``) and its environments, synchronously.

    Args:
        cwd: the absolute project directory.
    """

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    @property
    def runs_dir(self) -> Path:
        """Where run artifacts go: ``<cwd>/.silo/runs``."""
        return self.cwd / ".silo" / "runs"

    def list_environments(self) -> list[str]:
        """Environment names, lower-cased and sorted."""
        return list_environment_names(self.cwd)

    def create_environment(
        self, name: str, template: str = "blank", tools: Sequence[str] = ()
    ) -> EnvironmentStore:
        """Create an environment from a template, atomically.

        Raises:
            SiloError: ``unsafe_name``, ``template_not_found``, ``environment_already_exists``.
        """
        return EnvironmentStore(self, create_environment(self.cwd, name, template, tools))

    def open_environment(self, name: str) -> EnvironmentStore:
        """An existing environment (name matched ignoring case).

        Raises:
            SiloError: ``unsafe_name``, ``environment_not_found`` listing what exists.
        """
        return EnvironmentStore(self, find_environment(self.cwd, name))


class EnvironmentStore:
    """One environment of a project: its datasets, tasks, tools and verifiers, synchronously.

    Args:
        project: the project it belongs to.
        path: the environment directory.
    """

    def __init__(self, project: ProjectStore, path: Path) -> None:
        self.project = project
        self.path = path
        self.name = path.name

    def require(self) -> Path:
        """The environment directory, checked to still exist.

        Raises:
            SiloError: ``environment_not_found``.
        """
        if not self.path.is_dir():
            return find_environment(self.project.cwd, self.name)
        return self.path

    @property
    def data(self) -> DataStore:
        """Its datasets (``data/<name>.json``)."""
        return DataStore(self.require(), self.name)

    @property
    def tasks(self) -> TaskStore:
        """Its tasks (``tasks/<id>.json``)."""
        return TaskStore(self.require(), self.name)

    def load(self, *, broken_tasks: list[SiloError] | None = None) -> Environment:
        """Import the environment afresh and build the runnable :class:`silo.Environment`.

        ``broken_tasks``: see :func:`~silo_async.project.load_environment` (collected and left
        out instead of raised).
        """
        self.require()
        return load_environment(self.name, self.project.cwd, broken_tasks=broken_tasks)

    def list_tools(self) -> list[dict[str, Any]]:
        """``[{name, description, inputSchema}]``: exactly what an agent would receive."""
        env = self.load()
        return [t.spec.to_dict() for t in env.bind_tools(env.create_state())]

    def scaffold_tool(
        self, name: str, description: str | None = None, state_type: str | None = None
    ) -> ScaffoldResult:
        """Create ``tools/<name>.py`` (a stub that fails on purpose) and register it."""
        return scaffold_tool(self.require(), self.name, name, description, state_type)

    def list_verifiers(self) -> list[dict[str, Any]]:
        """``[{id, taskId, name}]`` in registry order (the data need not be valid)."""
        self.require()
        env = build_environment(open_environment(self.name, self.project.cwd))
        return [{"id": v.id, "taskId": v.task_id, "name": v.name} for v in env.verifiers]

    def scaffold_verifier(
        self,
        verifier_id: str,
        task_id: str,
        name: str | None = None,
        state_type: str | None = None,
    ) -> ScaffoldResult:
        """Create ``verifiers/<id>.py`` (one required, failing TODO check) and register it."""
        path = self.require()
        return scaffold_verifier(path, self.name, verifier_id, task_id, name, state_type)
