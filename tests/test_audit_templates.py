"""The shipped worlds pass their own audit (issue 33): every hand-written task is ``sound``.

Each template's tasks are audited with its shipped solver (``examples/agents/<template>_solver.py``)
and every probe: no probe earns a task's reward, and no mutant of the solver that drops or
alters one of its world-changing calls passes. When a template's task fails here, fix its
verifier (or stop the solver making a write nothing checks), never the audit.

One backend: the audit's rollouts are the core's, run on both backends by ``test_audit.py``;
these audits are the expensive part of the suite, so they run once.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import anyio
import pytest

import silo_async as silo
from silo_async.auditing import why
from tests.template_support import load_agent, template_environment

TEMPLATES = ("crm", "project", "erp", "support")


def _audit(template: str, out: Path) -> silo.AuditReport:
    env = template_environment(
        template, importlib.import_module(f"silo_async.templates.{template}")
    )
    solver = load_agent(f"{template}_solver")
    return anyio.run(lambda: silo.audit(env, solver=solver, out=out))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("template", TEMPLATES)
def test_every_hand_written_task_audits_sound(template: str, tmp_path: Path) -> None:
    report = _audit(template, tmp_path / "audit")
    weak = {e["task"]: (e["verdict"], why(e)) for e in report.tasks if e["verdict"] != "sound"}
    assert not weak, f"{template}: {weak} (see {report.path / 'audit.md'})"
    assert report.counts["sound"] == len(report.tasks) > 0
