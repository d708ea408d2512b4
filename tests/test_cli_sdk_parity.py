"""The CLI and the SDK are two faces of one store: the same steps write the same bytes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

import silo_async as silo
from silo_async.cli._app import app

from .test_cli_walkthrough import TOOL, VERIFIER

DATA = '{"CUS-001": {"id": "CUS-001", "name": "Acme", "status": "active", "statusReason": null}}'
TASK = {
    "id": "TASK-001",
    "title": "Block a customer",
    "instruction": "Customer CUS-001 failed a fraud review. Block them.",
    "verifierId": "VER-001",
    "difficulty": "easy",
}


async def agent(ctx: silo.AgentContext) -> str:
    result = await ctx.call_tool("block_customer", {"customerId": "CUS-001", "reason": "Fraud"})
    return "failed" if result.is_error else "Blocked CUS-001."


def cli(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output


def author_with_cli(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    cli("init", "demo")
    cli("data", "add", "customers", "--env", "demo", "--data", DATA)
    cli("tool", "add", "block_customer", "--env", "demo")
    cli(
        "task", "add", "TASK-001", "--env", "demo", "--title", TASK["title"],
        "--instruction", TASK["instruction"], "--verifier", "VER-001", "--difficulty", "easy",
    )  # fmt: skip
    cli("verifier", "add", "VER-001", "--env", "demo", "--task", "TASK-001")


async def author_with_sdk(root: Path) -> silo.project.EnvironmentHandle:
    project = await silo.Project.open(root)
    env = await project.environments.create("demo")
    await env.data.add("customers", json.loads(DATA))
    await env.tools.scaffold("block_customer")
    await env.tasks.add(TASK)
    await env.verifiers.scaffold("VER-001", "TASK-001")
    return env


def tree(root: Path) -> dict[str, bytes]:
    base = root / ".silo" / "environments" / "demo"
    return {
        str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()
    }


def implement(root: Path) -> None:
    base = root / ".silo" / "environments" / "demo"
    (base / "tools" / "block_customer.py").write_text(TOOL, encoding="utf-8")
    (base / "verifiers" / "ver_001.py").write_text(VERIFIER, encoding="utf-8")


def only_run(root: Path) -> Path:
    [run_dir] = list((root / ".silo" / "runs").iterdir())
    return run_dir


def test_cli_and_sdk_write_identical_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    by_cli, by_sdk = tmp_path / "cli", tmp_path / "sdk"
    by_cli.mkdir()
    by_sdk.mkdir()
    author_with_cli(by_cli, monkeypatch)
    handle = anyio.run(author_with_sdk, by_sdk)
    assert tree(by_cli) == tree(by_sdk)
    assert "tools/block_customer.py" in tree(by_cli) and "tasks/TASK-001.json" in tree(by_cli)

    implement(by_cli)
    implement(by_sdk)
    (by_cli / "silo_agent.py").write_text(
        "from tests.test_cli_sdk_parity import agent as agent\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent))
    cli("run", "--env", "demo", "--task", "TASK-001")

    async def sdk_run() -> Any:
        return await handle.run("TASK-001", agent)

    assert anyio.run(sdk_run).passed
    cli_run, sdk_run_dir = only_run(by_cli), only_run(by_sdk)
    for name in ("result.json", "state-diff.json"):
        assert (cli_run / name).read_bytes() == (sdk_run_dir / name).read_bytes()
