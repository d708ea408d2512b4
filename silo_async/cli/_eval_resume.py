"""``silo-async eval --resume EVAL_DIR``: the plan from ``eval.json``, checked against the flags.

Nothing of the plan needs repeating: the environment is loaded from the project the plan names,
the agents are made again from their specs (``--agent`` files, ``--model`` specs, importable
functions), and tasks, runs, limits, prices and faults are the plan's. A plan flag given anyway must
repeat the plan's value (``resume_conflict`` otherwise); ``--concurrency`` and the executor
flags may differ (left out, the plan's concurrency and executor are used).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import click
from click.core import ParameterSource

from .._agentload import AgentLoadError, load_agent
from .._environment import Environment
from .._errors import SiloError
from .._runner import Agent
from ..eval._evalfile import AgentRef, EvalPlan, agent_ref, check_given
from ..eval._executor import Executor
from ..eval._report._prices import Prices
from ..project._authoring import ProjectStore
from ._executor import build_executor
from ._faults import read_faults

__all__ = ["ResumeInputs", "given", "resume_inputs"]


def given(ctx: click.Context, name: str) -> bool:
    """The flag (by its parameter name) was given, not left at its default."""
    source = ctx.get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)


@attrs.frozen
class ResumeInputs:
    """What a resume runs: the plan's, made again."""

    environment: Environment
    agents: dict[str, Agent]
    concurrency: int
    executor: Executor | None


def _load_environment(plan: EvalPlan) -> Environment:
    name, project = plan.environment["name"], plan.environment.get("project")
    if project is None:
        raise SiloError(
            "environment_not_found",
            f'The environment "{name}" of eval {plan.eval_id} was defined in code, not in a '
            "project, so the CLI cannot load it: resume the eval from Python, "
            "silo.evaluate(env, tasks, agents, resume=EVAL_DIR).",
            {"environment": name},
        )
    return ProjectStore(Path(project)).open_environment(name).load()


def _make_agent(ref: AgentRef, plan: EvalPlan) -> Agent:
    if ref.kind == "model":
        from ..agents import from_spec  # imports an SDK: only for model agents

        return from_spec(str(ref.spec), **ref.options)
    if ref.kind in ("agent", "code"):
        return load_agent(ref.spec, Path(ref.cwd or Path.cwd())).fn
    raise AgentLoadError(
        f'Agent "{ref.label}" of eval {plan.eval_id} was passed from Python and nothing records '
        "how to make it again: resume the eval from Python, silo.evaluate(env, tasks, agents, "
        "resume=EVAL_DIR).",
        "agent_not_found",
    )


def _with_model_flags(
    refs: Sequence[AgentRef], base_url: str | None, max_turns: int | None
) -> list[AgentRef]:
    """The plan's agents with ``--base-url`` / ``--max-turns`` applied to its model agents."""
    changed = []
    for ref in refs:
        if ref.kind == "model":
            options = dict(ref.options)
            if base_url is not None:
                options["base_url"] = base_url
            if max_turns is not None:
                options["max_turns"] = max_turns
            ref = attrs.evolve(ref, options=options)
        changed.append(ref)
    return changed


def resume_inputs(
    ctx: click.Context,
    plan: EvalPlan,
    eval_dir: Path,
    values: dict[str, Any],
    build_agents: Any,
    select_tasks: Any,
    read_prices: Any,
) -> ResumeInputs:
    """Check the flags given against ``plan`` and make what the resume runs.

    Args:
        ctx: the command's context (which flags were given).
        plan: the eval's plan.
        eval_dir: the eval directory.
        values: the command's parameters, by name.
        build_agents: ``(agent_specs, model_specs, base_url, max_turns) -> {label: agent}``,
            as a new eval builds them.
        select_tasks: ``(environment, values) -> [task ids]``: what ``--task``, ``--tasks``
            and ``--family`` (with its ``--count``, ``--split``, ``--start``) name.
        read_prices: ``(path) -> Prices | None``.

    Raises:
        SiloError: ``resume_conflict`` (a flag differs from the plan), or what loading the
            environment or an agent raises.
    """
    if given(ctx, "out_dir") and values["out_dir"].absolute() != eval_dir.absolute():
        raise SiloError(
            "resume_conflict",
            f"--out {values['out_dir']} differs from the eval directory {eval_dir}: a resumed "
            "eval writes into its own directory. Leave --out out.",
            {"setting": "out", "given": str(values["out_dir"]), "planned": str(eval_dir)},
        )
    flags: dict[str, Any] = {}
    if given(ctx, "env_name"):
        flags["environment"] = values["env_name"]
    # One row per plan setting that one flag gives (its key in eval.json, the flag's parameter,
    # how its value becomes the plan's); the agents and tasks are compared further down.
    for key, name, convert in (
        ("runs", "runs", None),
        ("maxToolCalls", "max_tool_calls", None),
        ("timeoutMs", "timeout_ms", None),
        ("tokenLimit", "token_limit", None),
        ("prices", "prices_file", read_prices),
    ):
        if given(ctx, name):
            value = values[name]
            if convert is not None:
                found: Prices | None = convert(value)
                value = None if found is None else found.to_dict()
            flags[key] = value
    flags.update(_fault_flags(ctx, values))
    check_given(plan, flags, eval_dir, cli=True)
    environment = _load_environment(plan)
    if any(given(ctx, name) for name in ("tasks", "task_list", "families")):
        task_ids = select_tasks(environment, values)
        check_given(plan, {"tasks": task_ids}, eval_dir, cli=True)
    agents = _agents(ctx, plan, eval_dir, values, build_agents)
    return ResumeInputs(
        environment=environment,
        agents=agents,
        concurrency=values["concurrency"] if given(ctx, "concurrency") else plan.concurrency,
        executor=_executor(ctx, plan, values),
    )


def _fault_flags(ctx: click.Context, values: dict[str, Any]) -> dict[str, Any]:
    """The plan's fault settings that ``--faults``, ``--fault-seed`` and ``--baseline`` give."""
    flags: dict[str, Any] = {}
    if given(ctx, "faults_spec"):  # the plan with its seed (0 unless --fault-seed says)
        faults = read_faults(values["faults_spec"], values["fault_seed"])
        assert faults is not None
        flags["faults"], flags["faultSeed"] = faults.to_dict()["faults"], faults.seed
    elif given(ctx, "fault_seed"):
        flags["faultSeed"] = values["fault_seed"]
    if given(ctx, "baseline"):
        flags["baseline"] = values["baseline"]
    return flags


def _agents(
    ctx: click.Context, plan: EvalPlan, eval_dir: Path, values: dict[str, Any], build: Any
) -> dict[str, Agent]:
    base_url, max_turns = values["base_url"], values["max_turns"]
    if given(ctx, "agent_specs") or given(ctx, "model_specs"):
        agents: dict[str, Agent] = build(
            values["agent_specs"], values["model_specs"], base_url, max_turns
        )
        refs = [agent_ref(label, agent) for label, agent in agents.items()]
        check_given(plan, {"agents": refs}, eval_dir, cli=True)
        return agents
    if base_url is not None or max_turns is not None:
        refs = _with_model_flags(plan.agents, base_url, max_turns)
        check_given(plan, {"agents": refs}, eval_dir, cli=True)
    return {ref.label: _make_agent(ref, plan) for ref in plan.agents}


def _executor(ctx: click.Context, plan: EvalPlan, values: dict[str, Any]) -> Executor | None:
    """The executor the flags ask for; left out, the one the eval ran on (flags override)."""
    if given(ctx, "executor"):
        flags = ("executor", "ray_address", "workers", "worker_concurrency")
        return build_executor(*(values[name] for name in flags))
    recorded = plan.executor
    if recorded.get("executor") != "ray":
        return build_executor(
            "local", values["ray_address"], values["workers"], values["worker_concurrency"]
        )

    def pick(name: str, key: str) -> Any:
        return values[name] if given(ctx, name) else recorded.get(key)

    return build_executor(
        "ray",
        pick("ray_address", "address"),
        pick("workers", "workers"),
        pick("worker_concurrency", "workerConcurrency"),
    )
