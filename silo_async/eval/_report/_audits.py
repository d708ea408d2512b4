"""report.html's audit table: each task's verdict from an audit of the same environment.

When the project an eval was written in holds audits (``.silo/audits/*/audit.json``, written by
``silo-async audit``) of the eval's environment, the report says, per task, how far its grade
can be trusted: the verdict of the latest audit covering the task, the best probe's reward
and the gap. Only the audit's file is read (its format is fixed): the eval knows
nothing else of the audit.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["audit_table", "audit_verdicts"]


def _audits_dir(out_dir: Path) -> Path | None:
    """``.silo/audits`` of the project the eval directory is in (the nearest one above it)."""
    for place in (out_dir, *out_dir.parents):
        found = place / ".silo" / "audits"
        if found.is_dir():
            return found
    return None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # an audit still being written, or a damaged file: not this report's
    return data if isinstance(data, dict) and isinstance(data.get("tasks"), list) else None


def audit_verdicts(
    out_dir: Path | None, environment: str, tasks: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Task id -> its entry in the latest audit of ``environment`` that covers it (+ auditId).

    Audit ids sort by the time the audit started, so the latest is the last by name.
    """
    where = None if out_dir is None else _audits_dir(out_dir)
    if where is None:
        return {}
    wanted = set(tasks)
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(where.glob("*/audit.json"), reverse=True):
        data = _read(path)
        if data is None or data.get("environment") != environment:
            continue
        for entry in data["tasks"]:
            task = entry.get("task") if isinstance(entry, dict) else None
            if task in wanted and task not in found:
                found[task] = {**entry, "auditId": data.get("auditId", path.parent.name)}
        if len(found) == len(wanted):
            break
    return found


def _h(text: object) -> str:
    return html.escape(str(text), quote=True).replace("/", "&#47;")


def _reward(value: Any) -> str:
    return "—" if not isinstance(value, int | float) else f"{value:.2f}"


def _row(task: str, entry: Mapping[str, Any]) -> str:
    probes = entry.get("probes") or {}
    best = max(probes, key=lambda n: probes[n].get("reward", 0), default=None)
    probe = "—" if best is None else f"{_h(best)} {_reward(probes[best].get('reward'))}"
    solver = entry.get("solver") or {}
    verdict = str(entry.get("verdict"))
    return (
        f'<tr><td>{_h(task)}</td><td class="verdict-{_h(verdict)}"><b>{_h(verdict)}</b></td>'
        f"<td>{_reward(solver.get('reward'))}</td><td>{probe}</td>"
        f"<td>{_reward(entry.get('gap'))}</td><td>{_h(entry.get('auditId'))}</td></tr>"
    )


def audit_table(verdicts: Mapping[str, Mapping[str, Any]], tasks: Sequence[str]) -> str:
    """The report's audit section (static), or nothing when no task was audited."""
    rows = [_row(t, verdicts[t]) for t in tasks if t in verdicts]
    if not rows:
        return ""
    return (
        "<h2>Audit</h2><p class=ci>How far each task's grade can be trusted, from the latest "
        "<code>silo-async audit</code> of this environment that covers it: sound (no shortcut "
        "found), gameable (a probe that does not do the task passes), loose (the solver with a "
        "world-changing call dropped or altered passes), unsolved (the audit's solver fails). "
        "Gap: the solver's reward minus the best probe's.</p>"
        '<table id="audit"><tr><th>task</th><th>verdict</th><th>solver</th><th>best probe</th>'
        f"<th>gap</th><th>audit</th></tr>{''.join(rows)}</table>"
    )
