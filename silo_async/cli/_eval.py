"""``silo-async eval``: many agents × tasks × runs in one event loop, with a report.

The eval directory defaults to ``.silo/evals/<eval_id>/`` and holds every rollout's run
directory under ``runs/`` (so deleting an eval deletes its runs), ``runs/index.jsonl``,
``summary.json``, ``summary.md`` and ``report.html``.

Progress (rich, when installed) is drawn on stderr only when stderr is a terminal and ``--json``
is not given, at most four times a second, from counters the eval updates per rollout. Ctrl-C
cancels the eval: rollouts that finished are kept, the summary of what finished is written, and
the command exits 130. ``--resume EVAL_DIR`` continues a killed or cancelled eval from its
``eval.json`` (:mod:`._eval_resume`).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import click

from .._environment import Environment
from .._limits import Limits
from .._options import RunOptions
from .._runner import Agent
from ..agents._load import DEFAULT_AGENT_FILE, AgentLoadError, load_agent
from ..eval import EvalProgress, EvalSummary, evaluate, new_eval_id, read_summary
from ..eval._evalfile import MAX_ROLLOUTS
from ..eval._evaluate import family_instances
from ..eval._loaded import load_summary
from ..eval._report._prices import Prices, PricesError, read_prices
from ..runs import EvalDir, KnownEvals
from ._common import (
    check_agent_specs,
    echo_json,
    environment_store,
    json_option,
    limit_options,
    load_for_tasks,
    otel_option,
    policy_version_option,
    run_async,
)
from ._errors import fail
from ._eval_resume import given
from ._eval_resume import prepare as prepare_resume_flags
from ._eval_text import rel as _rel
from ._eval_text import summary_text
from ._executor import build_executor, executor_options
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
from ._types import Number, TaskList, WholeNumber

__all__ = ["eval_command", "label_agents", "summary_text"]

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
#: Redraws per second of the progress bar (never per rollout).
REFRESH_HZ = 4


def _split_label(spec: str) -> tuple[str | None, str]:
    label, sep, rest = spec.partition("=")
    if sep and _LABEL.match(label) and rest:
        return label, rest
    return None, spec


def _default_label(spec: str) -> str:
    head, sep, tail = spec.rpartition(":")
    target, attribute = (head, tail) if sep and head and tail.isidentifier() else (spec, "agent")
    stem = Path(target).stem if target.endswith(".py") else target
    return stem if attribute == "agent" else f"{stem}:{attribute}"


def label_agents(specs: Sequence[str], cwd: Path) -> dict[str, Agent]:
    """Load ``--agent`` values (``PATH``, ``PATH:name``, ``module:name`` or ``label=SPEC``).

    Labels default to the file name stem (``agents/good.py`` -> ``good``).

    Raises:
        AgentLoadError: an agent cannot be loaded.
        AgentLoadError: two agents get the same label.
    """
    agents: dict[str, Agent] = {}
    wanted: list[str | None] = [*specs] if specs else [None]
    for spec in wanted:
        if spec is None:
            label = Path(DEFAULT_AGENT_FILE).stem
            loaded = load_agent(None, cwd)
        else:
            given, target = _split_label(spec)
            loaded = load_agent(target, cwd)
            label = given or _default_label(target)
        if label in agents:
            raise AgentLoadError(
                f'Two agents are labelled "{label}"; name them with --agent LABEL=PATH.'
            )
        agents[label] = loaded.fn
    return agents


def _all_agents(
    agent_specs: Sequence[str],
    model_specs: Sequence[str],
    base_url: str | None,
    max_turns: int | None,
    cwd: Path,
) -> dict[str, Agent]:
    """``--agent`` agents then ``--model`` agents; ./silo_agent.py only when neither is given."""
    agents = label_agents(agent_specs, cwd) if agent_specs or not model_specs else {}
    return model_agents(model_specs, base_url, max_turns, agents)


def _plan_tasks(environment: Environment, values: dict[str, Any]) -> list[str]:
    """The task ids the flags name: hand-written tasks first, then each family's instances.

    ``--task``/``--tasks`` name tasks, ``--family`` (with ``--count``, ``--split``,
    ``--start``) instances. With ``--family`` alone, only instances; with neither, every
    hand-written task.
    """
    task_list = values["task_list"]
    all_tasks = task_list == ["all"]
    tasks = values["tasks"] if all_tasks or not task_list else tuple(task_list)
    families = values["families"]
    listed = (
        _select_tasks(environment, tasks, all_tasks) if all_tasks or tasks or not families else []
    )
    counts = dict.fromkeys(families, values["count"])
    try:
        found = family_instances(environment, counts, values["split"], values["start_seed"], listed)
    except ValueError as exc:  # pragma: no cover - the flags' types refuse these first
        raise click.UsageError(str(exc)) from None
    return [*listed, *found]


def _select_tasks(environment: Environment, tasks: Sequence[str], all_tasks: bool) -> list[str]:
    if all_tasks or not tasks:
        if not environment.tasks:
            fail(
                "task_not_found",
                f'Environment "{environment.name}" has no tasks to evaluate; add one with '
                '"silo-async task add".',
            )
        return [t.id for t in environment.tasks]
    for task_id in tasks:
        environment.verifier_for(environment.task(task_id))
    return list(dict.fromkeys(tasks))


class _Display:
    """A throttled rich progress bar on stderr (no-op when not wanted or rich is missing)."""

    def __init__(self, enabled: bool, total: int, console: Any = None) -> None:
        self.latest: EvalProgress | None = None
        self.draws = 0
        self.progress: Any = None
        self.task: Any = None
        if not enabled:
            return
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )
        except ImportError:  # rich is an optional extra: no bar, same results
            return
        self.progress = Progress(
            TextColumn("eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            auto_refresh=False,
            transient=True,
        )
        self.task = self.progress.add_task("eval", total=total, info="")

    def record(self, progress: EvalProgress) -> None:
        self.latest = progress  # per rollout: just keep the snapshot

    def draw(self) -> None:
        p = self.latest
        if self.progress is None:
            return
        self.draws += 1
        if p is not None:
            info = f"kept {p.kept} · " if p.kept else ""
            info += f"pass {p.passes} · faults {p.faults} · ended early {p.ended_early}"
            info += f" · {p.rate:,.0f}/s"
            self.progress.update(self.task, completed=p.done, info=info)
        self.progress.refresh()

    async def run(self) -> None:
        if self.progress is None:
            return
        with self.progress:
            try:
                while True:
                    self.draw()
                    await anyio.sleep(1 / REFRESH_HZ)
            finally:
                self.draw()  # the final count, also when the eval ends between two ticks


async def _run_eval(
    start: Callable[[Callable[[EvalProgress], None]], Any],
    display: _Display,
    interrupts: Interrupts | None = None,
) -> EvalSummary | None:
    """Run the eval with the display and Ctrl-C handling; None when it was cancelled."""

    async def work() -> EvalSummary:
        async with anyio.create_task_group() as tg:
            tg.start_soon(display.run)
            summary: EvalSummary = await start(display.record)
            tg.cancel_scope.cancel()
        return summary

    return await interrupts.run(work) if interrupts is not None else await work()


def _stopped_at_once(target: Path, cwd: Path) -> str:
    """What a second Ctrl-C leaves: the summary on disk, or where the finished runs are."""
    try:
        data = read_summary(target)
    except (OSError, ValueError):
        evals = cwd / ".silo" / "evals"
        listed = f" (silo-async runs list --eval {target.name})" if target.parent == evals else ""
        return (
            "error: cancelled: stopped at once, before the summary was written; the runs that "
            f"finished are in {_rel(target, cwd)}/runs{listed}."
        )
    return (
        f"eval stopped at once: {data['finished']}/{data['planned']} rollouts finished; "
        f"summary of those in {_rel(target, cwd)}/summary.json"
    )


@click.command("eval", short_help="Evaluate agents on tasks, many runs each, with a report.")
@click.option(
    "--env",
    "env_name",
    default=None,
    metavar="NAME",
    help="Environment name (required, except with --resume).",
)
@click.option("--task", "tasks", multiple=True, metavar="ID", help="A task (repeatable).")
@click.option(
    "--tasks",
    "task_list",
    type=TaskList(),
    default=None,
    metavar="all|ID,ID...",
    help="Every task (all, the default) or the tasks named, separated by commas.",
)
@click.option(
    "--family",
    "families",
    multiple=True,
    metavar="ID",
    help="A task family (repeatable): play its first --count distinct instances of --split "
    "from seed --start. Only instances, unless --task/--tasks name tasks too.",
)
@click.option(
    "--count",
    type=WholeNumber(min=1),
    default=10,
    show_default=True,
    help="Instances per --family.",
)
@click.option(
    "--split",
    type=click.Choice(["train", "test"]),
    default="test",
    show_default=True,
    help="The split --family takes instances from.",
)
@click.option(
    "--start",
    "start_seed",
    type=WholeNumber(min=0),
    default=0,
    show_default=True,
    help="The seed --family's scan starts from.",
)
@click.option(
    "--agent",
    "agent_specs",
    multiple=True,
    metavar="[LABEL=]SPEC",
    callback=check_agent_specs,
    help="An agent (repeatable): PATH.py, PATH.py:name or module:name, optionally LABEL=... "
    f"(default: ./{DEFAULT_AGENT_FILE}). Labels default to the "
    "file name stem.",
)
@model_options(repeatable=True)
@user_options
@click.option(
    "--runs",
    type=WholeNumber(min=1),
    default=1,
    show_default=True,
    help="Rollouts per task and agent.",
)
@click.option(
    "--concurrency",
    type=WholeNumber(min=1),
    default=64,
    show_default=True,
    help="Rollouts in flight at once, over all agents and tasks.",
)
@limit_options
@fault_options
@policy_version_option
@click.option(
    "--baseline",
    is_flag=True,
    help="With --faults: run the same plan without faults too, and show each agent's pass "
    "rate without and with them, the drop, and how often it recovered from a fault.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Eval directory (default: .silo/evals/<eval_id>/).",
)
@click.option(
    "--fail-under",
    type=Number(0.0, 1.0),
    default=None,
    metavar="RATE",
    help="Exit 1 when an agent's pass rate is below RATE (0 to 1); the summary is written first.",
)
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help='Token prices per million tokens by model, JSON: {"MODEL": {"input": 0.4, '
    '"output": 1.6}} ("*" for any other model); adds cost to every summary.',
)
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="EVAL_DIR",
    help="Continue the eval in EVAL_DIR (killed, or stopped with Ctrl-C) from its eval.json: "
    "finished rollouts are kept, the others run, the summary is written. Plan flags may only "
    "repeat the plan's values; --concurrency and the executor flags may change.",
)
@executor_options
@otel_option
@json_option
@click.pass_context
def eval_command(
    ctx: click.Context,
    env_name: str | None,
    tasks: tuple[str, ...],
    task_list: list[str] | None,
    families: tuple[str, ...],
    count: int,
    split: str,
    start_seed: int,
    agent_specs: tuple[str, ...],
    model_specs: tuple[str, ...],
    base_url: str | None,
    max_turns: int | None,
    user_model: str | None,
    user_base_url: str | None,
    runs: int,
    concurrency: int,
    max_tool_calls: int,
    timeout_ms: int,
    token_limit: int | None,
    faults_spec: str | None,
    fault_seed: int | None,
    policy_version: str | None,
    baseline: bool,
    out_dir: Path | None,
    fail_under: float | None,
    prices_file: Path | None,
    executor: str,
    ray_address: str | None,
    workers: int | None,
    worker_concurrency: int | None,
    resume_dir: Path | None,
    as_json: bool,
) -> None:
    """Evaluate one or more agents on an environment's tasks and write a report.

    All rollouts (tasks × agents × runs) share one event loop and one --concurrency limit.
    Writes .silo/evals/<eval_id>/ (or --out): summary.json, summary.md, report.html and
    runs/ (index.jsonl plus every rollout's run directory). Ctrl-C stops cleanly: finished
    rollouts are kept and summarised, and the command exits 130. With --fail-under RATE it
    exits 1 when an agent's pass rate is below RATE (after writing everything).
    With --executor ray the rollouts run on a pool of Ray workers (all cores of this machine,
    or the cluster --ray-address names), with the same results and files. With --faults SPEC
    the tool calls meet seeded faults; --baseline runs the plan without them too, to compare.
    With --resume EVAL_DIR an eval that was killed or stopped continues where it was: its
    finished rollouts are kept and the rest run, with the same results as if it never stopped.
    """
    if tasks and task_list:
        raise click.UsageError(
            "use --task ID (repeatable) or --tasks all|ID,ID..., not both (they say the same)."
        )
    for flag, name in (("count", "count"), ("split", "split"), ("start", "start_seed")):
        if not families and given(ctx, name):
            raise click.UsageError(f"--{flag} applies to --family: name a task family too.")
    cwd = Path.cwd()
    if resume_dir is not None:
        _resume(ctx, resume_dir, cwd)
        return
    if env_name is None:
        raise click.UsageError("Missing option '--env' (it may be left out only with --resume).")
    check_model_flags(model_specs, base_url, max_turns, user_model)
    user = user_factory(user_model, user_base_url, base_url)
    faults = read_faults(faults_spec, fault_seed)
    if baseline and faults is None:
        raise click.UsageError("--baseline compares runs with and without faults: add --faults.")
    runner = build_executor(executor, ray_address, workers, worker_concurrency)
    prices = _prices(prices_file)
    store = environment_store(env_name)
    all_tasks = task_list == ["all"]
    named = tuple(task_list) if task_list and not all_tasks else tasks
    # Broken task files block only what is wanted: --family alone wants no hand-written task.
    wanted = None if all_tasks or not named else set(named)
    if families and wanted is None and not all_tasks:
        wanted = set()
    environment, project_dir = load_for_tasks(store, wanted), store.project.cwd
    task_ids = _plan_tasks(environment, ctx.params)
    note_unused_user_model(user_model, [environment.task(t) for t in task_ids])
    agents = _all_agents(agent_specs, model_specs, base_url, max_turns, cwd)
    total = len(task_ids) * len(agents) * runs * (2 if baseline else 1)
    if total > MAX_ROLLOUTS:
        raise click.UsageError(
            f"--runs {runs} makes {total:,} rollouts; an eval runs at most {MAX_ROLLOUTS:,}."
        )
    eval_id = new_eval_id()
    target = out_dir if out_dir is not None else project_dir / ".silo" / "evals" / eval_id
    # A lock file alone is what an eval killed before its plan was written leaves: empty.
    if target.exists() and not EvalDir(target).holds_nothing():
        if target.is_dir():
            EvalDir(target).check_unlocked()  # an eval still writing it: say which
        fail("out_dir_not_empty", f'Eval directory "{target}" already exists and is not empty.')
    if out_dir is not None:  # found again by id (evals list, report, runs show) from here
        KnownEvals(project_dir).remember(target)

    def start(on_progress: Callable[[EvalProgress], None]) -> Any:
        return evaluate(
            environment,
            task_ids,
            agents,
            runs=runs,
            concurrency=concurrency,
            out_dir=target,
            eval_id=eval_id,
            on_progress=on_progress,
            prices=prices,
            executor=runner,
            baseline=baseline,
            options=RunOptions(
                limits=Limits(max_tool_calls, timeout_ms / 1000, token_limit),
                faults=faults,
                user=user,
                policy_version=policy_version,
            ),
        )

    _execute(ctx, start, target, cwd, total)


def _resume(ctx: click.Context, eval_dir: Path, cwd: Path) -> None:
    """``eval --resume EVAL_DIR``: the plan's eval, continued (``silo.resume``, step by step)."""
    values = ctx.params
    user = user_factory(values["user_model"], values["user_base_url"], values["base_url"])
    resumption = prepare_resume_flags(
        ctx,
        eval_dir,
        lambda: _all_agents(
            values["agent_specs"],
            values["model_specs"],
            values["base_url"],
            values["max_turns"],
            cwd,
        ),
        user,
        _plan_tasks,
        _prices,
    )
    plan = resumption.plan
    told = False

    def start(on_progress: Callable[[EvalProgress], None]) -> Any:
        def progress(p: EvalProgress) -> None:
            nonlocal told
            if not told:  # the first snapshot, before anything runs: what the resume kept
                told = True
                click.echo(
                    f"Resuming eval {plan.eval_id} in {_rel(eval_dir, cwd)}: {p.kept} of "
                    f"{p.total} rollouts kept, {p.left} to run.",
                    err=True,
                )
            on_progress(p)

        return resumption.run(progress)

    _execute(ctx, start, eval_dir, cwd, plan.rollouts)


def _execute(
    ctx: click.Context,
    start: Callable[[Callable[[EvalProgress], None]], Any],
    target: Path,
    cwd: Path,
    total: int,
) -> None:
    """Run the eval ``start`` begins (progress, Ctrl-C), then print and check its summary."""
    as_json, fail_under = ctx.params["as_json"], ctx.params["fail_under"]
    display = _Display(not as_json and sys.stderr.isatty(), total)
    interrupts = Interrupts(
        "Stopping: the rollouts in flight are being graded and the summary of what finished "
        "written.",
        lambda: _stopped_at_once(target, cwd),
    )
    # stdout carries the eval's result only: while it runs, what is printed there (an agent's
    # prints; the lines Ray's driver prints to stdout, "a worker died...") goes to stderr.
    with interrupts, contextlib.redirect_stdout(sys.stderr):
        summary = run_async(lambda: _run_eval(start, display, interrupts))
    if summary is None:
        _report_cancelled(target, cwd, as_json)
        ctx.exit(EXIT_INTERRUPTED)
    resumed = summary.resumed
    if resumed is not None and resumed.finished:
        _nothing_to_resume(summary, target, cwd, as_json)
        return
    below = [] if fail_under is None else summary.below(fail_under)
    if as_json:
        extra = {} if fail_under is None else {"failUnder": {"rate": fail_under, "below": below}}
        if resumed is not None:
            extra["resumed"] = resumed.to_dict()
        echo_json({**summary.to_dict(), "outDir": str(target), **extra})
    else:
        if resumed is not None:
            click.echo(
                f"Resumed eval {summary.eval_id}: {resumed.kept} rollouts kept, "
                f"{resumed.rerun} run now."
            )
        click.echo(summary_text(summary, cwd))
    if below:
        _fail_under(summary, below, fail_under or 0.0, _rel(target, cwd))


def _nothing_to_resume(summary: EvalSummary, target: Path, cwd: Path, as_json: bool) -> None:
    message = (
        f"Nothing to resume: eval {summary.eval_id} in {_rel(target, cwd)} finished, "
        f"{summary.finished} of {summary.planned} rollouts; its summary is "
        f"{_rel(target, cwd)}/summary.json."
    )
    if as_json:
        resumed = summary.resumed.to_dict() if summary.resumed is not None else {}
        echo_json({**read_summary(target), "outDir": str(target), "resumed": resumed})
        click.echo(message, err=True)
    else:
        click.echo(message)


def _prices(path: Path | None) -> Prices | None:
    if path is None:
        return None
    try:
        return read_prices(path)
    except PricesError as exc:
        fail("prices_invalid", f"{exc} Fix the file, or leave out --prices.")


def _fail_under(summary: EvalSummary, below: list[str], rate: float, out: str) -> None:
    shown = ", ".join(
        f"{a} no valid rollout ({s.invalid} invalid)"
        if s.pass_rate is None
        else f"{a} {s.pass_rate:.2f} ({s.passes}/{s.valid})"
        for a in below
        for s in [summary.comparison.overall[a]]
    )
    fail(
        "fail_under",
        f"pass rate below --fail-under {rate:g}: {shown}; the summary is in {out}/summary.json.",
    )


def _report_cancelled(target: Path, cwd: Path, as_json: bool) -> None:
    """What a Ctrl-C'd eval leaves: the tables of what finished (stdout), where they are."""
    try:
        data = read_summary(target)
    except (OSError, ValueError):
        click.echo("error: cancelled: the eval stopped before its summary was written.", err=True)
        return
    shown = False
    if as_json:
        echo_json({**data, "outDir": str(target)})
    else:
        with contextlib.suppress(OSError, ValueError, KeyError):  # the table, if it can be read
            click.echo(summary_text(load_summary(target), cwd))
            shown = True
    click.echo(
        f"eval cancelled: {data['finished']}/{data['planned']} rollouts finished; "
        f"summary of those in {_rel(target, cwd)}/summary.json",
        err=True,
    )
    if data.get("note") and not shown:  # the table above says it already
        click.echo(data["note"], err=True)
