"""Which templates have gates, and which agents drive them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["AGENTS", "BASELINES", "GATES", "ROOT", "GateSpec", "rerecord_command"]

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "examples" / "agents"
BASELINES = ROOT / "tests" / "baselines"


@dataclass(frozen=True)
class GateSpec:
    """One template's gate.

    Attributes:
        template: the template id (``silo-async init --template``).
        solver: agent file that must pass every task with reward 1.0.
        noop: agent file that must pass no task.
        toolpath: agent file that walks read, write, read-back and three rejected calls.
        toolpath_task: the task the tool-path agent runs.
    """

    template: str
    solver: Path
    noop: Path
    toolpath: Path
    toolpath_task: str


GATES: dict[str, GateSpec] = {
    "crm": GateSpec(
        "crm",
        AGENTS / "crm_solver.py",
        AGENTS / "noop.py",
        AGENTS / "crm_toolpath.py",
        "TASK-005",
    ),
    "erp": GateSpec(
        "erp",
        AGENTS / "erp_solver.py",
        AGENTS / "noop.py",
        AGENTS / "erp_toolpath.py",
        "TASK-021",
    ),
    "project": GateSpec(
        "project",
        AGENTS / "project_solver.py",
        AGENTS / "noop.py",
        AGENTS / "project_toolpath.py",
        "TASK-006",
    ),
    "support": GateSpec(
        "support",
        AGENTS / "support_solver.py",
        AGENTS / "noop.py",
        AGENTS / "support_toolpath.py",
        "TASK-001",
    ),
}


def rerecord_command(template: str) -> str:
    """The command that re-records ``template``'s baselines."""
    return f"python -m tests.gates --update {template}"
