"""``silo-async serve``: episodes of a task, played by any MCP client over stdio or HTTP.

The ``mcp`` extra is imported only here, when the command runs, so the rest of the CLI (and
``import silo_async``) works without it.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import click

from .._environment import Environment
from .._install import install_line
from .._limits import Limits
from .._result import RunResult
from ._common import (
    BACKEND_KEY,
    call_and_time_options,
    env_option,
    environment_store,
    gate_options,
    load_for_tasks,
    otel_option,
    run_async,
)
from ._errors import fail
from ._faults import fault_options, read_faults
from ._report import run_json, run_text
from ._types import WholeNumber

__all__ = ["serve"]

#: Where an HTTP server listens unless told otherwise.
DEFAULT_PORT = 8765
#: Open episodes an HTTP server holds at once unless told otherwise.
DEFAULT_MAX_EPISODES = 1000
#: Finished episodes an HTTP server remembers unless told otherwise.
DEFAULT_KEEP_FINISHED = 1000
#: The options that only ``--transport http`` takes (parameter name, flag).
HTTP_ONLY = (
    ("host", "--host"),
    ("port", "--port"),
    ("token", "--token"),
    ("allow_origins", "--allow-origin"),
    ("allow_hosts", "--allow-host"),
    ("max_episodes", "--max-episodes"),
    ("read_timeout_ms", "--read-timeout-ms"),
    ("max_connections", "--max-connections"),
    ("keep_finished", "--keep-finished"),
)


def _import_serve() -> ModuleType:
    try:
        # The serve package itself, relative to this one (never through the facade).
        return importlib.import_module("..serve", __package__)
    except ImportError as exc:
        fail(
            "mcp_not_installed",
            f"silo-async serve needs the official MCP SDK, which is not installed ({exc}): "
            f"{install_line('mcp')}.",
        )


def _only_for_http(ctx: click.Context, transport: str) -> None:
    """An HTTP option given on the command line with stdio: a usage error."""
    if transport == "http":
        return
    for name, flag in HTTP_ONLY:
        if ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError(f"{flag} only applies to --transport http.", ctx)


def _check_allowed(allow_hosts: tuple[str, ...], allow_origins: tuple[str, ...]) -> None:
    """``--allow-host``/``--allow-origin`` values that are no host or origin: a usage error."""
    access = importlib.import_module("..serve._access", __package__)
    for flag, name, values in (
        ("--allow-host", "allow_hosts", allow_hosts),
        ("--allow-origin", "allow_origins", allow_origins),
    ):
        try:
            access.Access.build(port=1, bound="127.0.0.1", **{name: values})
        except ValueError as exc:
            raise click.BadParameter(str(exc).split(": ", 1)[1], param_hint=flag) from None


def _reporter(as_json: bool, cwd: Path) -> Callable[[RunResult], None]:
    """Print an ended episode's report on stderr (stdout may be the MCP wire)."""

    def report(result: RunResult) -> None:
        if as_json:
            click.echo(json.dumps(run_json(result, cwd), ensure_ascii=False), err=True)
        else:
            click.echo(run_text(result, cwd), err=True)

    return report


_HARNESS_NAMES = {"openenv": "OpenEnv", "nemo-gym": "NeMo Gym"}


def _serve_harness(
    protocol: str,
    environment: Environment,
    task_id: str | None,
    host: str,
    port: int,
    token: str | None,
    options: dict[str, Any],
    as_json: bool,
) -> None:
    """``--protocol openenv|nemo-gym``: the harness's own server, over HTTP."""
    from ..serve._nemo_gym import serve_nemo_gym
    from ..serve._openenv import serve_openenv

    serve_protocol = serve_openenv if protocol == "openenv" else serve_nemo_gym
    stdout = sys.stdout
    options = {k: v for k, v in options.items() if k != "reveal"}

    def announce(info: dict[str, Any]) -> None:
        endpoint = info.get("ws", info["url"])
        line = (
            json.dumps(info, ensure_ascii=False)
            if as_json
            else f'Serving "{environment.name}" at {info["url"]} — '
            f"{_HARNESS_NAMES[protocol]}: {endpoint}"
        )
        click.echo(line, file=stdout)

    with contextlib.redirect_stdout(sys.stderr):
        run_async(
            lambda: serve_protocol(
                environment,
                task_id,
                host=host,
                port=port,
                token=token,
                on_ready=announce,
                **options,
            )
        )


@click.command("serve", short_help="Serve episodes of a task to any MCP client.")
@env_option
@click.option(
    "--task",
    "task_id",
    default=None,
    metavar="ID",
    help="The task to play (required for MCP; with openenv/nemo-gym, each session names its own).",
)
@click.option(
    "--protocol",
    type=click.Choice(["mcp", "openenv", "nemo-gym"]),
    default="mcp",
    show_default=True,
    help="mcp; openenv: OpenEnv's /ws sessions; nemo-gym: a NeMo Gym resources server (HTTP).",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: this process is one episode; http: many episodes at /episodes/<id>/mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: the address to bind.")
@click.option(
    "--port",
    type=WholeNumber(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="HTTP: the port (0: any free port).",
)
@click.option(
    "--token",
    envvar="SILO_SERVE_TOKEN",
    default=None,
    metavar="TOKEN",
    help="HTTP: require 'Authorization: Bearer TOKEN' on every request [env: SILO_SERVE_TOKEN].",
)
@click.option(
    "--allow-origin",
    "allow_origins",
    multiple=True,
    metavar="ORIGIN",
    help="HTTP: also admit requests from this browser Origin (repeatable).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="HOST",
    help="HTTP: also answer this Host header, e.g. the machine's name (repeatable).",
)
@click.option(
    "--max-episodes",
    type=WholeNumber(min=1),
    default=DEFAULT_MAX_EPISODES,
    show_default=True,
    help="HTTP: episodes open at once; POST /episodes beyond it is 503 capacity_reached.",
)
@click.option(
    "--keep-finished",
    type=WholeNumber(min=0),
    default=DEFAULT_KEEP_FINISHED,
    show_default=True,
    help="HTTP: finished episodes remembered for GET /episodes/<id> (NeMo Gym: ended sessions); "
    "older ones are forgotten, their run directories stay.",
)
@gate_options
@click.option(
    "--token-limit",
    type=WholeNumber(min=0),
    default=None,
    help="Recorded input + output tokens per episode before it ends "
    "(max_tokens; default: no limit).",
)
@call_and_time_options(
    "Tool calls per episode; the one beyond it ends the episode.",
    "Time limit per episode from its start, in milliseconds.",
)
@fault_options
@click.option(
    "--reveal-grade",
    is_flag=True,
    help="submit answers the grade (PASS/FAIL, reward, failed checks) instead of 'Submitted.'.",
)
@otel_option
@click.option("--json", "as_json", is_flag=True, help="Print the startup line and reports as JSON.")
@click.pass_context
def serve(
    ctx: click.Context,
    env_name: str,
    task_id: str | None,
    protocol: str,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    allow_origins: tuple[str, ...],
    allow_hosts: tuple[str, ...],
    max_episodes: int,
    read_timeout_ms: int,
    max_connections: int,
    keep_finished: int,
    max_tool_calls: int,
    timeout_ms: int,
    token_limit: int | None,
    faults_spec: str | None,
    fault_seed: int | None,
    reveal_grade: bool,
    as_json: bool,
) -> None:
    """Serve episodes of a task over MCP; each writes its run under .silo/runs/ when it ends.

    stdio (the default) is one episode per process: point an MCP client at
    `silo-async serve --env E --task T`. The episode ends at `submit`, at a limit or when the
    client disconnects, and its report goes to stderr.
    """
    if protocol != "mcp":
        if ctx.get_parameter_source("transport") is click.core.ParameterSource.COMMANDLINE and (
            transport != "http"
        ):
            raise click.UsageError(f"--protocol {protocol} serves over HTTP only.", ctx)
        transport = "http"
    elif task_id is None:
        raise click.UsageError("Missing option '--task' (required with --protocol mcp).", ctx)
    _only_for_http(ctx, transport)
    faults = read_faults(faults_spec, fault_seed)
    module = _import_serve()
    _check_allowed(allow_hosts, allow_origins)
    cwd = Path.cwd()

    # Anything printed while the environment loads must not reach stdout, the MCP wire of stdio.
    with contextlib.redirect_stdout(sys.stderr):
        store = environment_store(env_name)
        # A broken task file blocks only its own task (named on stderr, left out).
        wanted = set() if task_id is None else {task_id}
        environment, runs_dir = load_for_tasks(store, wanted), store.project.runs_dir
    report = _reporter(as_json, cwd)
    options: dict[str, Any] = {
        "limits": Limits(max_tool_calls, timeout_ms / 1000, token_limit),
        "runs_dir": runs_dir,
        "reveal": (lambda result: run_text(result, cwd)) if reveal_grade else None,
        "on_end": report,
    }
    if transport == "stdio":
        run_async(lambda: module.serve_stdio(environment, task_id, faults=faults, **options))
        return
    if ctx.meta.get(BACKEND_KEY) == "trio":
        raise click.UsageError("--transport http runs on asyncio (uvicorn); drop --backend trio.")
    stdout = sys.stdout
    options.update(read_timeout=read_timeout_ms / 1000, max_connections=max_connections)
    if protocol != "openenv":  # a closed OpenEnv session leaves nothing to remember
        options.update(keep_finished=keep_finished)
    if protocol != "mcp":
        http = {"allow_hosts": allow_hosts, "allow_origins": allow_origins}
        options.update(http, max_episodes=max_episodes, faults=faults)
        _serve_harness(protocol, environment, task_id, host, port, token, options, as_json)
        return

    def announce(info: dict[str, Any]) -> None:
        if as_json:
            line = json.dumps(info, ensure_ascii=False)
        else:
            line = (
                f'Serving "{environment.name}" at {info["url"]} — MCP: {info["episodes"][0]["url"]}'
            )
        click.echo(line, file=stdout)

    # stdout carries the startup line only: what tools print goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        run_async(
            lambda: module.serve_http(
                environment,
                task_id,
                host=host,
                port=port,
                token=token,
                allow_origins=allow_origins,
                allow_hosts=allow_hosts,
                max_episodes=max_episodes,
                on_ready=announce,
                faults=faults,
                **options,
            )
        )
