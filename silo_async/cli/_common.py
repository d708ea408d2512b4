"""Small helpers every command uses: the event loop, the project, JSON output, shared options."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import click

from .._agentload import DEFAULT_AGENT_FILE
from ..project import EnvironmentHandle, Project, find_project_root

__all__ = [
    "BACKEND_KEY",
    "OrderedGroup",
    "agent_base_dir",
    "echo_json",
    "env_option",
    "json_option",
    "limit_options",
    "open_environment",
    "open_project",
    "project_root",
    "run_async",
]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

#: Where the root group stores the ``--backend`` choice (``ctx.meta`` is shared by subcommands).
BACKEND_KEY = "silo_async.backend"


class OrderedGroup(click.Group):
    """A group that lists its commands in the order they were added (workflow order)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


def run_async(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn()`` on the backend chosen with ``--backend``: the CLI's only ``anyio.run``."""
    ctx = click.get_current_context(silent=True)
    backend = ctx.meta.get(BACKEND_KEY, "asyncio") if ctx is not None else "asyncio"
    return anyio.run(fn, backend=backend)


def project_root() -> Path:
    """The project the CLI works on: the nearest directory from here up holding ``.silo/``.

    Without one, the current directory (where ``init`` creates ``.silo/``).
    """
    return find_project_root(Path.cwd())


def agent_base_dir(agent_spec: str | None, cwd: Path) -> Path:
    """Where ``--agent`` is resolved: ``cwd``, the directory the user typed the path from.

    Without ``--agent``, the default ``silo_agent.py`` is taken from ``cwd`` if it exists, else
    from the project root, so ``run`` works the same from a subdirectory of the project.
    """
    if agent_spec is None and not (cwd / DEFAULT_AGENT_FILE).is_file():
        root = find_project_root(cwd)
        if (root / DEFAULT_AGENT_FILE).is_file():
            return root
    return cwd


async def open_project() -> Project:
    """The project around the current directory (see :func:`project_root`)."""
    return await Project.open(project_root())


async def open_environment(name: str) -> EnvironmentHandle:
    """The named environment of the current project (SiloError ``environment_not_found``)."""
    project = await open_project()
    return await project.environments.open(name)


def echo_json(value: Any) -> None:
    """Print ``value`` as pretty JSON (2-space indent, UTF-8) on stdout."""
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def json_option(fn: F) -> F:
    """``--json``: print machine-readable output instead of text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(fn)


def limit_options(fn: F) -> F:
    """``--max-tool-calls N`` and ``--timeout-ms MS``: the per-rollout limits of run and eval."""
    fn = click.option(
        "--timeout-ms",
        type=click.IntRange(min=1),
        default=120_000,
        show_default=True,
        help="Time limit per rollout, in milliseconds.",
    )(fn)
    return click.option(
        "--max-tool-calls",
        type=click.IntRange(min=0),
        default=100,
        show_default=True,
        help="Tool calls per rollout before the agent is stopped.",
    )(fn)


def env_option(fn: F) -> F:
    """``--env NAME``: the environment to work on (required)."""
    return click.option(
        "--env", "env_name", required=True, metavar="NAME", help="Environment name."
    )(fn)
