"""``silo-async runs list|show`` and ``silo-async replay``: recorded runs, read back and re-run.

Runs are found by id in ``.silo/runs/`` and then in every eval's ``.silo/evals/*/runs/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..eval import list_runs, load_run, replay
from ..eval._runs import RecordedRun, RunNotFoundError, find_run, trace_lines
from ._common import echo_json, json_option, run_async
from ._eval import fail
from ._report import run_json, run_text

__all__ = ["replay_command", "runs"]


def _load(run_id: str, cwd: Path) -> RecordedRun:
    try:
        return load_run(find_run(run_id, cwd))
    except RunNotFoundError as exc:
        fail(str(exc))


@click.group("runs", short_help="List and show recorded runs.")
def runs() -> None:
    """List and show recorded runs (.silo/runs/ and the runs of evals)."""


@runs.command("list", short_help="List recorded runs, oldest first.")
@click.option("--env", "env_name", default=None, metavar="NAME", help="Only this environment.")
@click.option(
    "--eval",
    "eval_id",
    default=None,
    metavar="EVAL_ID",
    help="List the runs of this eval instead of .silo/runs/.",
)
@json_option
def list_command(env_name: str | None, eval_id: str | None, as_json: bool) -> None:
    """List recorded runs (.silo/runs/, or an eval's runs with --eval)."""
    infos = list_runs(Path.cwd(), env=env_name, eval_id=eval_id)
    if as_json:
        echo_json([i.to_dict() for i in infos])
        return
    if not infos:
        click.echo("No runs recorded yet.")
        return
    for i in infos:
        verdict = "PASS" if i.passed else "FAIL"
        click.echo(
            f"{i.run_id}  {i.environment}  {i.task_id}  {i.agent}  {verdict}  "
            f"reward {i.reward:.2f}  {i.tool_calls} calls  {i.termination_reason}"
        )


def _calls_json(recorded: RecordedRun) -> list[dict[str, Any]]:
    out = []
    for c in recorded.calls():
        item: dict[str, Any] = {
            "callId": c.call_id,
            "tool": c.tool,
            "input": c.input,
            "output": c.output,
            "isError": c.is_error,
            "durationMs": c.duration_ms,
        }
        if c.fault:
            item["fault"] = {"type": c.fault.get("type"), "message": c.fault.get("message")}
        out.append(item)
    return out


@runs.command("show", short_help="Show a run: its report and its trace.")
@click.argument("run_id")
@json_option
def show_command(run_id: str, as_json: bool) -> None:
    """Show a recorded run: the report of `run`, then one line per tool call."""
    cwd = Path.cwd()
    recorded = _load(run_id, cwd)
    result = recorded.to_run_result()
    if as_json:
        echo_json({**run_json(result, cwd), "trace": _calls_json(recorded)})
        return
    click.echo(run_text(result, cwd))
    lines = trace_lines(recorded)
    click.echo("")
    click.echo(f"Trace ({len(lines)} tool calls)")
    for line in lines:
        click.echo(f"  {line}")


@click.command("replay", short_help="Re-run a recorded run's tool calls and re-grade it.")
@click.argument("run_id")
@json_option
@click.pass_context
def replay_command(ctx: click.Context, run_id: str, as_json: bool) -> None:
    """Replay RUN_ID's tool calls on a fresh world of its environment and re-grade it.

    No agent runs: the recorded calls are made again in order and the recorded answer is
    given. Exits 0 when every tool output, result.json and state-diff.json match the
    recording byte for byte, 1 (listing the differences) otherwise.
    """
    cwd = Path.cwd()
    recorded = _load(run_id, cwd)
    report = run_async(lambda: replay(recorded, cwd=cwd))
    if as_json:
        echo_json(report.to_dict())
    else:
        matching = sum(1 for c in report.calls if c.matches)
        click.echo(f"Replayed {report.run_id} ({report.environment}, {report.task_id})")
        click.echo(f"Tool calls   {matching}/{len(report.calls)} outputs match")
        click.echo(f"result.json  {'identical' if report.result_identical else 'DIFFERENT'}")
        click.echo(f"state-diff   {'identical' if report.diff_identical else 'DIFFERENT'}")
        if report.identical:
            click.echo("Identical to the recording.")
        else:
            click.echo("Differences:")
            for line in report.differences:
                click.echo(f"  {line}")
    if not report.identical:
        ctx.exit(1)
