"""``silo-async run``: roll out one task with an agent, once or N times concurrently."""

from __future__ import annotations

from pathlib import Path

import click

from .._limits import Limits
from .._many import run_many
from .._options import RunOptions
from .._result import RunResult
from .._runner import run as run_one
from ..agents._load import DEFAULT_AGENT_FILE, load_agent
from ._common import (
    check_agent_specs,
    echo_json,
    env_option,
    environment_store,
    json_option,
    limit_options,
    load_for_tasks,
    otel_option,
    policy_version_option,
    run_async,
)
from ._errors import fail
from ._faults import fault_options, read_faults
from ._interrupt import EXIT_INTERRUPTED, Interrupts
from ._models import (
    check_model_flags,
    model_agents,
    model_options,
    note_unused_user_model,
    user_factory,
    user_options,
)
from ._report import agent_crash, many_json, many_text, relative, run_json, run_text
from ._types import WholeNumber

__all__ = ["run"]

#: ``--concurrency`` default is ``min(--runs, MAX_DEFAULT_CONCURRENCY)``.
MAX_DEFAULT_CONCURRENCY = 16


@click.command("run", short_help="Run a task with an agent and grade it.")
@env_option
@click.option("--task", "task_id", required=True, metavar="ID", help="The task to run.")
@click.option(
    "--agent",
    "agent_spec",
    default=None,
    metavar="PATH[:NAME]|MODULE:NAME",
    callback=check_agent_specs,
    help=f"The agent: a .py file (its `agent`), PATH:name or module:name "
    f"(default: ./{DEFAULT_AGENT_FILE}).",
)
@click.option(
    "--runs", type=WholeNumber(min=1), default=1, show_default=True, help="Rollouts to run."
)
@click.option(
    "--concurrency",
    type=WholeNumber(min=1),
    default=None,
    help=f"Rollouts at once (default: min(runs, {MAX_DEFAULT_CONCURRENCY})).",
)
@model_options(repeatable=False)
@user_options
@limit_options
@fault_options
@policy_version_option
@click.option(
    "--traceback",
    "show_traceback",
    is_flag=True,
    help="Print the traceback of an agent that raised (also: silo-async runs show RUN_ID).",
)
@otel_option
@json_option
@click.pass_context
def run(
    ctx: click.Context,
    env_name: str,
    task_id: str,
    agent_spec: str | None,
    model_spec: str | None,
    base_url: str | None,
    max_turns: int | None,
    user_model: str | None,
    user_base_url: str | None,
    runs: int,
    concurrency: int | None,
    max_tool_calls: int,
    timeout_ms: int,
    token_limit: int | None,
    faults_spec: str | None,
    fault_seed: int | None,
    policy_version: str | None,
    show_traceback: bool,
    as_json: bool,
) -> None:
    """Run a task with an agent, grade it and save the run under .silo/runs/.

    The agent is --agent (a Python file or module) or --model PROVIDER/MODEL (a model agent
    of silo_async.agents). A task with a user is played by its script, or by --user-model.
    With --faults SPEC the tool calls meet faults drawn from --fault-seed (see
    docs/faults.md, "Faults and robustness").
    """
    if agent_spec is not None and model_spec is not None:
        raise click.UsageError("use --agent or --model, not both.")
    check_model_flags([model_spec] if model_spec else [], base_url, max_turns, user_model)
    user = user_factory(user_model, user_base_url, base_url)
    faults = read_faults(faults_spec, fault_seed)
    cwd = Path.cwd()
    store = environment_store(env_name)
    environment = load_for_tasks(store, [task_id])
    # Fail on an unknown task or verifier before importing the agent (which may be slow).
    environment.verifier_for(environment.task(task_id))
    note_unused_user_model(user_model, [environment.task(task_id)])
    runs_dir = store.project.runs_dir
    if model_spec is not None:
        ((label, fn),) = model_agents([model_spec], base_url, max_turns).items()
    else:
        loaded = load_agent(agent_spec, cwd)
        label, fn = loaded.label, loaded.fn
    how = RunOptions(
        limits=Limits(max_tool_calls, timeout_ms / 1000, token_limit),
        faults=faults,
        user=user,
        policy_version=policy_version,
    )

    async def execute() -> list[RunResult]:
        if runs == 1:
            one = await run_one(
                environment, task_id, fn, runs_dir=runs_dir, agent_name=label, options=how
            )
            return [one]
        return await run_many(
            environment,
            [task_id],
            fn,
            runs=runs,
            concurrency=concurrency or min(runs, MAX_DEFAULT_CONCURRENCY),
            runs_dir=runs_dir,
            agent_name=label,
            options=how,
        )

    saved = f"the runs that finished are saved in {relative(runs_dir)} (silo-async runs list)"
    interrupts = Interrupts(
        "Stopping: the runs in flight are being graded and saved.",
        lambda: f"error: cancelled: stopped at once; {saved}.",
    )
    with interrupts:
        finished = run_async(lambda: interrupts.run(execute))
    if finished is None:
        fail("cancelled", f"interrupted (Ctrl-C); {saved}.", EXIT_INTERRUPTED)
    results = finished
    # The root's --traceback (silo-async --traceback run ...) asks for the same.
    traceback = show_traceback or bool(ctx.find_root().params.get("show_traceback"))
    if runs == 1:
        if as_json:
            echo_json(run_json(results[0], cwd))
        else:
            click.echo(run_text(results[0], cwd, traceback=traceback))
    elif as_json:
        echo_json(many_json(results, cwd))
    else:
        click.echo(many_text(results, cwd))
        if traceback:
            _echo_tracebacks(results)
    if not all(r.passed for r in results):
        ctx.exit(1)


def _echo_tracebacks(results: list[RunResult]) -> None:
    """After the ``--runs N`` summary: the traceback of every rollout whose agent raised."""
    for index, result in enumerate(results, start=1):
        crash = agent_crash(result) if result.termination_reason == "agent_error" else None
        if crash is not None:
            click.echo(f"\nrun {index} raised:\n{str(crash.get('traceback', '')).rstrip()}")
