"""Validation of conversational tasks (DESIGN §13): ``check_environment`` and ``env validate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.testing import check_environment

from .chat_world import ENV, ORDER_USER, SYNC_USER, TASKS, solver, write_project
from .cli_support import cli

pytestmark = pytest.mark.anyio


def _with(task: silo.Task) -> silo.Environment:
    """The bakery with ``task`` in place of the task of the same id."""
    tasks = [task if t.id == task.id else t for t in TASKS]
    return silo.Environment("bakery", ENV.create_state, ENV.tools, ENV.verifiers, tasks)


def _sync(user: dict[str, Any]) -> silo.Task:
    return silo.Task("CHAT-SYNC", "Fix the sync", "Help them order 1 croissant.", "VER-SYNC",
                     user=user)  # fmt: skip


def _codes(report: Any) -> list[str]:
    return [f.code for f in report.findings]


async def test_the_solver_passes_every_conversational_task_with_the_scripted_user() -> None:
    report = await check_environment(ENV, solver=solver)
    assert report.ok and report.findings == (), report.to_dict()


async def test_a_rule_that_ends_before_a_required_write_is_named_by_task_and_rule() -> None:
    early = {**SYNC_USER, "script": [{**SYNC_USER["script"][0], "end": True}]}
    report = await check_environment(_with(_sync(early)), solver=solver)
    assert _codes(report) == ["user_ends_early"]
    message = report.findings[0].message
    assert message.startswith('Task "CHAT-SYNC": user rule script[0] ends the conversation at turn')
    assert '"place_order" (call 1)' in message


async def test_an_ending_before_a_write_the_task_does_not_need_is_fine() -> None:
    async def chatty(ctx: silo.AgentContext) -> Any:
        result = await solver(ctx)
        if "won't go through" in ctx.task:  # one more write after the end: not required
            await ctx.call_tool("place_order", {"customerId": "CUS-1", "quantity": 2})
        return result

    report = await check_environment(ENV, solver=chatty)
    assert report.ok, report.to_dict()


async def test_otherwise_that_ends_is_a_rule_too() -> None:
    ends = {**SYNC_USER, "script": [], "otherwise": {"say": "Bye.", "end": True},
            "tools": ["set_offline_mode"]}  # fmt: skip

    async def fixer(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("message_user", {"text": "Hello!"})
        await ctx.call_tool("place_order", {"customerId": "CUS-2", "quantity": 1})
        return "done"

    @silo.verifier(id="VER-SYNC", task_id="CHAT-SYNC")
    def ordered(final: Any, initial: Any) -> list[silo.Check]:
        return [silo.check("ordered", len(final["orders"]) > len(initial["orders"]))]

    env = silo.Environment(
        "bakery",
        lambda: {**ENV.create_state(), "app": {"owner": "CUS-2", "offline": False}},
        ENV.tools,
        [ordered],
        [_sync(ends)],
    )
    report = await check_environment(env, solver=fixer)
    assert _codes(report) == ["user_ends_early"]
    assert "user rule otherwise ends the conversation at turn 1" in report.findings[0].message


async def test_an_empty_reply_and_an_unknown_user_tool_are_errors() -> None:
    user = {
        **SYNC_USER,
        "script": [{"when": ["offline"], "say": "  "}, *SYNC_USER["script"]],
        "otherwise": {"do": [{"tool": "set_offline_mode", "input": {"on": False}}]},
        "tools": ["set_offline_mode", "restart_phone"],
    }
    report = await check_environment(_with(_sync(user)))
    assert _codes(report) == ["user_empty_reply", "user_empty_reply", "user_tool_unknown"]
    assert [f.message.split(":")[0] for f in report.findings] == ['Task "CHAT-SYNC"'] * 3
    assert "user rule script[0] answers with an empty message" in report.findings[0].message
    assert "user rule otherwise answers" in report.findings[1].message
    assert '"restart_phone"' in report.findings[2].message


async def test_a_task_an_agent_that_never_speaks_passes_is_an_error() -> None:
    @silo.verifier(id="VER-ORDER", task_id="CHAT-ORDER")
    def lenient(final: Any, initial: Any) -> list[silo.Check]:
        return [silo.check("Ada exists", "CUS-1" in final["customers"])]

    task = silo.Task("CHAT-ORDER", "t", "Serve the customer.", "VER-ORDER", user=ORDER_USER)
    env = silo.Environment("bakery", ENV.create_state, ENV.tools, [lenient], [task])
    report = await check_environment(env)
    assert _codes(report) == ["verifier_passes_noop"]
    assert "never speaks to the user" in report.findings[0].message


async def test_the_solver_failing_names_the_scripted_user() -> None:
    async def silent(ctx: silo.AgentContext) -> str:
        return ""

    report = await check_environment(ENV, solver=silent)
    assert _codes(report) == ["solver_failed"] * 3
    assert "not solved by the solver with the scripted user" in report.findings[0].message


# -- on disk ---------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_project(tmp_path)


def test_env_validate_with_and_without_a_solver(project: Path) -> None:
    plain = cli("env", "validate", "--env", "bakery")
    assert plain.exit_code == 0, plain.output
    assert plain.stdout.splitlines()[-1] == "OK\tbakery\tdata=0 tasks=3 tools=5 verifiers=3"
    solved = cli("env", "validate", "--env", "bakery", "--solver", f"{project.name}:solver")
    assert solved.exit_code == 0, solved.output
    task_file = project.parent / ".silo/environments/bakery/tasks/CHAT-SYNC.json"
    data = json.loads(task_file.read_text())
    data["user"]["script"][0]["end"] = True
    data["user"]["otherwise"]["say"] = ""
    task_file.write_text(json.dumps(data))
    broken = cli(
        "env", "validate", "--env", "bakery", "--solver", f"{project.name}:solver", "--json"
    )
    assert broken.exit_code == 1
    found = [f["code"] for f in json.loads(broken.stdout)["findings"] if f["level"] == "error"]
    assert found == ["user_empty_reply", "user_ends_early"]


def test_env_validate_names_a_malformed_user_field(project: Path) -> None:
    task_file = project.parent / ".silo/environments/bakery/tasks/CHAT-ORDER.json"
    data = json.loads(task_file.read_text())
    data["user"]["script"][1]["end"] = "yes"
    task_file.write_text(json.dumps(data))
    result = cli("env", "validate", "--env", "bakery", "--json")
    assert result.exit_code == 1
    finding = json.loads(result.stdout)["findings"][0]
    assert finding["code"] == "task_invalid"
    assert '"user.script[1].end"' in finding["message"]
    assert "tasks/CHAT-ORDER.json" in finding["message"]


async def test_the_project_sdk_validates_with_a_solver(project: Path) -> None:
    env = await (await silo.Project.open(project.parent)).environments.open("bakery")
    report = await env.validate(solver=solver)
    assert report.ok, report.to_dict()
