"""An on-disk environment for a harness: load it by project and name, and find its runs folder.

Harness entry points (Inspect's ``-T env=NAME``, verifiers' ``load_environment``) name a
project directory and an environment, as the CLI does; every episode they open writes its run
directory under ``<project>/.silo/runs/``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from .._environment import Environment
from ..project import load_environment

__all__ = ["Served", "load_served", "served_tasks"]


@attrs.frozen
class Served:
    """An environment loaded from a project, with where its runs go and which tasks it serves."""

    env: Environment
    project: Path
    runs_dir: Path
    tasks: tuple[str, ...]


def served_tasks(env: Environment, tasks: Sequence[str] | str | None) -> tuple[str, ...]:
    """The task ids served: ``tasks`` (a list, or one comma-separated string) or all of them.

    Raises:
        SiloError: ``task_not_found`` for an id the environment does not have.
        ValueError: no task to serve.
    """
    if tasks is None:
        ids = tuple(t.id for t in env.tasks)
    elif isinstance(tasks, str):  # a command line's -T tasks=A,B
        ids = tuple(t.strip() for t in tasks.split(",") if t.strip())
    else:
        ids = tuple(str(t) for t in tasks)
    for task_id in ids:
        env.task(task_id)  # task_not_found now, not at the first sample
    if not ids:
        raise ValueError(f'Environment "{env.name}" has no task to serve.')
    return ids


def load_served(
    project: str | os.PathLike[str],
    env: str | Environment,
    tasks: Sequence[str] | str | None = None,
) -> Served:
    """Load environment ``env`` of the project at ``project`` (or take a code-first one).

    Raises:
        SiloError: ``environment_not_found``, ``task_not_found`` and the loader's other codes.
    """
    root = Path(project).absolute()
    if isinstance(env, Environment):
        environment = env
    else:
        environment = load_environment(env, root)
    return Served(environment, root, root / ".silo" / "runs", served_tasks(environment, tasks))
