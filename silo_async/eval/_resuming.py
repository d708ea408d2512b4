"""``silo.resume``: an eval continued from its directory alone (docs/resuming.md).

One path for every way to resume — ``silo.resume(EVAL_DIR)``, ``evaluate(..., resume=EVAL_DIR)``
and ``silo-async eval --resume EVAL_DIR`` — in two steps. :func:`prepare_resume` reads
``eval.json`` once, checks what the caller gave against it once (:mod:`._conflicts`), makes
again what the plan names and the caller left out (:mod:`._rebuild`), and checks that the
tasks, verifiers and data are still those the plan ran (:mod:`._digests`); nothing is written.
:meth:`Resumption.run` then runs the rest of the plan (:class:`._run.EvalRun`: the directory
locked, surveyed, tidied, the missing rollouts run, the summary written).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread
import attrs

from .._environment import Environment
from .._errors import SiloError
from .._many import check_counts, check_tasks
from .._runner import Agent
from .._user import UserFactory
from ._books import EvalProgress
from ._conflicts import changed_error, check_given
from ._digests import changed
from ._evalfile import EvalPlan, read_plan
from ._executor import Executor
from ._rebuild import rebuild_agent, rebuild_environment, rebuild_executor, rebuild_user
from ._refs import AgentRef, agent_ref, user_ref
from ._report._summary import EvalSummary
from ._run import EvalRun

__all__ = ["Resumption", "prepare_resume", "resume"]


@attrs.frozen
class Resumption:
    """A resume ready to run: its plan read and checked, what it runs made again.

    Attributes:
        plan: the eval's plan.
        eval_dir: the eval directory.
        env: the environment (given, or loaded from the plan's project).
        agents: the plan's agents by label, in its order (given, or made again).
        user: the users' factory (given, the plan's model user, or None: scripted users).
        executor: where the rollouts run (None: this event loop).
        concurrency: the most rollouts in flight.
        report: write ``report.html`` too.
    """

    plan: EvalPlan
    eval_dir: Path
    env: Environment
    agents: dict[str, Agent]
    user: UserFactory | None
    executor: Executor | None
    concurrency: int
    report: bool = True

    async def run(self, on_progress: Callable[[EvalProgress], None] | None = None) -> EvalSummary:
        """Run what the eval has left and write its summary (see :func:`resume`)."""
        run = EvalRun(
            self.env,
            self.agents,
            self.plan,
            self.eval_dir,
            self.concurrency,
            self.report,
            self.executor,
            resumed=True,
            user=self.user,
        )
        return await run.start(on_progress)


def _given_agents(
    plan: EvalPlan,
    agents: Mapping[str, Agent] | None,
    model_options: Mapping[str, Any],
    complete: bool,
) -> list[AgentRef] | None:
    """The agents as the caller gives them, in the form the plan compares (None: not given).

    ``complete``: ``agents`` are all of them, in order (``evaluate``, the CLI); else those
    given stand in for the plan's of the same label, the others made again (``silo.resume``).
    """
    if agents is not None and (complete or set(agents) - set(plan.labels)):
        return [agent_ref(label, agent) for label, agent in agents.items()]
    if agents is None and not any(r.kind == "model" for r in plan.agents):
        return None  # no model agent for model_options to apply to (checked apart)
    if agents is None and not model_options:
        return None
    given = dict(agents or {})
    refs = [agent_ref(r.label, given[r.label]) if r.label in given else r for r in plan.agents]
    return [r.with_options(model_options) if r.kind == "model" else r for r in refs]


def _check_model_options(plan: EvalPlan, model_options: Mapping[str, Any]) -> None:
    """Model keywords given for a plan without a model agent: refused, never ignored."""
    if not model_options or any(r.kind == "model" for r in plan.agents):
        return
    user = plan.options["user"] or {}
    # The same server as the plan's model user (the CLI's --base-url serves both): a repeat.
    serves_user = "model" in user and model_options.get("base_url") == user.get("baseUrl")
    unused = [k for k in model_options if not (k == "base_url" and serves_user)]
    if not unused:
        return
    keyword = unused[0]
    raise SiloError(
        "resume_conflict",
        f"{keyword}= applies to model agents, and eval {plan.eval_id} has none (its agents: "
        f"{', '.join(plan.labels)}): nothing would use it. Leave {keyword} out.",
        {"setting": "agents", "keyword": keyword, "kind": "unused", "evalId": plan.eval_id},
    )


def _check_place(plan: EvalPlan, eval_dir: Path, out_dir: Any, eval_id: str | None) -> None:
    """``evaluate``'s ``out_dir`` and ``eval_id`` may only repeat the resumed eval's own."""
    places: tuple[tuple[str, Any, str], ...] = (
        ("out_dir", out_dir, os.fspath(eval_dir)),
        ("eval_id", eval_id, plan.eval_id),
    )
    for name, given, planned in places:
        same = given is None or (
            _same_dir(given, eval_dir) if name == "out_dir" else given == plan.eval_id
        )
        if not same:
            raise SiloError(
                "resume_conflict",
                f"{name}= {given} differs from eval {plan.eval_id}, which resumes in "
                f"{os.fspath(eval_dir)}: a resumed eval writes into its own directory, under its "
                f"own id. Leave {name} out.",
                {"setting": name, "keyword": name, "kind": "differs", "given": str(given),
                 "planned": planned, "evalId": plan.eval_id},
            )  # fmt: skip


def _same_dir(a: Any, b: Path) -> bool:
    return Path(a).absolute() == b.absolute()


def prepare_resume(
    eval_dir: str | os.PathLike[str],
    *,
    env: Environment | None = None,
    agents: Mapping[str, Agent] | None = None,
    user: UserFactory | None = None,
    executor: Executor | None = None,
    concurrency: int | None = None,
    report: bool = True,
    given: Mapping[str, Any] | None = None,
    model_options: Mapping[str, Any] | None = None,
    executor_settings: Mapping[str, Any] | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    eval_id: str | None = None,
    agents_complete: bool = False,
) -> Resumption:
    """Read, check and make again what resuming ``eval_dir`` runs (blocking; nothing written).

    Args:
        eval_dir: the eval directory.
        env: as for :func:`resume`.
        agents: as for :func:`resume`.
        user: as for :func:`resume`.
        executor: as for :func:`resume`.
        concurrency: as for :func:`resume`.
        report: as for :func:`resume`.
        given: other settings the caller gave, by their key in the plan's settings
            (:data:`._conflicts.SETTINGS`; ``tasks`` may be a function of the environment
            giving the ids, for names that need it: ``--tasks all``, families): each must be
            the plan's.
        model_options: keywords (``base_url``, ``max_turns``) the caller gave for the plan's
            model agents: they must be the plan's (and there must be a model agent).
        executor_settings: ``address``, ``workers``, ``workerConcurrency`` over those of the
            plan's Ray executor (when ``executor`` is not given).
        out_dir: ``evaluate``'s, which may only name the eval directory itself.
        eval_id: ``evaluate``'s, which may only repeat the eval's own.
        agents_complete: ``agents`` are every agent, in order (else: those given stand in
            for the plan's of the same labels, the others are made again).

    Raises:
        SiloError: ``eval_not_found``, ``eval_invalid``, ``run_format_unsupported`` (the
            plan); ``resume_conflict`` (see :mod:`._conflicts`); what loading the
            environment or an agent raises.
    """
    directory = Path(eval_dir)
    plan = read_plan(directory)
    _check_place(plan, directory, out_dir, eval_id)
    settings = dict(given or {})
    if env is not None:
        settings["environment"] = env.name
    environment = env if env is not None else rebuild_environment(plan)
    if callable(settings.get("tasks")):  # named through the environment (families, "all")
        settings["tasks"] = settings["tasks"](environment)
    _check_model_options(plan, model_options or {})
    refs = _given_agents(plan, agents, model_options or {}, agents_complete)
    if refs is not None:
        settings["agents"] = refs
    if user is not None:
        settings["user"] = user_ref(user)
    check_given(plan, settings, directory)
    if plan.digests is not None:
        what = changed(plan.digests, environment, plan.tasks)
        if what is not None:
            raise changed_error(plan, what, directory)
    made = dict(agents or {})
    conc = plan.concurrency if concurrency is None else concurrency
    check_counts(plan.runs, conc)
    check_tasks(environment, plan.tasks)
    return Resumption(
        plan=plan,
        eval_dir=directory,
        env=environment,
        agents={
            r.label: made[r.label] if r.label in made else rebuild_agent(plan, r)
            for r in plan.agents
        },
        user=user if user is not None else rebuild_user(plan),
        executor=executor
        if executor is not None
        else rebuild_executor(plan, executor_settings or {}),
        concurrency=conc,
        report=report,
    )


async def resume(
    eval_dir: str | os.PathLike[str],
    *,
    env: Environment | None = None,
    agents: Mapping[str, Agent] | None = None,
    user: UserFactory | None = None,
    executor: Executor | None = None,
    concurrency: int | None = None,
    on_progress: Callable[[EvalProgress], None] | None = None,
    report: bool = True,
) -> EvalSummary:
    """Continue the eval in ``eval_dir`` from that directory alone (docs/resuming.md).

    Everything comes from its ``eval.json``: the environment is loaded from the project it
    names, the agents are made again from their specs (``--agent`` files and modules,
    importable functions, model agents with their options), a model user likewise; tasks,
    runs, limits, prices and faults are the plan's. Its finished rollouts are kept, torn and
    cut-short ones run again (a model agent's continuing from its recorded responses), the
    missing ones run, and the summary is written into ``eval_dir``, which keeps its ``evalId``.
    An eval that finished runs and writes nothing (``summary.resumed.finished``).

    Args:
        eval_dir: the eval directory (``.silo/evals/<eval_id>`` or an ``--out`` directory).
        env: the environment, needed when the eval's was defined in code (else loaded); it
            must have the plan's name.
        agents: ``{label: agent}`` for agents nothing can rebuild (closures); others are made
            again (given, an agent must be the one the plan names).
        user: the users' factory, needed when the eval played one made in Python.
        executor: where the rollouts run (default: the executor the eval ran on).
        concurrency: the most rollouts in flight (default: the plan's).
        on_progress: as for :func:`~silo_async.evaluate` (first called with what was kept).
        report: also write ``report.html``.

    Returns:
        The eval's :class:`~silo_async.EvalSummary` (``resumed`` says what was kept and run).

    Raises:
        SiloError: ``eval_not_found`` (no ``eval.json`` there), ``eval_invalid`` (a plan that
            was edited), ``eval_locked`` (another process writes the directory: an eval or a
            resume still running), ``resume_conflict`` (something the plan needs that nothing
            can rebuild, an argument that differs from the plan, or a task, verifier source or
            the environment's data changed since the plan ran them), and what loading the
            environment or an agent raises.
    """
    prepared = await anyio.to_thread.run_sync(
        functools.partial(
            prepare_resume,
            eval_dir,
            env=env,
            agents=agents,
            user=user,
            executor=executor,
            concurrency=concurrency,
            report=report,
        )
    )
    return await prepared.run(on_progress)
