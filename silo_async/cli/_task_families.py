"""``silo-async task list --families``, ``task sample`` and ``task show --task FAMILY#SEED``.

A task family's instances are read from the loaded environment (its families are code); the
instances ``task sample`` prints are those an eval of the family plays: the scan rule of
:meth:`~silo_async.Environment.instances`.
"""

from __future__ import annotations

from typing import Any

import click

from .._environment import Environment
from .._family import split_of
from .._jsonutil import compact_json
from .._task import Task
from ._common import (
    JSON_STDOUT_KEY,
    echo_json,
    echo_list,
    env_option,
    environment_store,
    json_option,
    load_for_tasks,
)
from ._types import WholeNumber

__all__ = ["list_families", "sample_command", "show_instance"]


def _environment(env_name: str) -> Environment:
    """The environment, whatever its task files say (families do not need them)."""
    return load_for_tasks(environment_store(env_name), set())


def list_families(env_name: str, as_json: bool) -> None:
    """``task list --families``: ``[{"id", "title", "difficulty"}]``, or one line each."""
    families = _environment(env_name).families
    echo_list(
        families,
        as_json,
        line=lambda f: f"{f.id}\t{f.difficulty}\t{f.title}",
        empty="No task families.",
        to_json=lambda f: {"id": f.id, "title": f.title, "difficulty": f.difficulty},
    )


def _sampled(task: Task) -> dict[str, Any]:
    return {
        "id": task.id,
        "split": split_of(task),
        "instruction": task.instruction,
        "params": dict(task.params or {}),
    }


def show_instance(env_name: str, task_id: str, as_json: bool) -> None:
    """``task show --task FAMILY#SEED``: the instance, its params and its gold calls."""
    instance = _environment(env_name).instance(task_id)
    gold = [call.to_dict() for call in instance.gold_calls()]
    if as_json:
        echo_json({**_sampled(instance.task), "gold": gold})
        return
    task = instance.task
    lines = [
        f"{task.id}\t{split_of(task)}\t{task.difficulty}\t{task.title}",
        "",
        task.prompt,
        "",
        "params: " + _compact(task.params),
        "gold:",
        *(f"  {call['tool']} {_compact(call['input'])}" for call in gold),
    ]
    answer = instance.answer()
    if answer is not None:
        lines.append(f"answer: {answer}")
    click.echo("\n".join(lines))


def _compact(value: Any) -> str:
    return compact_json(dict(value or {}))


def _echo_line(value: Any) -> None:
    """One JSON object on one line of stdout (the real one under ``--json``)."""
    ctx = click.get_current_context(silent=True)
    out = ctx.meta.get(JSON_STDOUT_KEY) if ctx is not None else None
    click.echo(compact_json(value), file=out)


@click.command("sample", short_help="Print instances of a task family, as an eval plays them.")
@env_option
@click.option("--family", "family", required=True, metavar="ID", help="The task family.")
@click.option("--count", type=WholeNumber(min=1), default=10, show_default=True, help="Instances.")
@click.option(
    "--split",
    type=click.Choice(["train", "test"]),
    default="test",
    show_default=True,
    help="The split to take them from.",
)
@click.option(
    "--start",
    "start_seed",
    type=WholeNumber(min=0),
    default=0,
    show_default=True,
    help="The seed the scan starts from.",
)
@json_option
def sample_command(
    env_name: str, family: str, count: int, split: str, start_seed: int, as_json: bool
) -> None:
    """Print the first --count distinct instances of --family in --split from seed --start.

    The instances eval --family plays with the same flags. With --json, one JSON object per
    line: {"id", "split", "instruction", "params"}.
    """
    tasks = _environment(env_name).instances(family, count, split=split, start=start_seed)
    for task in tasks:
        if as_json:
            _echo_line(_sampled(task))
        else:
            click.echo(f"{task.id}\t{split_of(task)}\t{task.instruction}")
