"""silo_async.testing: ScriptedAgent through the real runner, and check_environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.project import Project, load_environment
from silo_async.testing import ScriptedAgent, ScriptedCall, check_environment

from .worlds import ENV, TASKS, block_customer, blocked, create_state, get_customer

pytestmark = pytest.mark.anyio

BLOCK: list[ScriptedCall | tuple[str, Any]] = [
    ("get_customer", {"customerId": "CUS-001"}),
    ScriptedCall("block_customer", {"customerId": "CUS-001"}),
]


async def test_scripted_agent_makes_the_calls_in_order_and_answers() -> None:
    result = await silo.run(ENV, "TASK-BLOCK", ScriptedAgent(BLOCK, answer="blocked"))
    assert result.passed
    assert result.agent_output == "blocked"
    assert [e["tool"] for e in result.trace if e["type"] == "tool_call"] == [
        "get_customer",
        "block_customer",
    ]


async def test_rejected_calls_come_back_and_the_answer_can_use_them() -> None:
    seen: list[tuple[int, str, bool]] = []
    agent = ScriptedAgent(
        ["explode", ("get_customer", {"customerId": "CUS-404"}), *BLOCK],
        answer=lambda results: f"{sum(r.is_error for r in results)} rejected",
        on_result=lambda i, call, result: seen.append((i, call.tool, result.is_error)),
    )
    result = await silo.run(ENV, "TASK-BLOCK", agent)
    assert result.agent_output == "2 rejected"
    assert result.passed
    assert seen == [
        (0, "explode", True),
        (1, "get_customer", True),
        (2, "get_customer", False),
        (3, "block_customer", False),
    ]


async def test_stop_on_error_stops_at_the_first_rejection() -> None:
    agent = ScriptedAgent([("get_customer", {"customerId": "X"}), *BLOCK], stop_on_error=True)
    result = await silo.run(ENV, "TASK-BLOCK", agent)
    assert result.tool_calls == 1
    assert not result.passed
    assert result.agent_output is None


async def test_one_instance_runs_many_rollouts_with_private_inputs() -> None:
    args = {"customerId": "CUS-001"}
    agent = ScriptedAgent([("block_customer", args)], answer="ok")
    results = await silo.run_many(ENV, ["TASK-BLOCK"], agent, runs=5)
    assert all(r.passed for r in results)
    assert args == {"customerId": "CUS-001"}
    assert repr(agent) == "ScriptedAgent(1 calls)"


def _env(**overrides: Any) -> silo.Environment:
    fields: dict[str, Any] = {
        "name": "shop",
        "create_state": create_state,
        "tools": [get_customer, block_customer],
        "verifiers": [blocked],
        "tasks": [TASKS[0]],
    }
    return silo.Environment(**{**fields, **overrides})


async def test_a_sound_environment_is_ok_and_counted() -> None:
    report = await check_environment(_env(), solver=ScriptedAgent(BLOCK))
    assert report.ok, report.findings
    assert report.findings == ()
    assert report.counts == {"data": 0, "tasks": 1, "tools": 2, "verifiers": 1}


async def test_a_solver_that_fails_is_an_error() -> None:
    report = await check_environment(_env(), solver=ScriptedAgent(BLOCK[:1]))
    assert [(f.level, f.code) for f in report.findings] == [("error", "solver_failed")]
    assert "TASK-BLOCK" in report.findings[0].message
    assert "CUS-001 is blocked" in report.findings[0].message


async def test_shared_worlds_and_noop_passes_are_errors() -> None:
    shared = create_state()

    @silo.verifier(id="VER-BLOCK", task_id="TASK-BLOCK")
    def always(final: Any, initial: Any) -> list[silo.Check]:
        return [silo.check("anything", True)]

    report = await check_environment(_env(create_state=lambda: shared, verifiers=[always]))
    assert [f.code for f in report.errors] == ["create_state_shared", "verifier_passes_noop"]


async def test_unresolved_and_mismatched_links() -> None:
    task = silo.Task("TASK-X", "X", "Do X.", "VER-MISSING")
    report = await check_environment(_env(tasks=[TASKS[0], task]))
    assert [f.code for f in report.findings] == ["task_verifier_unresolved"]
    lone = await check_environment(_env(tasks=[task], verifiers=[blocked]))
    assert [f.code for f in lone.findings] == ["verifier_orphan", "task_verifier_unresolved"]


async def test_same_report_as_env_validate_for_a_template(tmp_path: Path) -> None:
    project = await Project.open(tmp_path)
    handle = await project.environments.create("crm", template="crm")
    on_disk = await handle.validate()
    in_code = await check_environment(load_environment("crm", tmp_path))
    assert on_disk.ok and in_code.ok
    assert in_code.findings == on_disk.findings
    assert {**in_code.counts, "data": on_disk.counts["data"]} == on_disk.counts
