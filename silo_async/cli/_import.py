"""``silo-async import``: environments made from another benchmark's own code and data.

``silo-async import tau2 [PATH] --domain airline|retail|telecom|mock [--name NAME] [--split S]``
records a tau2 domain as an environment of the project, copying nothing of tau2.
"""

from __future__ import annotations

from pathlib import Path

import click

from ._common import OrderedGroup, echo_json, json_option, project_root

__all__ = ["import_command"]

_DOMAINS = ("airline", "retail", "telecom", "mock")


@click.group("import", cls=OrderedGroup, short_help="Import a benchmark as an environment.")
def import_command() -> None:
    """Import another benchmark's domain as an environment of the project."""


@import_command.command("tau2")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--domain", required=True, type=click.Choice(_DOMAINS), help="tau2's domain.")
@click.option("--name", default=None, metavar="NAME", help="Environment name (tau2-<domain>).")
@click.option(
    "--split",
    default=None,
    metavar="S",
    help="Task split (default: the domain's own, e.g. base; telecom's full set: full).",
)
@click.option(
    "--judge-model",
    default=None,
    metavar="PROVIDER/MODEL",
    help="Judges assertions in natural language, with tau2's prompt (default: not graded).",
)
@click.option("--judge-base-url", default=None, metavar="URL", help="The judge model's server.")
@json_option
def tau2(
    path: Path | None,
    domain: str,
    name: str | None,
    split: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    as_json: bool,
) -> None:
    """Import tau2-bench's DOMAIN from the checkout at PATH (default: the installed tau2).

    Nothing of tau2 is copied: the environment records where tau2 is, its version (and commit),
    the split and the SHA-256 of every data file it reads, and loads tau2 at run time; a data
    file changed since is environment_stale.
    """
    from ..integrations.tau2 import import_tau2  # loads tau2: only for this command

    if judge_base_url is not None and judge_model is None:
        raise click.UsageError("--judge-base-url applies to a judge; add --judge-model.")
    env_dir, record = import_tau2(
        project_root(),
        domain,
        path=path,
        name=name,
        split=split,
        judge_model=judge_model,
        judge_base_url=judge_base_url,
    )
    if as_json:
        echo_json({"ok": True, "name": env_dir.name, "directory": str(env_dir), **record})
        return
    version = record["version"] or "unknown version"
    commit = f", commit {record['commit'][:12]}" if record["commit"] else ""
    click.echo(
        f"Imported tau2 {domain} ({version}{commit}; {record['tasks']} tasks, "
        f'{len(record["digests"])} data files) as environment "{env_dir.name}" at {env_dir}'
    )
