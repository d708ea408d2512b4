"""``silo-async init``: create an environment from a template (or list the templates)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .._errors import SiloError
from ..project import TemplateInfo, enclosing_project, list_templates, suggest_free_name
from ..project._names import check_environment_name
from ._common import echo_json, json_option, project_store

__all__ = ["init"]

_DEFAULT_TEMPLATE = "blank"


def _stdin_is_terminal() -> bool:
    # A function (not an inline check) so tests can stand in for a terminal.
    return sys.stdin.isatty()


@click.command("init", short_help="Create an environment from a template.")
@click.argument("name", required=False)
@click.option(
    "--template",
    "-t",
    metavar="ID",
    default=None,
    help=f"Template to start from (default: {_DEFAULT_TEMPLATE}; see --list-templates).",
)
@click.option("--list-templates", is_flag=True, help="List the templates and exit.")
@json_option
def init(name: str | None, template: str | None, list_templates: bool, as_json: bool) -> None:
    """Create an environment in .silo/environments/ (prompts for a name on a terminal)."""
    templates = _templates()
    if list_templates:
        _print_templates(templates, as_json)
        return
    if name is None:
        if as_json or not _stdin_is_terminal():
            raise click.UsageError(
                "Missing environment NAME (run `silo-async init` on a terminal to be prompted)."
            )
        existing = project_store().list_environments()
        name = _ask_name(existing)
        if template is None:
            template = _ask_template(templates)
    chosen = template or _DEFAULT_TEMPLATE

    cwd = Path.cwd()
    above = None if (cwd / ".silo").is_dir() else enclosing_project(cwd)
    directory = project_store().create_environment(name, chosen).path
    if above is not None:
        # As in Silo, a project is the current directory: say so before it surprises anyone.
        click.echo(f"note: started a separate project here; {above} holds another.", err=True)
    if as_json:
        echo_json({"ok": True, "name": name, "template": chosen, "directory": str(directory)})
        return
    label = templates[chosen].label if chosen in templates else chosen
    click.echo(f'Created environment "{name}" from {label} at {directory}')


def _templates() -> dict[str, TemplateInfo]:
    return {t.id: t for t in list_templates()}


def _print_templates(templates: dict[str, TemplateInfo], as_json: bool) -> None:
    items = list(templates.values())
    if as_json:
        echo_json(
            [
                {"id": t.id, "label": t.label, "description": t.description}
                for t in templates.values()
            ]
        )
        return
    for t in items:
        click.echo(f"{t.id}\t{t.label}\t{t.description}")


def _ask_name(existing: list[str]) -> str:
    """Prompt until the name is valid and free; a taken name pre-fills a free variant."""
    suggestion: str | None = None
    while True:
        raw = click.prompt("Environment name", default=suggestion, show_default=True)
        name = str(raw).strip()
        if not name:
            continue
        try:
            check_environment_name(name)
        except SiloError as exc:
            click.echo(exc.message)
            continue
        if name.lower() in {e.lower() for e in existing}:
            suggestion = suggest_free_name(name, existing)
            click.echo(
                f'Environment "{name}" already exists. Press Enter for "{suggestion}" '
                "or type another name."
            )
            continue
        return name


def _ask_template(templates: dict[str, TemplateInfo]) -> str:
    click.echo("Templates:")
    width = max(len(t) for t in templates)
    for t in templates.values():
        click.echo(f"  {t.id.ljust(width)}  {t.label} — {t.description}")
    default = _DEFAULT_TEMPLATE if _DEFAULT_TEMPLATE in templates else next(iter(templates))
    choice = click.prompt(
        "Template",
        type=click.Choice(list(templates), case_sensitive=False),
        default=default,
        show_choices=False,
    )
    return str(choice).lower()
