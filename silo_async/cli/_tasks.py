"""``silo-async task``: tasks, ``tasks/<id>.json`` — objectives and the verifiers grading them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from .._errors import SiloError
from .._task import Task
from ._common import OrderedGroup, echo_json, env_option, json_option, open_environment, run_async

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["task"]


@click.group("task", cls=OrderedGroup)
def task() -> None:
    """Tasks: list, show, add, update or remove tasks/<id>.json."""


@task.command("list")
@env_option
@json_option
def list_(env_name: str, as_json: bool) -> None:
    """List the tasks, sorted by id."""

    async def go() -> list[Task]:
        return await (await open_environment(env_name)).tasks.list()

    tasks = run_async(go)
    if as_json:
        echo_json([t.to_dict() for t in tasks])
        return
    if not tasks:
        click.echo("No tasks.")
    for t in tasks:
        click.echo(f"{t.id}\t{t.difficulty}\t{t.verifier_id}\t{t.title}")


@task.command("show")
@click.argument("task_id", metavar="ID")
@env_option
@json_option
def show(task_id: str, env_name: str, as_json: bool) -> None:
    """Print a task as JSON."""

    async def go() -> Task:
        return await (await open_environment(env_name)).tasks.get(task_id)

    echo_json(run_async(go).to_dict())


def _fields(fn: F) -> F:
    for flag, help_text in reversed(
        [
            ("--title", "Short human label."),
            ("--instruction", "The only text the agent receives (the objective, no solution)."),
            ("--verifier", "Id of the verifier that grades the task (e.g. VER-001)."),
            ("--difficulty", "easy, medium or hard (default: unspecified)."),
        ]
    ):
        metavar = "ID" if flag == "--verifier" else "TEXT"
        fn = click.option(flag, default=None, metavar=metavar, help=help_text)(fn)
    fn = click.option("--id", "id_flag", default=None, metavar="ID", help="Task id (or ID).")(fn)
    return click.argument("id_arg", metavar="[ID]", required=False)(fn)


def _task_id(id_arg: str | None, id_flag: str | None) -> str:
    if id_arg is not None and id_flag is not None and id_arg != id_flag:
        raise click.UsageError(f'Two different task ids: "{id_arg}" and --id "{id_flag}".')
    task_id = id_flag if id_flag is not None else id_arg
    if task_id is None:
        raise click.UsageError("Missing task id: pass ID or --id ID.")
    return task_id


def _require_fields(task_id: str, **given: str | None) -> None:
    """Name every missing field flag at once, instead of one per attempt."""
    keys = {"title": "title", "instruction": "instruction", "verifier": "verifierId"}
    missing = [f'"{keys[flag]}" (--{flag})' for flag, value in given.items() if value is None]
    if not missing:
        return
    listed = missing[0] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
    raise SiloError(
        "task_invalid",
        f'Task "{task_id}" is missing a non-empty {listed}.',
        {"id": task_id, "fields": [keys[f] for f, v in given.items() if v is None]},
    )


@task.command("add", short_help="Create tasks/<id>.json.")
@_fields
@env_option
@json_option
def add(
    id_arg: str | None,
    id_flag: str | None,
    title: str | None,
    instruction: str | None,
    verifier: str | None,
    difficulty: str | None,
    env_name: str,
    as_json: bool,
) -> None:
    """Create tasks/<id>.json (--title, --instruction and --verifier are required)."""
    task_id = _task_id(id_arg, id_flag)
    _require_fields(task_id, title=title, instruction=instruction, verifier=verifier)
    document = {
        "id": task_id,
        "title": title or "",
        "instruction": instruction or "",
        "verifierId": verifier or "",
    }
    if difficulty is not None:
        document["difficulty"] = difficulty

    async def go() -> tuple[Task, str]:
        handle = await open_environment(env_name)
        written = await handle.tasks.add(document)
        return await handle.tasks.get(document["id"]), written

    created, file = run_async(go)
    _report("add", "Created", created, file, as_json)


@task.command("update")
@_fields
@env_option
@json_option
def update(
    id_arg: str | None,
    id_flag: str | None,
    title: str | None,
    instruction: str | None,
    verifier: str | None,
    difficulty: str | None,
    env_name: str,
    as_json: bool,
) -> None:
    """Change the given fields of an existing task; the others are kept."""
    task_id = _task_id(id_arg, id_flag)
    changes = {
        key: value
        for key, value in (
            ("title", title),
            ("instruction", instruction),
            ("verifierId", verifier),
            ("difficulty", difficulty),
        )
        if value is not None
    }
    if not changes:
        raise click.UsageError(
            "Nothing to update: pass --title, --instruction, --verifier or --difficulty."
        )

    async def go() -> tuple[Task, str]:
        handle = await open_environment(env_name)
        current = await handle.tasks.get(task_id)
        written = await handle.tasks.update({**current.to_dict(), **changes})
        return await handle.tasks.get(task_id), written

    updated, file = run_async(go)
    _report("update", "Updated", updated, file, as_json)


#: The conventional difficulties; others are kept as given (as in Silo) but noted.
DIFFICULTIES = ("easy", "medium", "hard")


def _report(action: str, verb: str, t: Task, file: str, as_json: bool) -> None:
    if as_json:
        echo_json({"ok": True, "action": action, "task": t.to_dict(), "file": file})
    else:
        click.echo(f"{verb} {file}")
    if t.difficulty not in (*DIFFICULTIES, "unspecified"):
        # A typo ("meduim") would otherwise split reports by difficulty without a word.
        click.echo(
            f'warning: difficulty "{t.difficulty}" is not one of {", ".join(DIFFICULTIES)} '
            "(kept as given).",
            err=True,
        )


@task.command("remove")
@click.argument("task_id", metavar="ID")
@env_option
@json_option
def remove(task_id: str, env_name: str, as_json: bool) -> None:
    """Delete the file the task came from."""

    async def go() -> str:
        return await (await open_environment(env_name)).tasks.remove(task_id)

    file = run_async(go)
    if as_json:
        echo_json({"ok": True, "action": "remove", "id": task_id, "file": file})
    else:
        click.echo(f"Removed {file}")
