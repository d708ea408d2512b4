"""``silo-async eval --resume EVAL_DIR``: a thin call of ``silo.resume``'s first step.

Nothing of the plan needs repeating: the library reads ``eval.json`` once, rebuilds the
environment and the agents, and checks once what was given against the plan
(:func:`silo_async.eval._resuming.prepare_resume`). This module only turns the flags given
into what that call takes — plan settings by their key, ``--agent``/``--model`` agents,
``--user-model``, model keywords for the plan's model agents, the executor — and names a
refused setting by its flag instead of its keyword (:data:`FLAGS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from .._environment import Environment
from .._errors import SiloError
from .._runner import Agent
from ..eval._conflicts import differs_text
from ..eval._executor import Executor, LocalExecutor
from ..eval._report._prices import Prices
from ..eval._resuming import Resumption, prepare_resume
from ._executor import build_executor
from ._faults import read_faults

__all__ = ["FLAGS", "given", "prepare"]

#: The flag that gives each setting a resume compares, by its key in the plan's settings (and,
#: for settings outside the plan, by the keyword that names them).
FLAGS = {
    "environment": "--env",
    "tasks": "--task/--tasks",
    "agents": "--agent/--model",
    "maxToolCalls": "--max-tool-calls",
    "timeoutMs": "--timeout-ms",
    "tokenLimit": "--token-limit",
    "runs": "--runs",
    "prices": "--prices",
    "faults": "--faults",
    "faultSeed": "--fault-seed",
    "baseline": "--baseline",
    "user": "--user-model",
    "policyVersion": "--policy-version",
    "out_dir": "--out",
    "base_url": "--base-url",
    "max_turns": "--max-turns",
}

#: Plan settings one flag gives as it is: (key, the flag's parameter).
_PLAIN = (
    ("runs", "runs"),
    ("maxToolCalls", "max_tool_calls"),
    ("timeoutMs", "timeout_ms"),
    ("tokenLimit", "token_limit"),
    ("policyVersion", "policy_version"),
)


def given(ctx: click.Context, name: str) -> bool:
    """The flag (by its parameter name) was given, not left at its default."""
    source = ctx.get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)


def _settings(
    ctx: click.Context,
    values: Mapping[str, Any],
    plan_tasks: Callable[[Environment, dict[str, Any]], list[str]],
    read_prices: Callable[[Path], Prices | None],
) -> dict[str, Any]:
    """The plan settings the flags give, by their key (those left out take the plan's)."""
    settings: dict[str, Any] = {key: values[name] for key, name in _PLAIN if given(ctx, name)}
    if given(ctx, "env_name"):
        settings["environment"] = values["env_name"]
    if given(ctx, "prices_file"):
        prices = read_prices(values["prices_file"])
        settings["prices"] = None if prices is None else prices.to_dict()
    if any(given(ctx, name) for name in ("tasks", "task_list", "families")):
        settings["tasks"] = lambda environment: plan_tasks(environment, dict(values))
    if given(ctx, "faults_spec"):  # the plan with its seed (0 unless --fault-seed says)
        faults = read_faults(values["faults_spec"], values["fault_seed"])
        assert faults is not None
        settings["faults"], settings["faultSeed"] = faults.to_dict()["faults"], faults.seed
    elif given(ctx, "fault_seed"):
        settings["faultSeed"] = values["fault_seed"]
    if given(ctx, "baseline"):
        settings["baseline"] = values["baseline"]
    return settings


def _executor(
    ctx: click.Context, values: Mapping[str, Any]
) -> tuple[Executor | None, dict[str, Any]]:
    """The executor the flags ask for, or (left out: the plan's) the Ray settings given."""
    if given(ctx, "executor"):  # --executor local on a Ray plan means here, not the plan's
        names = ("executor", "ray_address", "workers", "worker_concurrency")
        return build_executor(*(values[name] for name in names)) or LocalExecutor(), {}
    keys = (
        ("ray_address", "address"),
        ("workers", "workers"),
        ("worker_concurrency", "workerConcurrency"),
    )
    return None, {key: values[name] for name, key in keys if given(ctx, name)}


#: The Ray settings a resume takes over the plan's executor, by their flag.
_RAY_FLAGS = {
    "address": "--ray-address",
    "workers": "--workers",
    "workerConcurrency": "--worker-concurrency",
}


def _flagged(error: SiloError) -> SiloError:
    """A refused setting named by the flag that gives it, not by its keyword or plan key."""
    details = error.details or {}
    if error.code == "executor_invalid" and "settings" in details:  # Ray flags, local plan
        named = ", ".join(_RAY_FLAGS.get(k, k) for k in details["settings"])
        return SiloError(
            error.code,
            f"{named} apply to --executor ray, and eval {details['evalId']} ran in one event "
            "loop: add --executor ray to run the rest of it on Ray.",
            details,
        )
    if error.code != "resume_conflict" or details.get("kind") not in ("differs", "unused"):
        return error
    flag = FLAGS.get(details.get("setting", "")) if details.get("kind") == "differs" else None
    flag = flag or FLAGS.get(details.get("keyword", ""))
    if flag is None:
        return error
    if details["kind"] == "differs" and "planned" in details and "plan" in details:
        return SiloError(error.code, differs_text(flag, details), details)
    keyword = details["keyword"]
    message = error.message.replace(f"{keyword}=", flag).replace(f" {keyword} out", f" {flag} out")
    return SiloError(error.code, message, details)


def prepare(
    ctx: click.Context,
    eval_dir: Path,
    agents: Callable[[], dict[str, Agent]],
    user: Any,
    plan_tasks: Callable[[Environment, dict[str, Any]], list[str]],
    read_prices: Callable[[Path], Prices | None],
) -> Resumption:
    """What ``eval --resume`` runs: the flags given, checked against the plan by the library.

    Args:
        ctx: the command's context (which flags were given, and their values).
        eval_dir: the eval directory.
        agents: builds the ``--agent``/``--model`` agents given (called only when given).
        user: the ``--user-model`` user given, or None.
        plan_tasks: the task ids ``--task``, ``--tasks`` and ``--family`` (with ``--count``,
            ``--split``, ``--start``) name in an environment (called only when one is given).
        read_prices: reads ``--prices``.

    Raises:
        SiloError: ``resume_conflict`` (named by its flag) and whatever the resume refuses.
    """
    values = ctx.params
    executor, executor_settings = _executor(ctx, values)
    model_options = {
        name: values[name] for name in ("base_url", "max_turns") if values[name] is not None
    }
    given_agents = given(ctx, "agent_specs") or given(ctx, "model_specs")
    try:
        return prepare_resume(
            eval_dir,
            agents=agents() if given_agents else None,
            user=user,
            executor=executor,
            concurrency=values["concurrency"] if given(ctx, "concurrency") else None,
            given=_settings(ctx, values, plan_tasks, read_prices),
            model_options={} if given_agents else model_options,
            executor_settings=executor_settings,
            out_dir=values["out_dir"] if given(ctx, "out_dir") else None,
            agents_complete=True,
        )
    except SiloError as error:
        raise _flagged(error) from None
