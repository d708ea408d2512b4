"""``silo-async data``: datasets, ``data/<name>.json`` — the facts a world is built from."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .._errors import SiloError
from ._common import (
    OrderedGroup,
    echo_done,
    echo_json,
    echo_list,
    env_option,
    environment_store,
    json_option,
)

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["data"]


def _dataset_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # "customers.json" means the dataset "customers": its file is already data/<name>.json,
    # so keeping the suffix would create data/customers.json.json and state["customers.json"].
    return value[: -len(".json")] if value.lower().endswith(".json") and len(value) > 5 else value


_name_argument = click.argument("name", callback=_dataset_name)


@click.group(
    "data", cls=OrderedGroup, short_help="Datasets: list, show, add, update or remove data/*.json."
)
def data() -> None:
    """Datasets: list, show, add, update or remove data/<name>.json."""


@data.command("list")
@env_option
@json_option
def list_(env_name: str, as_json: bool) -> None:
    """List the datasets with their files and sizes."""
    echo_list(
        environment_store(env_name).data.list(),
        as_json,
        line=lambda e: f"{e['name']}\t{e['file']}\t{e['bytes']}B",
        empty="No datasets.",
    )


@data.command("show")
@_name_argument
@env_option
@json_option
def show(name: str, env_name: str, as_json: bool) -> None:
    """Print a dataset's content as JSON."""
    echo_json(environment_store(env_name).data.get(name))


def _content_options(fn: F) -> F:
    fn = click.option(
        "--data",
        "inline",
        metavar="JSON",
        default=None,
        help="The content as a JSON value.",
    )(fn)
    return click.option(
        "--file",
        "file",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help="Read the content from a JSON file.",
    )(fn)


def _reject_constant(token: str) -> Any:
    # Python's json module accepts NaN and Infinity; JSON (and every other reader) does not.
    raise ValueError(f"{token} is not valid JSON")


def _parse(text: str, source: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise SiloError(
            "invalid_json", f"{source} is not valid JSON: {exc}", {"source": source}
        ) from exc


def read_content(file: Path | None, inline: str | None) -> Any:
    """The JSON value given with exactly one of ``--file`` or ``--data``.

    Raises:
        click.UsageError: both or neither given.
        SiloError: ``invalid_json`` naming the parser's message.
    """
    if file is not None and inline is not None:
        raise click.UsageError("Pass either --file or --data, not both.")
    if file is not None:
        source = f'Content of --file "{file}"'
        try:
            # utf-8-sig: editors on Windows start files with a BOM; the dataset is re-written
            # as plain UTF-8, so accepting it here costs nothing.
            text = file.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise SiloError(
                "invalid_json", f"{source} is not UTF-8 text: {exc}", {"source": source}
            ) from None
        return _parse(text, source)
    if inline is not None:
        return _parse(inline, "Content of --data")
    raise click.UsageError("Missing --file PATH or --data JSON.")


@data.command("add")
@_name_argument
@env_option
@_content_options
@json_option
def add(name: str, env_name: str, file: Path | None, inline: str | None, as_json: bool) -> None:
    """Create data/<name>.json (fails if it exists)."""
    value = read_content(file, inline)
    written = environment_store(env_name).data.add(name, value)
    echo_done("add", "Created", written, as_json, "name", name)


@data.command("update")
@_name_argument
@env_option
@_content_options
@json_option
def update(name: str, env_name: str, file: Path | None, inline: str | None, as_json: bool) -> None:
    """Replace the content of an existing dataset."""
    value = read_content(file, inline)
    written = environment_store(env_name).data.update(name, value)
    echo_done("update", "Updated", written, as_json, "name", name)


@data.command("remove")
@_name_argument
@env_option
@json_option
def remove(name: str, env_name: str, as_json: bool) -> None:
    """Delete data/<name>.json."""
    removed = environment_store(env_name).data.remove(name)
    echo_done("remove", "Removed", removed, as_json, "name", name)
