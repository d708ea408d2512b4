"""evaluate(): tasks × agents × runs under one concurrency limit, on an executor.

The plan is fixed up front (task, then agent, then run). By default the local executor runs it in
this event loop: one task group, a fixed pool of ``concurrency`` workers pulling rollouts from the
plan, so the limit is exact and nothing waits as a parked coroutine. ``executor=`` hands the same
plan to another executor (``silo.RayExecutor``); the books (records, progress, files) are kept
here either way.

Every rollout is a plain :func:`silo_async.run` with ``runs_dir=<eval dir>/runs``, so an eval
directory is self-contained: its ``runs/`` holds every rollout's artifacts next to the index that
points at them. Per rollout, the eval keeps a small record and (for the report) compact details;
the event loop pays one small append to ``runs/index.jsonl`` per finished rollout and nothing
else: the progress callback is the caller's to keep cheap, and the summary files are written
once, at the end, off the loop.

An eval survives being killed (docs/resuming.md): ``eval.json`` (:mod:`._evalfile`) holds its plan
before the first rollout starts, the index grows as rollouts finish, and ``resume=EVAL_DIR``
continues it by the path of ``silo.resume`` (:mod:`._resuming`): finished rollouts kept, the
others run, the summary written. The run itself (books, directory, summary) is
:class:`._run.EvalRun`'s, for a new eval and a resumed one alike.

With ``faults=`` every rollout meets the fault plan (each draws its own faults from its task and
run number, so the executor and the concurrency change nothing); with ``baseline=True`` the plan
runs a second time without faults, and the summary sets each agent's two pass rates side by side
(:mod:`._robustness`). Both are part of the plan (``eval.json``), so a resume meets the same
faults.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread

from .._environment import Environment
from .._faults import Faults
from .._limits import DEFAULT_LIMITS, Limits
from .._many import check_counts, check_tasks
from .._options import RunOptions, resolve_options
from .._runner import Agent
from .._user import UserFactory
from ._books import EvalProgress
from ._evalfile import MAX_ROLLOUTS, OPTIONS, new_plan
from ._executor import Executor, LocalExecutor
from ._refs import user_ref
from ._report._prices import Prices
from ._report._summary import EvalSummary
from ._resuming import prepare_resume
from ._run import EvalRun

__all__ = ["EvalProgress", "evaluate", "new_eval_id"]

#: ``evaluate``'s defaults: a resume takes the plan's value for an argument left at its default.
DEFAULT_RUNS = 1
DEFAULT_CONCURRENCY = 64


def new_eval_id(now: float | None = None) -> str:
    """A fresh eval id, ``eval_<YYYYMMDDTHHMMSS>_<random hex>`` (sorts by start time)."""
    t = time.time() if now is None else now
    return f"eval_{time.strftime('%Y%m%dT%H%M%S', time.gmtime(t))}_{os.urandom(3).hex()}"


def _check_args(
    env: Environment,
    task_ids: list[str],
    agents: Mapping[str, Agent],
    runs: int,
    conc: int,
    baseline: bool = False,
) -> None:
    if not agents:
        raise ValueError("evaluate needs at least one agent.")
    for label, agent in agents.items():
        if not isinstance(label, str) or not label:
            raise ValueError(f"agent labels must be non-empty strings, got {label!r}.")
        if not callable(agent):
            raise ValueError(f'agent "{label}" is not callable.')
    check_counts(runs, conc)
    rollouts = len(task_ids) * len(agents) * runs * (2 if baseline else 1)
    if rollouts > MAX_ROLLOUTS:  # laid out in memory before the first one runs
        raise ValueError(
            f"{rollouts:,} rollouts ({len(task_ids)} tasks x {len(agents)} agents x {runs} "
            f"runs{' x 2 for the baseline' if baseline else ''}); an eval runs at most "
            f"{MAX_ROLLOUTS:,}."
        )
    if not task_ids:
        raise ValueError(f'environment "{env.name}" has no tasks to evaluate.')
    if len(set(task_ids)) != len(task_ids):
        raise ValueError("each task may be listed only once (use runs= for repetitions).")
    check_tasks(env, task_ids)


async def evaluate(
    env: Environment,
    tasks: Sequence[str] | str | None,
    agents: Mapping[str, Agent],
    *,
    runs: int = DEFAULT_RUNS,
    concurrency: int = DEFAULT_CONCURRENCY,
    max_tool_calls: int = DEFAULT_LIMITS.max_tool_calls,
    timeout: float | None = DEFAULT_LIMITS.timeout,
    token_limit: int | None = DEFAULT_LIMITS.token_limit,
    out_dir: str | Path | None = None,
    eval_id: str | None = None,
    on_progress: Callable[[EvalProgress], None] | None = None,
    report: bool = True,
    executor: Executor | None = None,
    prices: Prices | Mapping[str, Mapping[str, float]] | None = None,
    limits: Limits | None = None,
    resume: str | Path | None = None,
    user: UserFactory | None = None,
    faults: Faults | str | None = None,
    baseline: bool = False,
    families: Mapping[str, int] | None = None,
    split: str = "test",
    start: int = 0,
    options: RunOptions | None = None,
) -> EvalSummary:
    """Evaluate ``agents`` on ``tasks`` of ``env``, ``runs`` times each.

    Every rollout (tasks × agents × runs) is one :func:`silo_async.run` on a fresh world, at
    most ``concurrency`` at once (by default in this event loop: one task group, a fixed pool
    of workers; ``executor=silo.RayExecutor(...)`` runs them on Ray workers). When ``out_dir`` is
    given it becomes the eval directory: ``eval.json`` (the plan) is written first, rollouts
    write ``out_dir/runs/<run_id>/`` and a line of ``runs/index.jsonl`` each as they finish,
    and at the end ``summary.md``, (with ``report``) ``report.html`` and, last,
    ``summary.json`` are written.

    On cancellation (Ctrl-C, a cancelled scope) rollouts in flight write their own artifacts,
    the summary of the rollouts that finished is written (shielded, within ``WRITE_GRACE_S``),
    and the cancellation propagates.

    ``resume=EVAL_DIR`` continues an eval that was killed or cancelled (docs/resuming.md): its
    finished rollouts are kept, torn and cut-short ones removed and run again (a model
    agent's continuing from its recorded responses), the missing ones run, and the summary is
    written into ``EVAL_DIR``, which keeps its ``evalId``. The plan comes from its
    ``eval.json``: pass the same ``env`` and ``agents`` (same labels, same order); any other
    argument left at its default takes the plan's value, and one given with another value is
    refused (``resume_conflict``); ``concurrency``, ``executor``, ``report`` and
    ``on_progress`` may differ. Resuming an eval that finished runs and writes nothing
    (``summary.resumed.finished``). :func:`silo_async.resume` does the same from the
    directory alone.

    Args:
        env: the environment.
        tasks: task ids in the order to report them (a single id is accepted too; ``None``:
            every task of ``env``, in its order, unless ``families`` is given: then no
            hand-written task; with ``resume``: the plan's). Instance ids ``FAMILY#SEED``
            are task ids too.
        agents: ``{label: agent}``; labels name the agents in every output.
        runs: rollouts per task and agent (>= 1).
        concurrency: the most rollouts in flight at once (>= 1).
        max_tool_calls: per rollout, as for :func:`silo_async.run`.
        timeout: per rollout, in seconds (``None``: no limit).
        token_limit: per rollout, recorded tokens that stop the agent (``None``: no limit).
        out_dir: the eval directory (created; must not exist or be empty); None writes nothing.
        eval_id: the eval's id (default: a fresh time-sortable id).
        on_progress: called on the event loop after each rollout with an :class:`EvalProgress`
            (and once at the start of a resumed eval, with what it kept); it must be cheap
            (store the snapshot, render elsewhere).
        report: also write ``report.html`` (and keep compact per-rollout details for it).
        executor: where the rollouts run (default: this event loop). Checked before anything
            is written.
        prices: per-million-token prices by model (``{"MODEL": {"input": 0.4, "output":
            1.6}}``, ``"*"`` for any other model): the summary then carries the cost of every
            rollout's model steps.
        limits: per rollout, the three limits as one :class:`~silo_async.Limits` (instead of
            the keywords).
        resume: an eval directory to continue (it is also the output: ``out_dir`` may only
            name the same directory).
        user: for tasks with a user, a function of the task returning a fresh
            :class:`~silo_async.User` for each rollout (default:
            :meth:`~silo_async.ScriptedUser.from_task`; a model user:
            :func:`silo_async.users.model_user`).
        faults: faults to inject into the tool calls (a :class:`~silo_async.Faults`, or a
            SPEC string read with seed 0): the same plan meets the same faults wherever and
            however concurrently it runs.
        baseline: also run the plan without faults (needs ``faults``): the summary then
            compares each agent's pass rates without and with them (``summary.robustness``,
            ``summary.json``'s ``baseline``), and the baseline's rollouts are indexed with
            ``"baseline": true``.
        families: ``{family id: N}``: also play the first N distinct instances of each
            family in ``split`` from seed ``start`` (:meth:`Environment.instances`), after
            ``tasks``; the summary groups them by family and split.
        split: the split ``families`` takes instances from (``train`` or ``test``).
        start: the seed ``families``' scans start from.
        options: how every rollout runs as one :class:`~silo_async.RunOptions` (instead of the
            limit, ``faults`` and ``user`` keywords).

    Returns:
        The :class:`EvalSummary` of every rollout (``resumed`` says what a resume kept and ran).

    Raises:
        SiloError: an unknown task or verifier, before any rollout starts; ``executor_invalid``
            or ``executor_unavailable`` when the executor cannot run this eval;
            ``eval_not_found`` (``resume`` is not an eval directory) or ``resume_conflict``
            (an argument differs from the resumed eval's plan); ``faults_invalid`` for a SPEC
            that cannot be read.
        ValueError: invalid arguments (``baseline`` without ``faults``).
        TypeError: ``limits=`` given together with a limit keyword (or ``options=`` with any
            of the keywords it replaces).
        FileExistsError: ``out_dir`` exists and is not empty.
    """
    how = resolve_options(
        options,
        limits=limits,
        max_tool_calls=max_tool_calls,
        timeout=timeout,
        token_limit=token_limit,
        faults=faults,
        user=user,
    )
    limits, fault_plan, user = how.limits, how.faults, how.user
    if prices is not None and not isinstance(prices, Prices):
        prices = Prices.from_dict(prices)
    if baseline and fault_plan is None:
        raise ValueError("baseline=True compares runs with and without faults: give faults= too.")
    # What eval.json records of them (its "options").
    recorded = _options(runs, prices, fault_plan, baseline, user_ref(user), how.policy_version)
    if resume is not None:
        listed = None if tasks is None else [tasks] if isinstance(tasks, str) else list(tasks)
        # Families given again must name the plan's instances (of the environment resumed).
        wanted = _with_instances(listed, families, split, start) if families else listed
        prepared = await anyio.to_thread.run_sync(
            lambda: prepare_resume(
                resume,
                env=env,
                agents=agents,
                user=user,
                executor=executor or LocalExecutor(),
                concurrency=None if concurrency == DEFAULT_CONCURRENCY else concurrency,
                report=report,
                given=_given(wanted, limits, recorded),
                out_dir=out_dir,
                eval_id=eval_id,
                agents_complete=True,
            )
        )
        return await prepared.run(on_progress)
    if tasks is None:
        task_ids = [] if families else [t.id for t in env.tasks]
    else:
        task_ids = [tasks] if isinstance(tasks, str) else list(tasks)
    task_ids += family_instances(env, families, split, start, task_ids)
    _check_args(env, task_ids, agents, runs, concurrency, baseline)
    plan = new_plan(
        eval_id or new_eval_id(),
        env,
        task_ids,
        agents,
        limits=limits,
        concurrency=concurrency,
        options=recorded,
        executor=executor,
    )
    eval_dir = Path(out_dir) if out_dir is not None else None
    run = EvalRun(
        env,
        agents,
        plan,
        eval_dir,
        concurrency,
        report,
        executor,
        resumed=False,
        user=user,
        options=how,
    )
    return await run.start(on_progress)


def family_instances(
    env: Environment,
    families: Mapping[str, int] | None,
    split: str,
    start: int,
    listed: Sequence[str] = (),
) -> list[str]:
    """The instance ids ``families`` (``{family id: N}``) stand for, by the scan rule.

    Instances already ``listed`` are not listed twice.

    Raises:
        SiloError: ``task_not_found`` (an unknown family; too few instances).
        ValueError: a count below 1, a start below 0, an unknown split.
    """
    if not families:
        return []
    if not isinstance(families, Mapping):
        raise ValueError(
            f'families must map family ids to counts, e.g. {{"f": 10}}; got {families!r}.'
        )
    found: list[str] = []
    seen = set(listed)
    for family, count in families.items():
        for task in env.instances(family, count, split=split, start=start):
            if task.id not in seen:
                seen.add(task.id)
                found.append(task.id)
    return found


def _options(
    runs: int,
    prices: Prices | None,
    faults: Faults | None,
    baseline: bool,
    user: dict[str, Any] | None,
    policy_version: str | None = None,
) -> dict[str, Any]:
    """The plan's one-value settings (:data:`~._evalfile.OPTIONS`) as this call gives them."""
    return {
        "runs": runs,
        "prices": None if prices is None else prices.to_dict(),
        "faults": None if faults is None else faults.to_dict()["faults"],
        "faultSeed": 0 if faults is None else faults.seed,
        "baseline": baseline,
        "user": user,
        "policyVersion": policy_version,
    }


def _with_instances(
    listed: list[str] | None, families: Mapping[str, int], split: str, start: int
) -> Callable[[Environment], list[str]]:
    """The tasks ``listed`` and the instances ``families`` stand for, in an environment."""

    def task_ids(environment: Environment) -> list[str]:
        named = list(listed or [])
        return named + family_instances(environment, families, split, start, named)

    return task_ids


def _given(tasks: Any, limits: Limits, options: Mapping[str, Any]) -> dict[str, Any]:
    """The plan settings a resuming ``evaluate`` call gives: those not left at their default.

    An argument left at its default takes the plan's value; one given must be the plan's.
    ``tasks`` are ids, or a function of the environment giving them (``families=``).
    """
    given: dict[str, Any] = {}
    if tasks is not None:
        given["tasks"] = tasks
    defaults = DEFAULT_LIMITS.config()
    given.update({k: v for k, v in limits.config().items() if v != defaults[k]})
    given.update({k: v for k, v in options.items() if v != OPTIONS[k].default})
    if options["faults"] is not None:  # a fault plan given is given with its seed
        given["faultSeed"] = options["faultSeed"]
    return given
