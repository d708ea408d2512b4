"""``silo-async env``: list the environments, validate one without running an agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ._common import (
    OrderedGroup,
    echo_json,
    elsewhere,
    env_option,
    json_option,
    open_environment,
    open_project,
    run_async,
)

__all__ = ["env"]


@click.group("env", cls=OrderedGroup)
def env() -> None:
    """Environments: list them or validate one."""


@env.command("list")
@json_option
def env_list(as_json: bool) -> None:
    """List the environments of this project."""

    async def go() -> list[str]:
        return await (await open_project()).environments.list()

    names = run_async(go)
    if as_json:
        echo_json(names)
        return
    if not names:
        click.echo("No environments. Create one with `silo-async init <name>`.")
        hint = elsewhere(Path.cwd())
        if hint:
            click.echo(hint, err=True)
    for name in names:
        click.echo(name)


@env.command("validate", short_help="Check an environment; exit 1 on any error.")
@env_option
@json_option
@click.pass_context
def env_validate(ctx: click.Context, env_name: str, as_json: bool) -> None:
    """Check data, loading, tools, verifiers and tasks; exit 1 on any error finding."""

    async def go() -> dict[str, Any]:
        report = await (await open_environment(env_name)).validate()
        return report.to_dict()

    report = run_async(go)
    if as_json:
        echo_json(report)
    else:
        for finding in report["findings"]:
            click.echo(f"{finding['level'].upper()}\t{finding['code']}\t{finding['message']}")
        counts = report["counts"]
        click.echo(
            f"{'OK' if report['ok'] else 'FAILED'}\t{report['environment']}\t"
            f"data={counts['data']} tasks={counts['tasks']} tools={counts['tools']} "
            f"verifiers={counts['verifiers']}"
        )
    if not report["ok"]:
        ctx.exit(1)
