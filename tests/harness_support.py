"""One scripted play for every harness: a crm project, its calls, and the run they leave.

The same task (crm TASK-001) and the same calls — a search, a call silo must reject, and the
conversion the solver makes — are played through ``run()`` and each harness; each play writes
one run directory under the project's ``.silo/runs/``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ENV_NAME = "crm"
TASK_ID = "TASK-001"
ANSWER = "Converted LEAD-001 into a customer with a $48,000 opportunity."
#: (tool, input) in order: the middle call is refused by silo's validation (a typo'd name).
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_leads", {"query": "Tomasz Wierzbicki"}),
    ("search_leads", {"qury": "Tomasz"}),
    (
        "convert_lead",
        {
            "leadId": "LEAD-001",
            "amount": 48000.0,
            "expectedCloseDate": "2026-12-15",
            "opportunityName": "Harrowgate Soil Labs soil LIMS",
            "actorId": "USR-003",
        },
    ),
]


def make_crm_project(root: Path) -> Path:
    """A project at ``root`` with the crm template as environment ``crm``."""
    root.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "silo_async", "init", ENV_NAME, "--template", "crm"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return root


def run_ids(project: Path) -> set[str]:
    """The run directories the project holds."""
    runs = project / ".silo" / "runs"
    return {p.name for p in runs.iterdir()} if runs.is_dir() else set()


def new_run(project: Path, before: set[str]) -> dict[str, Any]:
    """The one run written since ``before``: its result, state diff bytes and trace."""
    (run_id,) = run_ids(project) - before
    run_dir = project / ".silo" / "runs" / run_id
    return {
        "runId": run_id,
        "result": json.loads((run_dir / "result.json").read_text(encoding="utf-8")),
        "diff": (run_dir / "state-diff.json").read_bytes(),
        "calls": [
            (e["tool"], e["input"])
            for e in map(json.loads, (run_dir / "trace.jsonl").read_text().splitlines())
            if e["type"] == "tool_call"
        ],
    }
