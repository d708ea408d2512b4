"""Small helpers every command uses: the event loop, the project, JSON output, shared options.

Authoring commands call the synchronous store (:class:`~silo_async.project.ProjectStore`)
directly and start no event loop; commands that run rollouts start exactly one
(:func:`run_async`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import anyio
import click

from .._environment import Environment
from .._errors import SiloError
from .._flood import DEFAULT_MAX_CONNECTIONS, DEFAULT_READ_TIMEOUT
from .._jsonutil import pretty_json
from .._telemetry import env_enabled, shutdown, switch_on
from ..project import (
    EnvironmentStore,
    ProjectStore,
    check_environment_name,
    enclosing_project,
)
from ._types import WholeNumber
from ._usage import misplaced_option_hint

__all__ = [
    "BACKEND_KEY",
    "OrderedGroup",
    "any_text_streams",
    "call_and_time_options",
    "check_agent_specs",
    "echo_done",
    "echo_json",
    "echo_list",
    "elsewhere",
    "env_option",
    "environment_store",
    "gate_options",
    "json_option",
    "limit_options",
    "otel_option",
    "policy_version_option",
    "project_root",
    "project_store",
    "run_async",
]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

#: Where the root group stores the ``--backend`` choice (``ctx.meta`` is shared by subcommands).
BACKEND_KEY = "silo_async.backend"
#: Where ``--json`` keeps the real stdout while prints are sent to stderr.
JSON_STDOUT_KEY = "silo_async.json_stdout"


class OrderedGroup(click.Group):
    """A group that lists its commands in the order they were added (workflow order).

    It also explains a subcommand's option given before the subcommand (``silo-async task
    --env demo list``, ``silo-async --json env list``): click alone would only say the group
    has no such option, or suggest an unrelated one.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            hint = misplaced_option_hint(self, ctx.command_path, exc.option_name, args)
            if hint is None:
                raise
            raise click.NoSuchOption(exc.option_name, message=hint, ctx=ctx) from None


def run_async(fn: Callable[[], Awaitable[T]]) -> T:
    """Run ``fn()`` on the backend chosen with ``--backend``: the CLI's only ``anyio.run``."""
    ctx = click.get_current_context(silent=True)
    backend = ctx.meta.get(BACKEND_KEY, "asyncio") if ctx is not None else "asyncio"
    return anyio.run(fn, backend=backend)


def project_root() -> Path:
    """The project the CLI works on: the current directory, as in Silo (see :func:`elsewhere`)."""
    return Path.cwd()


def elsewhere(cwd: Path) -> str:
    """A hint for a command run where there is no ``.silo/``: the project above, if any."""
    if (cwd / ".silo").is_dir():
        return ""
    above = enclosing_project(cwd)
    if above is None:
        return ""
    back = os.path.relpath(above, cwd)
    return f"The nearest project is {above}: run silo-async from there (cd {back})."


def check_agent_specs(
    ctx: click.Context, param: click.Parameter, value: str | tuple[str, ...] | None
) -> str | tuple[str, ...] | None:
    """``--agent`` callback: a blank value is a usage error (exit 2), like any bad flag."""
    values = value if isinstance(value, tuple) else () if value is None else (value,)
    if any(not v.strip() for v in values):
        raise click.BadParameter(
            "the value is empty; pass PATH.py, PATH.py:name or package.module:name.", ctx, param
        )
    return value


def project_store() -> ProjectStore:
    """The project of the current directory (see :func:`project_root`), synchronously."""
    return ProjectStore(project_root())


def environment_store(name: str) -> EnvironmentStore:
    """The named environment of the current project (SiloError ``environment_not_found``)."""
    project = project_store()
    if not (project.cwd / ".silo").is_dir():
        # No project here: the likely mistake is the directory, so name it (and the project
        # above it, when there is one).
        check_environment_name(name)
        fix = elsewhere(project.cwd) or (
            f'Run this from your project, or create the environment here with "silo-async init '
            f'{name}".'
        )
        raise SiloError(
            "environment_not_found",
            f'Environment "{name}" was not found: there is no .silo/ in {project.cwd}. {fix}',
            {"environment": name, "available": []},
        )
    return project.open_environment(name)


def echo_json(value: Any) -> None:
    r"""Print ``value`` as pretty, strict JSON (2-space indent, UTF-8) on stdout.

    Under ``--json`` this is the real stdout, even while other prints go to stderr. The rules of
    every artifact apply: NaN and ±Infinity are ``null``, and (with the streams set up by
    :func:`any_text_streams`) a lone surrogate is printed as its ``\uXXXX`` escape.
    """
    ctx = click.get_current_context(silent=True)
    out = ctx.meta.get(JSON_STDOUT_KEY) if ctx is not None else None
    click.echo(pretty_json(value), file=out, nl=False)


def echo_list(
    items: Sequence[T],
    as_json: bool,
    *,
    line: Callable[[T], str],
    empty: str,
    to_json: Callable[[T], Any] | None = None,
) -> None:
    """What every ``list`` command prints: a JSON array, or one line per item (``empty``: none)."""
    if as_json:
        echo_json([to_json(item) for item in items] if to_json is not None else list(items))
        return
    if not items:
        click.echo(empty)
    for item in items:
        click.echo(line(item))


def echo_done(action: str, verb: str, file: str, as_json: bool, key: str, value: Any) -> None:
    """What a command that wrote or removed one file prints: ``{ok, action, <key>, file}``."""
    if as_json:
        echo_json({"ok": True, "action": action, key: value, "file": file})
    else:
        click.echo(f"{verb} {file}")


def any_text_streams() -> None:
    r"""Let stdout and stderr print any ``str``: a lone surrogate becomes ``\uXXXX``.

    An agent's answer or a tool's output may hold one (``json.loads('"\ud83d"')``); printing
    it must not fail after the run was recorded. In JSON output the escape is the same string.
    """
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # detached or closed stream
                reconfigure(errors="backslashreplace")


def json_option(fn: F) -> F:
    """``--json``: print machine-readable output instead of text.

    While a ``--json`` command runs, anything else printed to stdout (an agent's or a tool's
    ``print``, a module printing on import) goes to stderr, so stdout stays one JSON document.
    """

    @functools.wraps(fn)
    def command(*args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("as_json"):
            return fn(*args, **kwargs)
        click.get_current_context().meta[JSON_STDOUT_KEY] = sys.stdout
        with contextlib.redirect_stdout(sys.stderr):
            return fn(*args, **kwargs)

    option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
    return cast(F, option(command))


def limit_options(fn: F) -> F:
    """``--max-tool-calls N``, ``--timeout-ms MS``, ``--token-limit N``: per-rollout limits."""
    fn = click.option(
        "--token-limit",
        type=WholeNumber(min=0),
        default=None,
        help="Recorded input + output tokens per rollout before the agent is stopped "
        "(max_tokens; default: no limit).",
    )(fn)
    return call_and_time_options(
        "Tool calls per rollout before the agent is stopped.",
        "Time limit per rollout, in milliseconds.",
    )(fn)


def policy_version_option(fn: F) -> F:
    """``--policy-version V``: stamped on every model step of each rollout."""
    return click.option(
        "--policy-version",
        default=None,
        metavar="V",
        help="Stamp policyVersion V on every model step that has none (a trainer's weights "
        "version; docs/rl-tokens.md).",
    )(fn)


def otel_option(fn: F) -> F:
    """``--otel``: export each rollout as OpenTelemetry spans while the command runs.

    On (``--otel`` or ``SILO_OTEL=1``), the SDK is loaded before anything runs (a missing one
    is ``otel_unavailable`` at once), and every span is sent before the command returns.
    """

    @functools.wraps(fn)
    def with_telemetry(*args: Any, otel: bool, **kwargs: Any) -> Any:
        if not (otel or env_enabled()):
            return fn(*args, **kwargs)
        switch_on()
        try:
            return fn(*args, **kwargs)
        finally:
            shutdown()

    return click.option(
        "--otel",
        is_flag=True,
        help="Export each rollout as OpenTelemetry GenAI spans over OTLP (the OTEL_EXPORTER_"
        "OTLP_* variables; SILO_OTEL=1 too; needs the otel extra; docs/opentelemetry.md).",
    )(cast(F, with_telemetry))


def call_and_time_options(calls_help: str, time_help: str) -> Callable[[F], F]:
    """``--max-tool-calls N`` and ``--timeout-ms MS`` with the library's defaults (100, 120 s).

    Shared by every command that runs rollouts or episodes, so their defaults cannot drift.
    """

    def decorate(fn: F) -> F:
        fn = click.option(
            "--timeout-ms",
            type=WholeNumber(min=1),
            default=120_000,
            show_default=True,
            help=time_help,
        )(fn)
        return click.option(
            "--max-tool-calls",
            type=WholeNumber(min=0),
            default=100,
            show_default=True,
            help=calls_help,
        )(fn)

    return decorate


def gate_options(fn: F) -> F:
    """``--read-timeout-ms MS`` and ``--max-connections N``: every HTTP server's."""
    fn = click.option(
        "--max-connections",
        type=WholeNumber(min=1),
        default=DEFAULT_MAX_CONNECTIONS,
        show_default=True,
        help="HTTP: connections open at once; one more is answered 503 and closed.",
    )(fn)
    return click.option(
        "--read-timeout-ms",
        type=WholeNumber(min=1),
        default=round(DEFAULT_READ_TIMEOUT * 1000),
        show_default=True,
        help="HTTP: a client must send each request's headers and body within it, "
        "or is disconnected.",
    )(fn)


def env_option(fn: F) -> F:
    """``--env NAME``: the environment to work on (required)."""
    return click.option(
        "--env", "env_name", required=True, metavar="NAME", help="Environment name."
    )(fn)


def note_broken_tasks(broken: Sequence[SiloError], env_name: str) -> None:
    """One line on stderr per task file left out because it cannot be read."""
    for problem in broken:
        file = problem.details.get("file", "a task file")
        click.echo(
            f"note: {file} is left out: it cannot be read (silo-async env validate --env "
            f"{env_name} lists its problems).",
            err=True,
        )


def load_for_tasks(store: EnvironmentStore, wanted: Collection[str] | None) -> Environment:
    """The environment of ``store``, for running the tasks ``wanted`` (None: every task).

    A broken task file blocks nothing but itself: one of ``wanted`` (or any, for every task)
    is its own error; the others are left out, each with a note on stderr.
    """
    broken: list[SiloError] = []
    environment = store.load(broken_tasks=broken)
    for problem in broken:
        if wanted is None or problem.details.get("id") in wanted:
            raise problem
    note_broken_tasks(broken, environment.name)
    return environment
