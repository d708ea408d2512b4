"""How many event loops a command starts: none to author, exactly one to run, eval or validate.

Authoring calls the synchronous store directly; a command that runs rollouts starts one loop
for all of its work (loading the environment happens before it, on no loop at all).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from .cli_support import cli
from .test_cli_walkthrough import TOOL, VERIFIER

AGENT = """\
async def agent(ctx):
    await ctx.call_tool("block_customer", {"customerId": "CUS-001", "reason": "Fraud"})
    return "done"
"""
DATA = '{"CUS-001": {"id": "CUS-001", "status": "active", "statusReason": null}}'


@pytest.fixture
def loops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The event loops started (one entry per ``anyio.run``), in order."""
    started: list[str] = []
    real_run = anyio.run

    def counting_run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        started.append(getattr(fn, "__qualname__", repr(fn)))
        return real_run(fn, *args, **kwargs)

    monkeypatch.setattr(anyio, "run", counting_run)
    return started


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path


def ok(*args: str) -> str:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_authoring_commands_start_no_event_loop(project: Path, loops: list[str]) -> None:
    env = ("--env", "demo")
    ok("init", "demo")
    ok("env", "list")
    ok("data", "add", "customers", *env, "--data", DATA)
    ok("data", "update", "customers", *env, "--data", DATA)
    ok("data", "list", *env)
    ok("data", "show", "customers", *env)
    ok("data", "add", "spare", *env, "--data", "[]")
    ok("data", "remove", "spare", *env)
    ok("tool", "add", "block_customer", *env)
    ok("tool", "list", *env)
    ok("verifier", "add", "VER-001", *env, "--task", "TASK-001")
    ok("verifier", "list", *env)
    task = ("--title", "Block", "--instruction", "Block CUS-001.", "--verifier", "VER-001")
    ok("task", "add", "TASK-001", *env, *task)
    ok("task", "update", "TASK-001", *env, "--difficulty", "easy")
    ok("task", "list", *env)
    ok("task", "show", "TASK-001", *env)
    ok("task", "add", "TASK-002", *env, *task)
    ok("task", "remove", "TASK-002", *env)
    assert loops == []


def test_run_eval_and_validate_start_exactly_one_loop(project: Path, loops: list[str]) -> None:
    ok("init", "demo")
    base = project / ".silo" / "environments" / "demo"
    ok("data", "add", "customers", "--env", "demo", "--data", DATA)
    ok("tool", "add", "block_customer", "--env", "demo")
    ok("verifier", "add", "VER-001", "--env", "demo", "--task", "TASK-001")
    task = ("--title", "Block", "--instruction", "Block CUS-001.", "--verifier", "VER-001")
    ok("task", "add", "TASK-001", "--env", "demo", *task)
    (base / "tools" / "block_customer.py").write_text(TOOL, encoding="utf-8")
    (base / "verifiers" / "ver_001.py").write_text(VERIFIER, encoding="utf-8")
    (project / "silo_agent.py").write_text(AGENT, encoding="utf-8")
    assert loops == []

    assert json.loads(ok("env", "validate", "--env", "demo", "--json"))["ok"]
    assert len(loops) == 1
    assert json.loads(ok("run", "--env", "demo", "--task", "TASK-001", "--json"))["passed"]
    assert len(loops) == 2
    ok("run", "--env", "demo", "--task", "TASK-001", "--runs", "3")
    assert len(loops) == 3
    ok("eval", "--env", "demo", "--agent", "silo_agent.py", "--json")
    assert len(loops) == 4
