"""Regression gates for the shipped templates (``crm``, ``project``, ``erp``, ``support``).

Each gate scaffolds a throwaway environment from the *current* template into a temporary
project, runs through the SDK a scripted solver (must pass every task with reward 1.0), a no-op
agent (must pass none) and a tool-path agent (read, write, read-back, then an undeclared
argument, a missing required field and an unknown tool, each rejected as a value), and
byte-compares ``result.json`` and ``state-diff.json`` of every rollout, plus the tool-path
rollout's tool events without timings and a digest of each seed collection (a changed figure no
task reads still drifts), with ``tests/baselines/<template>/``.

Task ids come from the scaffolded ``tasks/*.json`` file names, so a new task without a baseline
fails as MISSING. Run ``python -m tests.gates [--update] [crm|project|erp|support]``; pytest
runs the same harness in ``tests/test_gates.py``.
"""

from __future__ import annotations

from ._artifacts import Artifact, collect_artifacts, invariant_failures, tool_events
from ._baseline import Comparison, compare_baselines
from ._harness import check_environment, run_gate
from ._report import GateReport, build_report
from ._rollouts import GateRollouts, load_agent, run_agents, scaffold
from ._spec import AGENTS, BASELINES, GATES, GateSpec, rerecord_command

__all__ = [
    "AGENTS",
    "BASELINES",
    "GATES",
    "Artifact",
    "Comparison",
    "GateReport",
    "GateRollouts",
    "GateSpec",
    "build_report",
    "check_environment",
    "collect_artifacts",
    "compare_baselines",
    "invariant_failures",
    "load_agent",
    "rerecord_command",
    "run_agents",
    "run_gate",
    "scaffold",
    "tool_events",
]
