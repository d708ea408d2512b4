"""Making again what ``eval.json`` names (:mod:`._refs`), or refusing what nothing can make.

The environment is loaded from the project the plan names; an agent from its ``--agent`` spec
(in the directory the eval ran from), its model spec and options, or its importable
``module:name``; a model user from its spec, server and options; a Ray executor from its
address and sizes. A code-first environment, a closure and a user factory made in Python are
refused with ``resume_conflict`` (``kind: "rebuild"``): the caller gives them again. Blocking
(an environment's and an agent file's code is imported): call it off the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._environment import Environment
from .._errors import SiloError
from .._runner import Agent
from .._user import UserFactory
from ..agents._load import load_agent
from ..project._loader import load_environment
from ._conflicts import rebuild_error
from ._evalfile import EvalPlan
from ._executor import Executor
from ._refs import USER_OPTIONS, AgentRef

__all__ = ["rebuild_agent", "rebuild_environment", "rebuild_executor", "rebuild_user"]


def rebuild_environment(plan: EvalPlan) -> Environment:
    """The plan's environment, loaded from its project.

    Raises:
        SiloError: ``resume_conflict`` for an environment defined in code (give ``env=``);
            what loading the environment raises (``environment_not_found``...).
    """
    name, project = plan.environment["name"], plan.environment.get("project")
    if project is None:
        raise rebuild_error(plan, "environment", f'The environment "{name}"', "env")
    return load_environment(name, Path(project))


def rebuild_agent(plan: EvalPlan, ref: AgentRef) -> Agent:
    """The agent ``ref`` names, made again.

    Raises:
        SiloError: ``resume_conflict`` for an agent nothing records how to make (give it in
            ``agents=``); ``agent_not_found`` / ``agent_invalid`` / ``model_invalid`` when its
            spec no longer loads.
    """
    if ref.kind == "model":
        from ..agents import from_spec  # imports an SDK: only for model agents

        return from_spec(str(ref.spec), **ref.options)
    if ref.kind in ("agent", "code"):
        return load_agent(ref.spec, Path(ref.cwd or Path.cwd())).fn
    raise rebuild_error(plan, "agents", f'Agent "{ref.label}"', "agents")


def rebuild_user(plan: EvalPlan) -> UserFactory | None:
    """The ``user=`` the plan played (None: each task's scripted user).

    Raises:
        SiloError: ``resume_conflict`` when it played a user factory nothing can rebuild (give
            ``user=``).
    """
    ref = plan.options["user"]
    if ref is None:
        return None
    if "model" not in ref:
        raise rebuild_error(plan, "user", f"The users of {ref.get('label')!r}", "user")
    from ..users import model_user  # imports an SDK: only when the eval played a model user

    names = {v: k for k, v in USER_OPTIONS.items()}
    options = {names[k]: v for k, v in (ref.get("options") or {}).items() if k in names}
    return model_user(str(ref["model"]), ref.get("baseUrl"), **options)


def rebuild_executor(plan: EvalPlan, settings: Mapping[str, Any]) -> Executor | None:
    """The executor the plan ran on (None: this event loop), with ``settings`` over its own.

    Args:
        plan: the eval's plan.
        settings: ``address``, ``workers``, ``workerConcurrency`` given for this run (a Ray
            plan keeps the others).

    Raises:
        SiloError: ``executor_invalid``: Ray settings for an eval that ran in one event loop.
    """
    recorded = plan.executor
    if recorded.get("executor") != "ray":
        if settings:
            raise SiloError(
                "executor_invalid",
                f"{', '.join(settings)} apply to a Ray executor, and eval {plan.eval_id} ran in "
                "one event loop: give a Ray executor to run the rest of it on Ray.",
                {"settings": sorted(settings), "evalId": plan.eval_id},
            )
        return None
    from .ray import RayExecutor  # Ray itself is imported only when the executor starts

    merged = {**recorded, **settings}
    return RayExecutor(
        address=merged.get("address"),
        workers=merged.get("workers"),
        concurrency=merged.get("workerConcurrency"),
    )
