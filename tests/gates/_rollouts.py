"""Scaffold a throwaway environment from the current template and run the gate's agents."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

import silo_async as silo
from silo_async.project import EnvironmentHandle, Project

from ._spec import GateSpec

__all__ = ["GateRollouts", "load_agent", "run_agents", "scaffold"]

ENV_NAME = "gate"


@dataclass(frozen=True)
class GateRollouts:
    """Everything one gate run produced.

    Attributes:
        task_ids: the scaffolded ``tasks/*.json`` file names, sorted (not the loader's view: a
            task file the loader skipped must still show up, as a missing artifact).
        tool_count: tools bound on a fresh world.
        solver: one result per task, in ``task_ids`` order.
        noop: one result per task, in ``task_ids`` order.
        toolpath: the tool-path rollout.
        seed: a fresh world, as ``create_state()`` builds it.
    """

    task_ids: list[str]
    tool_count: int
    solver: list[silo.RunResult]
    noop: list[silo.RunResult]
    toolpath: silo.RunResult
    seed: Any


def load_agent(path: Path) -> Any:
    """The ``agent`` callable of an agent file, imported by path under a private name."""
    spec = importlib.util.spec_from_file_location(f"_gate_agent_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Cannot import agent file {path}.")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.agent


async def scaffold(project_dir: Path, template: str) -> EnvironmentHandle:
    """Create environment ``gate`` from the current ``template`` in a project at ``project_dir``.

    Scaffolding afresh matters: gating an already-scaffolded copy would pass whatever the
    template does.
    """
    project = await Project.open(project_dir)
    return await project.environments.create(ENV_NAME, template=template)


def scaffolded_task_ids(handle: EnvironmentHandle) -> list[str]:
    """Task ids from the scaffolded ``tasks/*.json`` file names."""
    return sorted(p.stem for p in (handle.path / "tasks").glob("*.json"))


async def run_agents(handle: EnvironmentHandle, spec: GateSpec) -> GateRollouts:
    """Run solver and no-op on every task and the tool-path agent once, all concurrently.

    The environment is loaded once through the SDK and shared by the three batches (every
    rollout still gets its own fresh world): loading compiles every tool's schema, which costs
    more than the rollouts themselves. Artifacts go to the project's ``.silo/runs``, exactly
    where ``handle.run_many`` puts a user's runs.
    """
    task_ids = scaffolded_task_ids(handle)
    env = await handle.load()
    seed = env.create_state()
    tool_count = len(env.bind_tools(seed))
    batches: dict[str, list[silo.RunResult]] = {}

    async def batch(label: str, agent_file: Path, ids: Sequence[str]) -> None:
        batches[label] = await silo.run_many(
            env, ids, load_agent(agent_file), runs_dir=handle.project.runs_dir, agent_name=label
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(batch, "solver", spec.solver, task_ids)
        tg.start_soon(batch, "noop", spec.noop, task_ids)
        tg.start_soon(batch, "toolpath", spec.toolpath, [spec.toolpath_task])
    return GateRollouts(
        task_ids, tool_count, batches["solver"], batches["noop"], batches["toolpath"][0], seed
    )
