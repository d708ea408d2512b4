"""Template regression gates, and proof that they catch what they are meant to catch.

The gates themselves (``test_gate_matches_baseline``) run the same harness as
``python -m tests.gates``; the other tests break a scaffolded copy on purpose (a seed number, a
verifier comparison, a new task) and check that the gate fails, and check the baseline
bookkeeping (missing, stale, re-record) on small fake artifacts.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from silo_async.templates import template_dir
from tests.gates import (
    GATES,
    Artifact,
    GateReport,
    build_report,
    check_environment,
    compare_baselines,
    rerecord_command,
    run_gate,
    scaffold,
)
from tests.gates.__main__ import main

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("template", sorted(GATES))
async def test_gate_matches_baseline(template: str, tmp_path: Path) -> None:
    report = await run_gate(GATES[template], workdir=tmp_path)
    assert report.ok, report.failure_message()
    assert report.final_line == f"all {report.tasks} {template} tasks match baseline"
    task_files = sorted((tmp_path / ".silo/environments/gate/tasks").glob("*.json"))
    assert report.tasks == len(task_files) > 0
    # solver + noop (result, state-diff) per task, the tool-path run's three artifacts, and the
    # seed world's digest
    assert report.artifacts == 4 * report.tasks + 3 + 1
    assert report.lines[-1] == "ok seed  the world create_state builds"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} not found exactly once in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


async def test_a_changed_seed_number_drifts(tmp_path: Path) -> None:
    # One amount in the data: every solver still passes (it reads figures through the tools),
    # so only the byte comparison can notice that the world changed.
    handle = await scaffold(tmp_path, "crm")
    _edit(handle.path / "data" / "opportunities.json", '"amount": 185000', '"amount": 185001')
    report = await check_environment(handle, GATES["crm"])
    assert not report.ok
    assert report.failed == []
    assert "DRIFT TASK-008 solver.result.json" in report.lines
    assert report.drifted and not report.missing
    assert rerecord_command("crm") in report.failure_message()


async def test_a_changed_verifier_comparison_drifts(tmp_path: Path) -> None:
    # "closing today is due" becomes "strictly before today": the boundary check goes blind.
    handle = await scaffold(tmp_path, "crm")
    _edit(
        handle.path / "verifiers" / "past_due_deals.py",
        'o["expectedCloseDate"] <= today(initial)',
        'o["expectedCloseDate"] < today(initial)',
    )
    report = await check_environment(handle, GATES["crm"])
    assert not report.ok
    assert "DRIFT TASK-010 solver.result.json" in report.lines
    assert "DRIFT TASK-010 noop.result.json" in report.lines
    assert {name.split(".")[0] for name in report.drifted} == {"TASK-010"}


async def test_a_changed_erp_seed_number_drifts(tmp_path: Path) -> None:
    # One figure of the erp seed (Marketing's prior spend): the solver still passes, reading
    # the budget through the tools, so only the byte comparison can notice the world changed.
    handle = await scaffold(tmp_path, "erp")
    _edit(handle.path / "data" / "budgets.json", '"priorSpend": 27450', '"priorSpend": 27451')
    report = await check_environment(handle, GATES["erp"])
    assert not report.ok
    assert report.failed == []
    assert "DRIFT TASK-005 solver.result.json" in report.lines
    assert rerecord_command("erp") in report.failure_message()


async def test_a_changed_figure_no_task_reads_drifts_the_seed_digest(tmp_path: Path) -> None:
    # PRD-001's standard cost takes part in no task: every result and state diff stays the same,
    # and only the seed's digest names the collection that changed.
    handle = await scaffold(tmp_path, "erp")
    products = handle.path / "data" / "products.json"
    _edit(products, '"standardCost": 118,', '"standardCost": 119,')
    report = await check_environment(handle, GATES["erp"])
    assert not report.ok
    assert report.drifted == ["seed.world-digest.json"]
    drift = report.lines.index("DRIFT seed world-digest.json")
    assert any('"products"' in line for line in report.lines[drift + 1 :])
    assert rerecord_command("erp") in report.failure_message()


async def test_a_changed_erp_verifier_comparison_fails(tmp_path: Path) -> None:
    # "more than 30 days overdue" becomes "30 or more": the boundary invoice now counts, the
    # solver's run no longer passes, and the artifacts drift.
    handle = await scaffold(tmp_path, "erp")
    _edit(
        handle.path / "verifiers" / "collections.py",
        "days_overdue(initial, i) > 30]",
        "days_overdue(initial, i) >= 30]",
    )
    report = await check_environment(handle, GATES["erp"])
    assert not report.ok
    assert "DRIFT TASK-011 solver.result.json" in report.lines
    assert [f.split(":")[0] for f in report.failed] == ["TASK-011"]
    assert {name.split(".")[0] for name in report.drifted} == {"TASK-011"}


async def test_a_new_task_without_baseline_fails_as_missing(tmp_path: Path) -> None:
    handle = await scaffold(tmp_path, "crm")
    task = json.loads((handle.path / "tasks" / "TASK-011.json").read_text(encoding="utf-8"))
    task["id"] = "TASK-099"
    (handle.path / "tasks" / "TASK-099.json").write_text(json.dumps(task), encoding="utf-8")
    report = await check_environment(handle, GATES["crm"])
    assert not report.ok
    assert sorted(report.missing) == [
        f"TASK-099.{agent}.{artifact}.json"
        for agent in ("noop", "solver")
        for artifact in ("result", "state-diff")
    ]
    missing = "MISSING TASK-099 solver.result.json: no baseline; re-record with "
    assert missing + rerecord_command("crm") in report.lines


async def test_broken_invariants_fail_even_when_re_recording(tmp_path: Path) -> None:
    # A "solver" that does nothing: re-recording must not turn its failures into a baseline.
    spec = dataclasses.replace(GATES["crm"], solver=GATES["crm"].noop)
    (tmp_path / "project").mkdir()
    handle = await scaffold(tmp_path / "project", "crm")
    report = await check_environment(handle, spec, update=True, baselines=tmp_path / "baselines")
    assert not report.ok
    assert len(report.failed) == report.tasks
    assert all("solver must pass with reward 1.00" in f for f in report.failed)
    assert report.final_line.endswith(f"{report.tasks} invariant(s) broken")


def _artifact(task: str, kind: str, text: str) -> Artifact:
    return Artifact(task, kind, text.encode())


def _report(artifacts: list[Artifact], baselines: Path, *, update: bool = False) -> GateReport:
    comparison = compare_baselines(artifacts, baselines, update=update)
    tasks = sorted({a.task_id for a in artifacts})
    return build_report(
        "crm",
        update=update,
        task_ids=tasks,
        artifacts=artifacts,
        comparison=comparison,
        summaries=dict.fromkeys(tasks, "fine"),
        failures={},
    )


def test_update_records_then_compare_matches_and_reports_drift(tmp_path: Path) -> None:
    first = [_artifact("T-1", "solver.result.json", '{\n  "reward": 1.0\n}\n')]
    recorded = _report(first, tmp_path, update=True)
    assert recorded.ok and recorded.updated == ["T-1.solver.result.json"]
    assert recorded.final_line == "re-recorded 1 of 1 crm artifact(s) for 1 tasks"
    assert (tmp_path / "T-1.solver.result.json").read_text() == '{\n  "reward": 1.0\n}\n'

    again = _report(first, tmp_path)
    assert again.ok and again.lines == ["ok T-1  fine"]
    assert again.final_line == "all 1 crm tasks match baseline"

    drifted = _report([_artifact("T-1", "solver.result.json", '{\n  "reward": 0.5\n}\n')], tmp_path)
    assert not drifted.ok and drifted.drifted == ["T-1.solver.result.json"]
    assert drifted.lines[0] == "DRIFT T-1 solver.result.json"
    assert '    -  "reward": 1.0' in drifted.lines
    assert '    +  "reward": 0.5' in drifted.lines
    assert drifted.final_line.startswith("crm: 1 artifact(s) drifted from baseline")


def test_stale_baselines_fail_and_are_removed_by_update(tmp_path: Path) -> None:
    (tmp_path / "T-9.noop.result.json").write_text("{}\n")
    current = [_artifact("T-1", "noop.result.json", "{}\n")]
    (tmp_path / "T-1.noop.result.json").write_text("{}\n")
    stale = _report(current, tmp_path)
    assert not stale.ok and stale.stale == ["T-9.noop.result.json"]
    assert stale.lines[-1].startswith("STALE T-9.noop.result.json: baseline for no current task")
    cleaned = _report(current, tmp_path, update=True)
    assert cleaned.ok and not (tmp_path / "T-9.noop.result.json").exists()


def test_module_entry_point_prints_ok_lines_and_a_final_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    task_ids = sorted(p.stem for p in (template_dir("crm") / "tasks").glob("*.json"))
    n = len(task_ids)
    assert main(["crm"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"== crm gate ({n} tasks, {4 * n + 3 + 1} artifacts)"
    assert lines[-1] == f"all {n} crm tasks match baseline"
    assert [line.split()[:2] for line in lines[1:-1]] == [["ok", t] for t in [*task_ids, "seed"]]


def test_module_entry_point_rejects_an_unknown_template() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["hr"])
    assert exc.value.code == 2
