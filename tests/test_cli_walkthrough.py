"""The README "CLI" walkthrough, step by step, from an empty directory to a passing run.

Keep this file and the README in step: every command and every file body below is what the
README shows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from silo_async.cli._app import app

TOOL = '''\
"""Tool block_customer: block one customer."""

from __future__ import annotations

from typing import Any

import silo_async as silo

from ..state import State


@silo.tool(
    name="block_customer",
    description="Block a customer by id; returns the updated customer.",
    input_schema={
        "type": "object",
        "properties": {"customerId": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["customerId", "reason"],
        "additionalProperties": False,
    },
)
def block_customer(state: State, input: dict[str, Any]) -> Any:
    """Set the customer's status to blocked and record why."""
    customer = state["customers"].get(input["customerId"])
    if customer is None:
        raise silo.tool_error("not_found", f'Customer "{input["customerId"]}" was not found.')
    if customer["status"] == "blocked":
        raise silo.tool_error("invalid_state", f'Customer "{customer["id"]}" is already blocked.')
    customer["status"] = "blocked"
    customer["statusReason"] = input["reason"].strip()
    return customer
'''

VERIFIER = '''\
"""Verifier VER-001: grades task TASK-001 by inspecting the world."""

from __future__ import annotations

import silo_async as silo

from ..state import State


@silo.verifier(id="VER-001", task_id="TASK-001", name="CUS-001 is blocked")
def ver_001(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """CUS-001 is blocked, with a reason, and no customer appeared or vanished."""
    customer = final["customers"]["CUS-001"]
    same_ids = final["customers"].keys() == initial["customers"].keys()
    return [
        silo.check("CUS-001 is blocked", customer["status"] == "blocked"),
        silo.optional("A block reason was recorded", bool(customer["statusReason"])),
        silo.optional("No customer was added or removed", same_ids),
    ]
'''

AGENT = """\
import re

import silo_async as silo


async def agent(ctx: silo.AgentContext) -> str:
    customer_id = re.search(r"CUS-\\d+", ctx.task).group(0)
    result = await ctx.call_tool(
        "block_customer", {"customerId": customer_id, "reason": "Fraud review"}
    )
    return "failed" if result.is_error else f"Blocked {customer_id}."
"""

CUSTOMERS = (
    '{"CUS-001": {"id": "CUS-001", "name": "Acme Industrial", '
    '"status": "active", "statusReason": null}}'
)


def silo_async(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args))
    assert result.stderr == "", result.stderr
    return result


def test_readme_walkthrough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    env = tmp_path / ".silo" / "environments" / "demo"

    out = silo_async("init", "demo")
    assert out.stdout == f'Created environment "demo" from Blank at {env}\n'

    out = silo_async("data", "add", "customers", "--env", "demo", "--data", CUSTOMERS)
    assert out.stdout == "Created data/customers.json\n"

    out = silo_async("tool", "add", "block_customer", "--env", "demo")
    assert out.stdout.splitlines()[0] == "Created tools/block_customer.py"

    out = silo_async(
        "task", "add", "TASK-001", "--env", "demo",
        "--title", "Block a customer",
        "--instruction", "Customer CUS-001 failed a fraud review. Block them.",
        "--verifier", "VER-001",
        "--difficulty", "easy",
    )  # fmt: skip
    assert out.stdout == "Created tasks/TASK-001.json\n"

    out = silo_async("verifier", "add", "VER-001", "--env", "demo", "--task", "TASK-001")
    assert out.stdout.splitlines()[0] == "Created verifiers/ver_001.py"

    # The stubs fail on purpose until they are implemented.
    out = silo_async("env", "validate", "--env", "demo")
    assert out.exit_code == 1
    assert out.stdout.splitlines()[-1] == "FAILED\tdemo\tdata=1 tasks=1 tools=1 verifiers=1"

    (env / "tools" / "block_customer.py").write_text(TOOL, encoding="utf-8")
    (env / "verifiers" / "ver_001.py").write_text(VERIFIER, encoding="utf-8")
    out = silo_async("env", "validate", "--env", "demo")
    assert out.exit_code == 0, out.stdout
    assert out.stdout == "OK\tdemo\tdata=1 tasks=1 tools=1 verifiers=1\n"

    (tmp_path / "silo_agent.py").write_text(AGENT, encoding="utf-8")
    out = silo_async("run", "--env", "demo", "--task", "TASK-001")
    assert out.exit_code == 0, out.stdout
    lines = out.stdout.splitlines()
    assert lines[:3] == [
        "Task        TASK-001 — Block a customer",
        "Result      PASS",
        "Reward      1.00",
    ]
    assert "Checks      3 / 3" in lines
    run_dir = tmp_path / lines[-1].split()[-1]
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "result.json",
        "run.json",
        "state-diff.json",
        "trace.jsonl",
    ]
    assert json.loads((run_dir / "result.json").read_text())["reward"] == 1.0

    out = silo_async("run", "--env", "demo", "--task", "TASK-001", "--runs", "5")
    assert out.exit_code == 0
    assert "Passed       5 / 5" in out.stdout
