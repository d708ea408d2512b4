"""``silo-async task``: tasks, ``tasks/<id>.json`` — objectives and the verifiers grading them."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import attrs
import click

from .._errors import SiloError
from .._task import Task
from ._common import (
    OrderedGroup,
    echo_done,
    echo_json,
    echo_list,
    env_option,
    environment_store,
    json_option,
    note_broken_tasks,
)
from ._task_families import list_families, sample_command, show_instance

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["task"]


@click.group("task", cls=OrderedGroup)
def task() -> None:
    """Tasks: list, show, add, update or remove tasks/<id>.json."""


def _loaded_tasks(env_name: str) -> list[Task] | None:
    """The tasks of an environment without a ``tasks/`` directory, from its entrypoint.

    An imported environment (``silo-async import tau2``) has no task files: its entrypoint
    makes its tasks when it loads. ``None`` for an environment with ``tasks/``.
    """
    store = environment_store(env_name)
    if (store.require() / "tasks").is_dir():
        return None
    from ..project import load_environment  # imports the environment's code: only here

    return list(load_environment(store.name, store.project.cwd).tasks)


@task.command("list", short_help="List the tasks (or, with --families, the task families).")
@env_option
@click.option(
    "--families", is_flag=True, help="List the task families instead (id, difficulty, title)."
)
@json_option
def list_(env_name: str, families: bool, as_json: bool) -> None:
    """List the tasks, sorted by id (or, with --families, the task families).

    A task file that cannot be read is left out and named on stderr.
    """
    if families:
        list_families(env_name, as_json)
        return
    loaded = _loaded_tasks(env_name)
    broken: list[SiloError] = []
    if loaded is None:
        loaded = environment_store(env_name).tasks.list(broken=broken)
        note_broken_tasks(broken, env_name)
    echo_list(
        loaded,
        as_json,
        line=lambda t: f"{t.id}\t{t.difficulty}\t{t.verifier_id}\t{t.title}",
        empty="No tasks.",
        to_json=Task.to_dict,
    )


@task.command("show", short_help="Print a task, or an instance FAMILY#SEED with its gold.")
@click.argument("id_arg", metavar="[ID]", required=False)
@click.option("--task", "id_flag", default=None, metavar="ID", help="Task id (or ID).")
@env_option
@json_option
def show(id_arg: str | None, id_flag: str | None, env_name: str, as_json: bool) -> None:
    """Print a task as JSON; an instance FAMILY#SEED with its split, params and gold calls."""
    task_id = _task_id(id_arg, id_flag)
    if "#" in task_id:
        show_instance(env_name, task_id, as_json)
        return
    loaded = _loaded_tasks(env_name)
    if loaded is None:
        echo_json(environment_store(env_name).tasks.get(task_id).to_dict())
        return
    found = next((t for t in loaded if t.id == task_id), None)
    if found is None:
        raise SiloError(
            "task_not_found",
            f'Task "{task_id}" was not found in environment "{env_name}". Available: '
            f"{', '.join(t.id for t in loaded) or 'none'}.",
            {"environment": env_name, "id": task_id},
        )
    echo_json(found.to_dict())


task.add_command(sample_command)  # listed after show: the commands that read come first


@attrs.frozen
class TaskFields:
    """The task id and the field flags of ``task add`` / ``task update`` (None: not given)."""

    id: str
    title: str | None
    instruction: str | None
    verifier: str | None
    difficulty: str | None
    user: str | None = None

    def given(self) -> dict[str, Any]:
        """The fields given, under their names on disk, in file order."""
        fields: dict[str, Any] = {
            "title": self.title,
            "instruction": self.instruction,
            "verifierId": self.verifier,
            "difficulty": self.difficulty,
            "user": None if self.user is None else read_user(self.user),
        }
        return {key: value for key, value in fields.items() if value is not None}


def read_user(value: str) -> Any:
    """``--user``: the JSON of a ``user`` object, inline or in the file it names.

    Raises:
        SiloError: ``invalid_json`` when the text (or the file) is not JSON.
    """
    path = Path(value)
    source = "--user"
    text = value
    try:
        if value.strip()[:1] not in ("{", "[") and path.is_file():
            source, text = f'--user file "{value}"', path.read_text(encoding="utf-8")
    except OSError:  # a name too long to be a file: it is the JSON text
        pass
    try:
        return json.loads(text)
    except ValueError as exc:
        raise SiloError(
            "invalid_json",
            f"{source} is not valid JSON ({exc}); pass the user object, e.g. "
            '--user \'{"opening": "Hi, I need help."}\', or a file holding it.',
            {"flag": "--user"},
        ) from None


def _fields(fn: F) -> F:
    """``[ID]``, ``--id`` and the field flags, handed to the command as one ``fields`` value."""

    @functools.wraps(fn)
    def command(
        *args: Any,
        id_arg: str | None,
        id_flag: str | None,
        title: str | None,
        instruction: str | None,
        verifier: str | None,
        difficulty: str | None,
        user: str | None,
        **kwargs: Any,
    ) -> Any:
        task_id = _task_id(id_arg, id_flag)
        fields = TaskFields(task_id, title, instruction, verifier, difficulty, user)
        return fn(*args, fields=fields, **kwargs)

    decorated: Callable[..., Any] = command
    for flag, help_text in reversed(
        [
            ("--title", "Short human label."),
            ("--instruction", "The only text the agent receives (the objective, no solution)."),
            ("--verifier", "Id of the verifier that grades the task (e.g. VER-001)."),
            ("--difficulty", "easy, medium or hard (default: unspecified)."),
            (
                "--user",
                "The user the agent talks to: a JSON object {opening, persona, knows, script, "
                "otherwise, tools, maxTurns}, or a file holding it.",
            ),
        ]
    ):
        metavar = {"--verifier": "ID", "--user": "JSON|FILE"}.get(flag, "TEXT")
        decorated = click.option(flag, default=None, metavar=metavar, help=help_text)(decorated)
    decorated = click.option(
        "--id", "id_flag", default=None, metavar="ID", help="Task id (or ID)."
    )(decorated)
    return cast(F, click.argument("id_arg", metavar="[ID]", required=False)(decorated))


def _task_id(id_arg: str | None, id_flag: str | None) -> str:
    if id_arg is not None and id_flag is not None and id_arg != id_flag:
        raise click.UsageError(f'Two different task ids: "{id_arg}" and --id "{id_flag}".')
    task_id = id_flag if id_flag is not None else id_arg
    if task_id is None:
        raise click.UsageError("Missing task id: pass ID or --id ID.")
    return task_id


def _require_fields(fields: TaskFields) -> None:
    """Name every missing field flag at once, instead of one per attempt."""
    given = fields.given()
    flags = {"title": "title", "instruction": "instruction", "verifierId": "verifier"}
    missing = [key for key in flags if key not in given]
    if not missing:
        return
    named = [f'"{key}" (--{flags[key]})' for key in missing]
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"
    raise SiloError(
        "task_invalid",
        f'Task "{fields.id}" is missing a non-empty {listed}.',
        {"id": fields.id, "fields": missing},
    )


@task.command("add", short_help="Create tasks/<id>.json.")
@_fields
@env_option
@json_option
def add(fields: TaskFields, env_name: str, as_json: bool) -> None:
    """Create tasks/<id>.json (--title, --instruction and --verifier are required)."""
    _require_fields(fields)
    tasks = environment_store(env_name).tasks
    written = tasks.add({"id": fields.id, **fields.given()})
    _report("add", "Created", tasks.get(fields.id), written, as_json)


@task.command("update")
@_fields
@env_option
@json_option
def update(fields: TaskFields, env_name: str, as_json: bool) -> None:
    """Change the given fields of an existing task; the others are kept."""
    changes = fields.given()
    if not changes:
        raise click.UsageError(
            "Nothing to update: pass --title, --instruction, --verifier, --difficulty or --user."
        )
    tasks = environment_store(env_name).tasks
    written = tasks.update({**tasks.get(fields.id).to_dict(), **changes})
    _report("update", "Updated", tasks.get(fields.id), written, as_json)


#: The conventional difficulties; others are kept as given (as in Silo) but noted.
DIFFICULTIES = ("easy", "medium", "hard")


def _report(action: str, verb: str, t: Task, file: str, as_json: bool) -> None:
    echo_done(action, verb, file, as_json, "task", t.to_dict())
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
    removed = environment_store(env_name).tasks.remove(task_id)
    echo_done("remove", "Removed", removed, as_json, "id", task_id)
