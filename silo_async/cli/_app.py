"""The root ``silo-async`` group: global options, command order and error reporting."""

from __future__ import annotations

import importlib.util
from typing import Any

import click

from .._version import __version__
from ._audit import audit_command
from ._common import BACKEND_KEY, OrderedGroup, any_text_streams
from ._data import data
from ._env import env
from ._errors import reporting_errors
from ._eval import eval_command
from ._evals import evals, report_command
from ._examples import attach_examples
from ._export import export_command
from ._import import import_command
from ._init import init
from ._run import run
from ._runs import replay_command, runs
from ._scripted_model import scripted_model
from ._serve import serve
from ._tasks import task
from ._tools import tool, verifier
from ._usage import one_line_usage, root_option_after_command

__all__ = ["app"]

_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

_EPILOG = """\b
Examples:
  silo-async init demo
  silo-async data add customers --env demo --file customers.json
  silo-async tool add block_customer --env demo
  silo-async env validate --env demo
  silo-async run --env demo --task TASK-001 --agent ./silo_agent.py --runs 5
"""


class _RootGroup(OrderedGroup):
    """Reports every failure below it as one line on stderr (usage errors too)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        # The root's own options (--backend curio) are parsed here, before invoke().
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise one_line_usage(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        # The root's own options are parsed before invoke() runs; its callback runs inside.
        try:
            with reporting_errors(show_traceback=bool(ctx.params.get("show_traceback"))):
                return super().invoke(ctx)
        except click.NoSuchOption as exc:
            raise one_line_usage(root_option_after_command(self, exc) or exc) from None
        except click.UsageError as exc:
            raise one_line_usage(exc) from None


@click.group(cls=_RootGroup, context_settings=_CONTEXT, invoke_without_command=True, epilog=_EPILOG)
@click.version_option(__version__, "-V", "--version", prog_name="silo-async")
@click.option(
    "--backend",
    type=click.Choice(["asyncio", "trio"]),
    default="asyncio",
    show_default=True,
    help="Event loop to run on.",
)
@click.option(
    "--traceback",
    "show_traceback",
    is_flag=True,
    help="Show the full traceback of an unexpected error.",
)
@click.pass_context
def app(ctx: click.Context, backend: str, show_traceback: bool) -> None:
    """Build simulated worlds and score AI agents in them.

    Commands work on the project in the current directory: its .silo/ (environments live in
    .silo/environments/). Run them from the project root.
    """
    if backend == "trio" and importlib.util.find_spec("trio") is None:
        raise click.BadParameter(
            'the trio backend needs the "trio" package (pip install trio).',
            param_hint="'--backend'",
        )
    ctx.meta[BACKEND_KEY] = backend
    any_text_streams()
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


runs.add_command(export_command)
for _command in (
    init,
    env,
    data,
    task,
    tool,
    verifier,
    run,
    eval_command,
    audit_command,
    evals,
    report_command,
    runs,
    replay_command,
    serve,
    scripted_model,
    import_command,
):
    app.add_command(_command)
attach_examples(app)
