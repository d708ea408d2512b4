"""``silo-async evals list`` and ``silo-async report EVAL``: finding an eval again.

Evals are those the project knows (:class:`~silo_async.runs.KnownEvals`): every directory of
``.silo/evals/`` and every ``eval --out`` directory written from the project. ``report``
prints an eval's tables as ``eval`` printed them, from its files, and where its report is.
"""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Any

import attrs
import click

from .._errors import SiloError
from ..eval import read_index, read_summary
from ..eval._evalfile import read_plan
from ..eval._loaded import load_summary
from ..runs import EvalDir, KnownEvals
from ._common import OrderedGroup, echo_json, echo_list, json_option, project_root
from ._errors import fail
from ._eval_text import summary_text
from ._report import aligned, relative

__all__ = ["evals", "report_command"]


@attrs.frozen
class EvalInfo:
    """One line of ``evals list``: an eval directory, read from its summary or its plan."""

    eval_id: str
    started_at: str
    environment: str
    agents: list[str]
    finished: int
    planned: int
    state: str
    path: Path

    def to_dict(self) -> dict[str, Any]:
        """JSON form (camelCase keys)."""
        return {
            "evalId": self.eval_id,
            "startedAt": self.started_at,
            "environment": self.environment,
            "agents": list(self.agents),
            "finished": self.finished,
            "planned": self.planned,
            "state": self.state,
            "path": str(self.path),
        }


def _from_summary(path: Path) -> EvalInfo:
    data = read_summary(path)
    return EvalInfo(
        eval_id=data["evalId"],
        started_at=data["startedAt"],
        environment=data["environment"],
        agents=list(data["config"]["agents"]),
        finished=int(data["finished"]),
        planned=int(data["planned"]),
        state="complete" if data["complete"] else "cancelled",
        path=path,
    )


def _running(path: Path) -> bool:
    """Another process holds the eval directory's lock: the eval is running."""
    try:
        EvalDir(path).check_unlocked()
    except SiloError as exc:
        return exc.code == "eval_locked"
    return False


def _from_plan(path: Path) -> EvalInfo:
    """An eval without a summary: running, or stopped before writing one."""
    plan = read_plan(path)
    try:
        finished = len(read_index(path))
    except (OSError, ValueError):
        finished = 0
    per_plan = len(plan.tasks) * len(plan.agents) * plan.runs
    return EvalInfo(
        eval_id=plan.eval_id,
        started_at=plan.created_at,
        environment=str(plan.environment.get("name")),
        agents=plan.labels,
        finished=finished,
        planned=per_plan * (2 if plan.baseline else 1),
        state="running" if _running(path) else "stopped",
        path=path,
    )


def eval_infos(root: Path) -> list[EvalInfo]:
    """Every eval the project at ``root`` knows, oldest first; unreadable ones are skipped."""
    infos = []
    for path in KnownEvals(root).dirs():
        summarised = Path(EvalDir(path).file(EvalDir.SUMMARY)).is_file()
        try:
            infos.append(_from_summary(path) if summarised else _from_plan(path))
        except Exception:  # a damaged eval, or one of a newer format: left out of a listing
            continue
    return sorted(infos, key=lambda i: (i.started_at, i.eval_id))


@click.group("evals", cls=OrderedGroup, short_help="List the evals of this project.")
def evals() -> None:
    """The evals of this project: .silo/evals/ and those written with eval --out from here."""


@evals.command("list", short_help="List evals, oldest first.")
@json_option
def list_command(as_json: bool) -> None:
    """List evals, oldest first: id, start, environment, agents, rollouts, state, directory.

    An eval is complete or cancelled (it wrote its summary), running, or stopped (killed before
    its summary: eval --resume DIR continues it).
    """
    root = project_root()
    infos = eval_infos(root)
    if as_json or not infos:
        echo_list(
            infos,
            as_json,
            line=str,
            empty="No evals yet: silo-async eval --env NAME --agent SPEC runs one.",
            to_json=EvalInfo.to_dict,
        )
        return
    rows = [["eval", "started", "env", "agents", "rollouts", "state", "directory"]]
    rows += [
        [
            i.eval_id,
            i.started_at,
            i.environment,
            ", ".join(i.agents),
            f"{i.finished}/{i.planned}",
            i.state,
            relative(i.path, root),
        ]
        for i in infos
    ]
    for line in aligned(rows):
        click.echo(line)


def _latest(root: Path) -> str:
    """The directory of the latest eval with a summary (started last), as ``report`` takes it."""
    done = [i for i in eval_infos(root) if i.state in ("complete", "cancelled")]
    if not done:
        fail(
            "eval_not_found",
            "No eval of this project has a summary yet: silo-async eval --env NAME --agent SPEC "
            "runs one (silo-async evals list lists them all).",
        )
    return str(done[-1].path)


def find_eval(name: str, root: Path) -> Path:
    """The eval directory ``name`` names: a directory holding eval.json, or a known eval's id."""
    as_path = Path(name)
    if Path(EvalDir(as_path).file(EvalDir.EVAL)).is_file():
        return as_path
    found = KnownEvals(root).find(name)
    if found is None:
        fail(
            "eval_not_found",
            f'Eval "{name}" was not found: no eval directory at that path, nor an eval of that '
            f"id in {relative(root / '.silo' / 'evals')} or written with --out from here "
            "(silo-async evals list lists them).",
        )
    return found


@click.command("report", short_help="Show an eval's summary again; --open its report.html.")
@click.argument("eval_name", metavar="[EVAL]", required=False)
@click.option("--open", "open_report", is_flag=True, help="Open report.html in a web browser.")
@json_option
def report_command(eval_name: str | None, open_report: bool, as_json: bool) -> None:
    """Print the summary of EVAL (an eval id or its directory) as eval printed it.

    Without EVAL, the latest eval that wrote a summary. The last lines say where its
    report.html and summary.json are; --open also opens the report in a web browser.
    """
    root = project_root()
    if eval_name is None:
        eval_name = _latest(root)
    path = find_eval(eval_name, root)
    shown = relative(path, root)
    try:
        summary = load_summary(path)
    except OSError:
        why = (
            "it is still running"
            if _running(path)
            else f"it stopped before writing one (silo-async eval --resume {shown} finishes it)"
        )
        fail("eval_not_found", f"Eval {eval_name} in {shown} has no summary yet: {why}.")
    except (ValueError, KeyError) as exc:
        fail("eval_not_found", f"Eval {eval_name} in {shown} cannot be read: {exc}.")
    report = path / EvalDir.REPORT
    if as_json:
        echo_json({**read_summary(path), "outDir": str(path), "report": str(report)})
    else:
        click.echo(summary_text(summary, root))
    if open_report and not webbrowser.open(report.absolute().as_uri()):
        click.echo(f"note: no web browser could be opened; open {report} yourself.", err=True)
