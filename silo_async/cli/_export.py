"""``silo-async runs export``: recorded rollouts as training data, one JSON line each."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..export import FORMATS, EvalNotFoundError, ExportStats, RunNotFoundError, export_runs
from ..export._source import SKIP_DAMAGED, SKIP_INCOMPLETE, SKIP_TRACE_CUT, resolve_runs
from ._common import project_root
from ._errors import fail
from ._report import plural, relative
from ._runs import MIN_PARTIAL_ID, _eval_ids, _partial_matches
from ._types import Number

__all__ = ["export_command"]

_WHY = {
    SKIP_INCOMPLETE: "stopped before its result was written",
    SKIP_TRACE_CUT: "with a trace cut short",
    SKIP_DAMAGED: "with a damaged file",
}


def _resolve(run_id: str, root: Path) -> Path:
    """The run directory of ``run_id``, or of the one run whose id starts or ends with it."""
    try:
        return Path(resolve_runs([run_id], root)[0])
    except RunNotFoundError as exc:
        matches = _partial_matches(run_id, root) if len(run_id) >= MIN_PARTIAL_ID else []
        if len(matches) == 1:
            return matches[0]
        if matches:
            fail("run_ambiguous", f'Run "{run_id}" is ambiguous: {len(matches)} runs match.')
        fail("run_not_found", str(exc))


def _skipped_note(stats: ExportStats) -> str:
    parts = [f"{n} {_WHY.get(reason, reason)}" for reason, n in sorted(stats.skipped.items())]
    return (
        f"note: skipped {plural(stats.skipped_total, 'rollout')} that cannot be rebuilt "
        f"({', '.join(parts)})."
    )


@click.command("export", short_help="Write recorded rollouts as training data (JSON lines).")
@click.argument("run_ids", nargs=-1, metavar="[RUN_ID]...")
@click.option(
    "--eval", "eval_id", default=None, metavar="EVAL_ID", help="The rollouts of this eval."
)
@click.option("--env", "env_name", default=None, metavar="NAME", help="Only this environment.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="chat",
    show_default=True,
    help="Line format: chat (OpenAI chat messages and tools) or atif (an ATIF v1.7 "
    "trajectory, silo's grade in its extra).",
)
@click.option("--passed-only", is_flag=True, help="Only rollouts that passed.")
@click.option(
    "--min-reward",
    type=Number(0.0, 1.0),
    default=None,
    metavar="R",
    help="Only rollouts with at least this reward (0 to 1).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Write to FILE (whole or not at all) instead of stdout.",
)
def export_command(
    run_ids: tuple[str, ...],
    eval_id: str | None,
    env_name: str | None,
    fmt: str,
    passed_only: bool,
    min_reward: float | None,
    out: Path | None,
) -> None:
    """Write one JSON line per recorded rollout: tools, chat messages, output and reward.

    The rollouts of RUN_IDs (in that order; any unique start or end of an id), of an eval
    with --eval (in plan order), or else of .silo/runs/ (oldest first). Each line has runId,
    environment, task, tools (OpenAI function format), messages (OpenAI chat messages rebuilt
    from the trace), output, reward, passed, terminationReason and usage; with --format atif,
    one ATIF v1.7 trajectory (steps, token ids when recorded, final_metrics, silo's grade in
    extra). Rollouts that cannot
    be rebuilt (a run killed mid-way) are skipped and counted on stderr.
    """
    if run_ids and eval_id is not None:
        raise click.UsageError("Pass RUN_IDs or --eval, not both.")
    if out is not None and not out.parent.is_dir():
        raise click.BadParameter(f"directory {out.parent} does not exist.", param_hint="'--out'")
    root = project_root()
    dirs = [str(_resolve(run_id, root)) for run_id in run_ids]
    try:
        stats = export_runs(
            dirs or None,
            out=sys.stdout if out is None else out,
            eval_id=eval_id,
            env=env_name,
            format=fmt,
            passed_only=passed_only,
            min_reward=min_reward,
            cwd=root,
        )
    except EvalNotFoundError:
        evals = _eval_ids(root)
        hint = f" The latest is {evals[-1]}." if evals else " No eval has been run here yet."
        where = relative(root / ".silo" / "evals")
        fail("eval_not_found", f'Eval "{eval_id}" was not found in {where}.{hint}')
    if stats.skipped_total:
        click.echo(_skipped_note(stats), err=True)
    if out is not None:
        left = f" ({stats.filtered} filtered out)" if stats.filtered else ""
        click.echo(f"Exported {plural(stats.written, 'rollout')} to {relative(out)}{left}.")
