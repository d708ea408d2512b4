"""``env validate --audit``: an audit's verdicts as validation findings, one per task.

A ``gameable`` task is ``task_gameable`` and a ``loose`` one ``task_loose``; both are errors,
each naming the task, what passed, the rollout to open and the fix. ``unsolved`` is left to
validation's own ``solver_failed``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._checks import Finding
from ._report import AuditReport, why

__all__ = ["audit_findings"]


def _where(report: AuditReport, run_id: str, cwd: Path) -> str:
    path = report.path / "runs" / run_id
    try:
        return os.path.relpath(path, cwd)
    except ValueError:  # another drive
        return str(path)


def _gameable(entry: Mapping[str, Any], report: AuditReport, cwd: Path) -> Finding:
    name = next(n for n, p in entry["probes"].items() if p["passed"])
    probe = entry["probes"][name]
    where = _where(report, probe["runId"], cwd)
    return Finding(
        "error",
        "task_gameable",
        f'Task "{entry["task"]}" is gameable: the {name} probe passes it (reward '
        f"{probe['reward']:.2f}) without doing the task; see {where}. "
        "Make its verifier require the change the task asks for, or an answer that commits "
        "(one figure, no other names) rather than one that lists everything in sight.",
    )


def _loose(entry: Mapping[str, Any], report: AuditReport, cwd: Path) -> Finding:
    mutant = next(
        m for m in entry["mutants"] if m["kind"] != "repeat" and m["passed"] and not m["sameWorld"]
    )
    return Finding(
        "error",
        "task_loose",
        f'Task "{entry["task"]}" is loose: {why(entry)}, so its verifier never checks that '
        f"change; see {_where(report, mutant['runId'], cwd)}. Check it in the verifier (or have "
        "the solver not make a write nothing checks).",
    )


def audit_findings(report: AuditReport, cwd: Path) -> list[Finding]:
    """One error per ``gameable`` task (``task_gameable``) and ``loose`` task (``task_loose``).

    Args:
        report: the audit.
        cwd: where paths in the messages are relative to.
    """
    found: list[Finding] = []
    for entry in report.tasks:
        if entry["verdict"] == "gameable":
            found.append(_gameable(entry, report, cwd))
        elif entry["verdict"] == "loose":
            found.append(_loose(entry, report, cwd))
    return found
