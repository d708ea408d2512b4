"""The gate: scaffold from the current template, run the agents, compare with the baselines."""

from __future__ import annotations

import tempfile
from pathlib import Path

from silo_async.project import EnvironmentHandle

from ._artifacts import collect_artifacts, invariant_failures, task_summary
from ._baseline import compare_baselines
from ._report import GateReport, build_report
from ._rollouts import run_agents, scaffold
from ._spec import BASELINES, GateSpec

__all__ = ["check_environment", "run_gate"]


async def check_environment(
    handle: EnvironmentHandle,
    spec: GateSpec,
    *,
    update: bool = False,
    baselines: Path = BASELINES,
) -> GateReport:
    """Gate an already-scaffolded environment (tests gate deliberately broken copies with it)."""
    rollouts = await run_agents(handle, spec)
    artifacts = collect_artifacts(rollouts)
    comparison = compare_baselines(artifacts, baselines / spec.template, update=update)
    return build_report(
        spec.template,
        update=update,
        task_ids=rollouts.task_ids,
        artifacts=artifacts,
        comparison=comparison,
        summaries={t: task_summary(rollouts, i) for i, t in enumerate(rollouts.task_ids)},
        failures=invariant_failures(rollouts),
    )


async def run_gate(
    spec: GateSpec,
    *,
    update: bool = False,
    baselines: Path = BASELINES,
    workdir: Path | None = None,
) -> GateReport:
    """Scaffold ``spec.template`` into a fresh project and gate it.

    Args:
        spec: the template's gate.
        update: re-record the baselines instead of comparing.
        baselines: the directory holding ``<template>/<TASK>.<agent>.<artifact>.json``.
        workdir: an empty directory for the throwaway project; default a temporary
            directory removed afterwards.
    """
    if workdir is not None:
        return await check_environment(
            await scaffold(workdir, spec.template), spec, update=update, baselines=baselines
        )
    with tempfile.TemporaryDirectory(prefix=f"silo-gate-{spec.template}-") as tmp:
        return await run_gate(spec, update=update, baselines=baselines, workdir=Path(tmp))
