"""``silo-async audit``: try to earn each task's reward without doing it.

Plays the probes and, with ``--solver``, the solver's mutants on every task; prints a table a
person reads at a glance (task, verdict, the best probe and how far below the solver it stays,
and why a task is not sound), then the counts. ``--fail-on`` decides the exit code. On a
terminal a progress line counts the verdicts as tasks are judged.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ..agents._load import load_agent
from ..auditing import PROBES, VERDICTS, AuditReport, audit, table
from ._common import (
    check_agent_specs,
    echo_json,
    env_option,
    environment_store,
    json_option,
    run_async,
)
from ._models import user_factory
from ._report import relative
from ._types import WholeNumber

__all__ = ["DEFAULT_COUNT", "AuditProgress", "audit_command", "parse_probes"]

#: Instances per ``--family`` when ``--count`` is not given (eval's rule).
DEFAULT_COUNT = 10


def parse_probes(
    ctx: click.Context | None, param: click.Parameter | None, value: str | None
) -> tuple[str, ...] | None:
    """``--probes noop,echo``: known names, at least one (else a usage error, exit 2)."""
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise click.BadParameter(f"no probe given; pick some of: {','.join(PROBES)}.", ctx, param)
    unknown = [n for n in names if n not in PROBES]
    if unknown:
        raise click.BadParameter(
            f"unknown probe {unknown[0]!r}; pick some of: {','.join(PROBES)}.", ctx, param
        )
    return tuple(names)


class AuditProgress:
    """A progress line on stderr while tasks are judged: only on a terminal, only with rich.

    Args:
        enabled: draw it (stderr is a terminal and ``--json`` was not asked).
        console: the rich console to draw on (default: stderr).
    """

    def __init__(self, enabled: bool, console: Any = None) -> None:
        self.counts = dict.fromkeys(VERDICTS, 0)
        self.progress: Any = None
        if not enabled:
            return
        try:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
        except ImportError:  # rich is an optional extra: no line, same audit
            return
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("audit {task.fields[info]}"),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            transient=True,
        )
        self.task = self.progress.add_task("audit", total=None, info="")

    def __enter__(self) -> AuditProgress:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def judged(self, entry: Mapping[str, Any]) -> None:
        """One more task judged: count its verdict."""
        self.counts[str(entry["verdict"])] += 1
        if self.progress is not None:
            done = sum(self.counts.values())
            info = f"{done} task{'s' if done != 1 else ''} judged: " + ", ".join(
                f"{n} {v}" for v, n in self.counts.items() if n
            )
            self.progress.update(self.task, info=info)


def audit_text(report: AuditReport, cwd: Path) -> str:
    """The table, the counts, and where the audit was written."""
    where = relative(report.path, cwd)
    return f"{table(report)}\nWritten to {where} (audit.json, audit.md, runs/)."


@click.command("audit", short_help="Try to earn each task's reward without doing it.")
@env_option
@click.option(
    "--task",
    "task_ids",
    multiple=True,
    metavar="ID",
    help="A task to audit (repeatable; default: every task).",
)
@click.option(
    "--family",
    "families",
    multiple=True,
    metavar="ID",
    help="A task family (repeatable): audit its first --count instances (split test, from "
    "seed 0), each with its own gold solution as the solver. Only instances, unless --task "
    "names tasks too.",
)
@click.option(
    "--count",
    type=WholeNumber(min=1),
    default=None,
    help="Instances per --family (default 10).",
)
@click.option(
    "--solver",
    "solver_spec",
    default=None,
    metavar="PATH[:NAME]|MODULE:NAME",
    callback=check_agent_specs,
    help="An agent that solves the tasks: its mutants (each world-changing call dropped, "
    "repeated or altered) must fail, else the task is loose.",
)
@click.option(
    "--probes",
    default=None,
    metavar="LIST",
    callback=parse_probes,
    help=f"Comma-separated probes to play (default: all of {','.join(PROBES)}).",
)
@click.option(
    "--seed",
    type=WholeNumber(min=0),
    default=0,
    show_default=True,
    help="Seeds the probes and the altered values.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The audit directory (default: .silo/audits/<auditId>/).",
)
@click.option(
    "--user-model",
    default=None,
    metavar="PROVIDER/MODEL",
    help="A model plays the user of conversational tasks (default: each task's script).",
)
@click.option("--user-base-url", default=None, metavar="URL", help="The model user's server.")
@click.option(
    "--fail-on",
    type=click.Choice(["gameable", "loose", "never"]),
    default="gameable",
    show_default=True,
    help="Exit 1 when a task is unsolved or gameable; with loose, also when one is loose.",
)
@json_option
@click.pass_context
def audit_command(
    ctx: click.Context,
    env_name: str,
    task_ids: tuple[str, ...],
    families: tuple[str, ...],
    count: int | None,
    solver_spec: str | None,
    probes: tuple[str, ...] | None,
    seed: int,
    out: Path | None,
    user_model: str | None,
    user_base_url: str | None,
    fail_on: str,
    as_json: bool,
) -> None:
    """Play probes (noop, echo, explorer, spammer) and a solver's mutants on every task.

    Tasks: --task (repeatable), --family F --count N (instances, each solved by its gold
    solution), or every hand-written task. A task is unsolved (the solver fails), gameable (a
    probe passes), loose (a mutant with a world-changing call dropped or altered passes) or
    sound. Every rollout is written under the audit directory, with audit.json and audit.md.
    """
    if count is not None and not families:
        raise click.UsageError("--count applies to --family: name a task family too.")
    user = user_factory(user_model, user_base_url, None)
    cwd = Path.cwd()
    environment = environment_store(env_name).load()
    tasks = list(task_ids) or None
    if tasks is not None:  # an unknown task fails before the solver is imported
        for task_id in tasks:
            environment.verifier_for(environment.task(task_id))
    chosen = dict.fromkeys(families, count or DEFAULT_COUNT) or None
    solver = load_agent(solver_spec, cwd).fn if solver_spec is not None else None
    with AuditProgress(not as_json and sys.stderr.isatty()) as progress:
        report = run_async(
            lambda: audit(
                environment,
                tasks,
                solver=solver,
                probes=probes,
                families=chosen,
                seed=seed,
                out=out,
                user=user,
                on_task=progress.judged,
            )
        )
    if as_json:
        echo_json(report.to_dict())
    else:
        click.echo(audit_text(report, cwd))
    if report.failed(fail_on):
        ctx.exit(1)
