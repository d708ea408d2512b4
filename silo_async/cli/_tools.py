"""``silo-async tool`` and ``silo-async verifier``: code resources, scaffolded and listed.

Tools and verifiers are code, so they are never edited or deleted from here: ``add`` writes a
stub module and registers it in the package's explicit registry list, ``list`` shows what the
environment really exposes once loaded.
"""

from __future__ import annotations

import click

from .._errors import SiloError
from .._task import Task
from ..project import ScaffoldResult
from ._common import OrderedGroup, echo_json, echo_list, env_option, environment_store, json_option

__all__ = ["tool", "verifier"]


@click.group("tool", cls=OrderedGroup)
def tool() -> None:
    """Tools: scaffold one (add) or list what the agent will see."""


@tool.command("list", short_help="List the tools an agent receives.")
@env_option
@json_option
def tool_list(env_name: str, as_json: bool) -> None:
    """List the tools an agent receives (loads the environment and builds a world)."""
    echo_list(
        environment_store(env_name).list_tools(),
        as_json,
        line=lambda t: f"{t['name']}\t{t['description']}",
        empty="No tools.",
    )


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
    result = environment_store(env_name).scaffold_tool(name, description, state_type)
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
    echo_list(
        environment_store(env_name).list_verifiers(),
        as_json,
        line=lambda v: f"{v['id']}\t{v['taskId']}\t{v['name']}",
        empty="No verifiers.",
    )


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
    store = environment_store(env_name)
    result = store.scaffold_verifier(verifier_id, task_id, name, state_type)
    if as_json:
        echo_json({"ok": True, "action": "add", "id": verifier_id, **result.to_dict()})
        return
    _echo_scaffolded(result)
    click.echo(f"Next: replace the failing TODO check in {result.created}.")
    try:
        tasks = {t.id: t for t in store.tasks.list()}
    except SiloError:
        return  # a broken task file: validate reports it, no guessing here
    hint = _task_hint(tasks.get(task_id), task_id, verifier_id, env_name)
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
