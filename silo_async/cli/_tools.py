"""``silo-async tool`` and ``silo-async verifier``: code resources, scaffolded and listed.

Tools and verifiers are code, so they are never edited or deleted from here: ``add`` writes a
stub module and registers it in the package's explicit registry list, ``list`` shows what the
environment really exposes once loaded.
"""

from __future__ import annotations

from typing import Any

import click

from .._errors import SiloError
from .._task import Task
from ..project import ScaffoldResult
from ._common import OrderedGroup, echo_json, env_option, json_option, open_environment, run_async

__all__ = ["tool", "verifier"]


@click.group("tool", cls=OrderedGroup)
def tool() -> None:
    """Tools: scaffold one (add) or list what the agent will see."""


@tool.command("list", short_help="List the tools an agent receives.")
@env_option
@json_option
def tool_list(env_name: str, as_json: bool) -> None:
    """List the tools an agent receives (loads the environment and builds a world)."""

    async def go() -> list[dict[str, Any]]:
        return await (await open_environment(env_name)).tools.list()

    tools = run_async(go)
    if as_json:
        echo_json(tools)
        return
    if not tools:
        click.echo("No tools.")
    for t in tools:
        click.echo(f"{t['name']}\t{t['description']}")


@tool.command("add", short_help="Scaffold tools/<name>.py and register it.")
@click.argument("name")
@env_option
@click.option("--description", default=None, metavar="TEXT", help="What the agent is told.")
@click.option(
    "--state",
    "state_type",
    default=None,
    metavar="TYPE",
    help="The world's type in state.py (default: detected, usually State).",
)
@json_option
def tool_add(
    name: str, env_name: str, description: str | None, state_type: str | None, as_json: bool
) -> None:
    """Create tools/<name>.py from a stub and register it in tools/__init__.py."""

    async def go() -> ScaffoldResult:
        handle = await open_environment(env_name)
        return await handle.tools.scaffold(name, description, state_type=state_type)

    result = run_async(go)
    if as_json:
        echo_json({"ok": True, "action": "add", "name": name, **result.to_dict()})
        return
    _echo_scaffolded(result)
    click.echo(f"Next: implement the tool body in {result.created} (look for TODO).")


def _echo_scaffolded(result: ScaffoldResult) -> None:
    click.echo(f"Created {result.created}")
    click.echo(f"Registered {result.identifier} in {result.registered_in}")


@click.group("verifier", cls=OrderedGroup)
def verifier() -> None:
    """Verifiers: scaffold one (add) or list the registered ones."""


@verifier.command("list")
@env_option
@json_option
def verifier_list(env_name: str, as_json: bool) -> None:
    """List the registered verifiers and the tasks they grade."""

    async def go() -> list[dict[str, Any]]:
        return await (await open_environment(env_name)).verifiers.list()

    verifiers = run_async(go)
    if as_json:
        echo_json(verifiers)
        return
    if not verifiers:
        click.echo("No verifiers.")
    for v in verifiers:
        click.echo(f"{v['id']}\t{v['taskId']}\t{v['name']}")


@verifier.command("add", short_help="Scaffold verifiers/<id>.py and register it.")
@click.argument("verifier_id", metavar="ID")
@env_option
@click.option("--task", "task_id", required=True, metavar="ID", help="The task it grades.")
@click.option("--name", default=None, metavar="TEXT", help="What the verifier proves.")
@click.option(
    "--state",
    "state_type",
    default=None,
    metavar="TYPE",
    help="The world's type in state.py (default: detected, usually State).",
)
@json_option
def verifier_add(
    verifier_id: str,
    env_name: str,
    task_id: str,
    name: str | None,
    state_type: str | None,
    as_json: bool,
) -> None:
    """Create verifiers/<id>.py from a stub and register it in verifiers/__init__.py."""

    async def go() -> tuple[ScaffoldResult, str | None]:
        handle = await open_environment(env_name)
        result = await handle.verifiers.scaffold(verifier_id, task_id, name, state_type=state_type)
        try:
            tasks = {t.id: t for t in await handle.tasks.list()}
        except SiloError:
            return result, None  # a broken task file: validate reports it, no guessing here
        return result, _task_hint(tasks.get(task_id), task_id, verifier_id, env_name)

    result, hint = run_async(go)
    if as_json:
        echo_json({"ok": True, "action": "add", "id": verifier_id, **result.to_dict()})
        return
    _echo_scaffolded(result)
    click.echo(f"Next: replace the failing TODO check in {result.created}.")
    if hint is not None:
        click.echo(hint)


def _task_hint(task: Task | None, task_id: str, verifier_id: str, env_name: str) -> str | None:
    """The command that makes the task point at the new verifier, if it does not yet."""
    if task is None:
        return (
            f'Task "{task_id}" does not exist yet: silo-async task add {task_id} --env {env_name} '
            f'--title "..." --instruction "..." --verifier {verifier_id}'
        )
    if task.verifier_id != verifier_id:
        return (
            f'Task "{task_id}" is graded by "{task.verifier_id}"; to grade it with this one: '
            f"silo-async task update {task_id} --env {env_name} --verifier {verifier_id}"
        )
    return None
