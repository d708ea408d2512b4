"""``silo-async env``: list the environments, validate one without running an agent."""

from __future__ import annotations

from pathlib import Path

import attrs
import click

from .._checks import Finding, ValidationReport
from ..agents._load import load_agent
from ..auditing import audit, audit_findings
from ..project._validate import validate_environment
from ..testing._families_check import DEFAULT_INSTANCES
from ._common import (
    OrderedGroup,
    check_agent_specs,
    echo_json,
    elsewhere,
    env_option,
    environment_store,
    json_option,
    project_store,
    run_async,
)
from ._types import WholeNumber

__all__ = ["env"]


@click.group("env", cls=OrderedGroup)
def env() -> None:
    """Environments: list them or validate one."""


@env.command("list")
@json_option
def env_list(as_json: bool) -> None:
    """List the environments of this project."""
    names = project_store().list_environments()
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


def _solver_text(spec: str | None, done: dict[str, int] | None) -> str:
    """The OK line's last field: what ``--solver`` did (nothing without one)."""
    if spec is None:
        return ""
    if done is None:
        return "\tsolver not run (fix the errors above first)"
    return f"\tsolver passed {done['passed']}/{done['tasks']}"


@env.command("validate", short_help="Check an environment; exit 1 on any error.")
@env_option
@click.option(
    "--solver",
    "solver_spec",
    default=None,
    metavar="PATH[:NAME]|MODULE:NAME",
    callback=check_agent_specs,
    help="An agent that solves every task: each must pass with reward 1.0 (tasks with a "
    "user, with their scripted user, whose script must not end before the solver's writes).",
)
@click.option(
    "--instances",
    type=WholeNumber(min=1),
    default=DEFAULT_INSTANCES,
    show_default=True,
    help="Instances of each task family to check (seeds 0, 1, 2...): they build, their gold "
    "calls succeed, the gold agent passes and a do-nothing agent fails.",
)
@click.option(
    "--audit",
    "with_audit",
    is_flag=True,
    help="Also audit every task (silo-async audit): a task a probe passes is an error "
    "(task_gameable), and with --solver one a mutant of the solver passes (task_loose).",
)
@json_option
@click.pass_context
def env_validate(
    ctx: click.Context,
    env_name: str,
    solver_spec: str | None,
    instances: int,
    with_audit: bool,
    as_json: bool,
) -> None:
    """Check data, loading, tools, verifiers, tasks and task families; exit 1 on any error."""
    store = environment_store(env_name)
    solver = load_agent(solver_spec, Path.cwd()).fn if solver_spec is not None else None

    async def validate() -> ValidationReport:
        report = await validate_environment(
            store.path, store.project.cwd, solver=solver, instances=instances
        )
        if not with_audit:
            return report
        if not report.ok:
            skipped = Finding(
                "warning", "audit_skipped", "The audit did not run: fix the errors above first."
            )
            return attrs.evolve(report, findings=(*report.findings, skipped))
        audited = await audit(store.load(), solver=solver)
        found = audit_findings(audited, Path.cwd())
        return attrs.evolve(report, findings=(*report.findings, *found))

    # The one event loop of this command: validation runs a do-nothing agent on every task.
    report = run_async(validate).to_dict()
    if as_json:
        echo_json(report)
    else:
        for finding in report["findings"]:
            click.echo(f"{finding['level'].upper()}\t{finding['code']}\t{finding['message']}")
        counts = report["counts"]
        click.echo(
            f"{'OK' if report['ok'] else 'FAILED'}\t{report['environment']}\t"
            f"data={counts['data']} tasks={counts['tasks']} tools={counts['tools']} "
            f"verifiers={counts['verifiers']}" + _solver_text(solver_spec, report["solver"])
        )
    if not report["ok"]:
        ctx.exit(1)
