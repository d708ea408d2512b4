"""``silo-async runs list|show`` and ``silo-async replay``: recorded runs, read back and re-run.

Runs are found by id in ``.silo/runs/`` and then in every eval the project knows: those of
``.silo/evals/`` and those written with ``eval --out`` from it
(:class:`~silo_async.runs.KnownEvals`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .._errors import SiloError
from .._result import RunResult
from ..eval import list_runs, load_run, replay
from ..eval._recorded._runs import RecordedRun, RunNotFoundError, find_run, trace_lines
from ..runs import KnownEvals
from ._common import OrderedGroup, echo_json, json_option, project_root, run_async
from ._diff_text import diff_lines
from ._errors import fail
from ._report import aligned, plural, relative, run_json, run_text

__all__ = ["replay_command", "runs"]

T = TypeVar("T")

#: What reading a run directory raises when its files were edited by hand.
_UNREADABLE = (ValueError, KeyError, TypeError, AttributeError)


def _reading(run_id: str, run_dir: Path, read: Callable[[], T]) -> T:
    """``read()``, with a damaged run file reported as one error naming the run and the file."""
    try:
        return read()
    except RunNotFoundError as exc:  # a file of the run is missing
        fail("run_invalid", str(exc))
    except SiloError as exc:
        if exc.code == "run_format_unsupported":
            raise  # its own code and message: upgrade silo_async
        file, reason = exc.details.get("file"), exc.details.get("reason")
        why = f"{file} {reason}" if file and reason else exc.message
    except _UNREADABLE as exc:
        why = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
    fail(
        "run_invalid",
        f'Run "{run_id}" in {relative(run_dir)} cannot be read; its files are damaged or were '
        f"not written by silo-async ({why}).",
    )


#: Shortest part of a run id that ``runs show``/``replay`` try to complete.
MIN_PARTIAL_ID = 4


def _find(run_id: str) -> Path:
    """The run directory of ``run_id``, or of the one run whose id starts or ends with it."""
    root = project_root()
    try:
        return find_run(run_id, root)
    except RunNotFoundError as exc:
        matches = _partial_matches(run_id, root) if len(run_id) >= MIN_PARTIAL_ID else []
        if len(matches) == 1:
            return matches[0]
        if matches:
            shown = ", ".join(m.name for m in matches[:5]) + (", ..." if len(matches) > 5 else "")
            fail(
                "run_ambiguous",
                f'Run "{run_id}" is ambiguous: {len(matches)} runs match ({shown}).',
            )
        fail("run_not_found", str(exc))


def _partial_matches(part: str, root: Path) -> list[Path]:
    # Run ids end in random hex and start with a timestamp: either end identifies a run
    # without copying the whole id.
    dirs = [*(root / ".silo").glob("runs/run_*")]
    for eval_dir in KnownEvals(root).dirs():
        dirs += eval_dir.glob("runs/run_*")
    return sorted(
        (d for d in dirs if (d.name.startswith(part) or d.name.endswith(part))),
        key=lambda d: d.name,
    )


def _load(run_id: str, *, strict: bool) -> tuple[RecordedRun, RunResult]:
    """The recorded run and the result rebuilt from its files.

    ``strict``: a trace line that does not parse is an error (``run_invalid``) rather than
    skipped with a note on stderr.
    """
    run_dir = _find(run_id)
    recorded = _reading(run_id, run_dir, lambda: load_run(run_dir, strict=strict))
    for line in recorded.skipped_lines:
        click.echo(
            f"note: trace line {line} of {relative(run_dir)} cannot be read (cut short or "
            "damaged); it is left out.",
            err=True,
        )
    return recorded, _reading(run_id, run_dir, recorded.to_run_result)


def _eval_ids(root: Path) -> list[str]:
    """The evals of the project that recorded runs, oldest first (ids sort by time)."""
    evals = root / ".silo" / "evals"
    return sorted(p.parent.name for p in evals.glob("*/runs") if p.is_dir())


@click.group("runs", cls=OrderedGroup, short_help="List, show and export recorded runs.")
def runs() -> None:
    """List, show and export recorded runs (.silo/runs/ and the runs of evals)."""


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
    root = project_root()
    if eval_id is not None and KnownEvals(root).find(eval_id) is None:
        fail(
            "eval_not_found",
            f'Eval "{eval_id}" was not found in {relative(root / ".silo" / "evals")} nor among '
            "the evals written with --out from here (silo-async evals list).",
        )
    infos = list_runs(root, env=env_name, eval_id=eval_id)
    if as_json:
        echo_json([i.to_dict() for i in infos])
        return
    if not infos:
        where = f' of environment "{env_name}"' if env_name is not None else ""
        click.echo(f"No runs{where} recorded yet.")
        evals = _eval_ids(root) if eval_id is None else []
        if evals:
            # Eval rollouts live with their eval, not in .silo/runs/: say where to look.
            again = f"silo-async runs list --eval {evals[-1]}"
            again += f" --env {env_name}" if env_name is not None else ""
            click.echo(f"Evals keep their own runs; the latest: {again}")
        return
    rows = [
        [
            i.run_id,
            i.environment,
            i.task_id,
            i.agent,
            "PASS" if i.passed else "FAIL",
            f"reward {i.reward:.2f}",
            plural(i.tool_calls, "call"),
            i.termination_reason,
        ]
        for i in infos
    ]
    for line in aligned(rows):
        click.echo(line)


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
    """Show a recorded run: the report of `run`, what it changed, then one line per tool call.

    RUN_ID may be shortened to any unique start or end of the id (4 characters or more).
    """
    cwd = Path.cwd()
    recorded, result = _load(run_id, strict=False)
    calls = _reading(run_id, recorded.run_dir, lambda: _calls_json(recorded))
    lines = _reading(run_id, recorded.run_dir, lambda: trace_lines(recorded))
    if as_json:
        echo_json({**run_json(result, cwd), "stateDiff": recorded.state_diff, "trace": calls})
        return
    click.echo(run_text(result, cwd, saved=False, traceback=True))
    click.echo("")
    changes = _reading(run_id, recorded.run_dir, lambda: diff_lines(recorded.state_diff))
    click.echo("State diff" + ("" if changes else ": nothing changed"))
    for line in changes:
        click.echo(line)
    click.echo("")
    click.echo(f"Trace ({plural(len(lines), 'tool call')})")
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
    recording byte for byte, 1 (listing the differences) otherwise. RUN_ID may be shortened
    to any unique start or end of the id (4 characters or more).
    """
    recorded, _ = _load(run_id, strict=True)  # a replay needs every recorded call
    root = project_root()
    report = run_async(lambda: replay(recorded, cwd=root))
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
