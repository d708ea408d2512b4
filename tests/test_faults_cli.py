"""``--faults SPEC [--fault-seed N]`` and ``eval --baseline`` on the CLI (DESIGN section 14).

``run`` and ``eval`` inject the faults, a malformed plan is one ``faults_invalid`` line, the
robustness report compares the plan with and without faults, and an MCP client meets the same
faults as ``run`` for the same calls (byte-identical ``result.json``), and so does an OpenEnv
client of ``serve --protocol openenv``.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from silo_async.eval import read_summary

from .cli_support import cli
from .harness_support import serving
from .peers import require_extra
from .serve_support import ENV_NAME, child_env, make_project, serve_command, silo_cli

require_extra("mcp")
require_extra("harness-servers")

from mcp import Client, StdioServerParameters  # noqa: E402 - after the check
from mcp.client.stdio import stdio_client  # noqa: E402 - after the check
from websockets.asyncio.client import connect  # noqa: E402 - after the check

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")

#: The calls both drivers make; with this plan and seed the first two calls are struck.
CALLS = [
    ("list_users", {}),
    ("list_users", {}),
    ("get_user", {"userId": "USR-001"}),
    ("list_users", {}),
]
SCRIPTED = f"""
from silo_async.testing import ScriptedAgent
agent = ScriptedAgent({CALLS!r}, answer="done")
"""


@pytest.fixture
def crm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


def test_run_injects_the_faults_and_reports_them(crm: Path) -> None:
    done = cli(
        "run", "--env", "crm", "--task", "TASK-001", "--agent", SOLVER, "--runs", "4",
        "--faults", "unavailable@0.3", "--fault-seed", "2", "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    rollouts = json.loads(done.stdout)["rollouts"]
    assert sum(r["injectedFaults"] for r in rollouts) > 0  # the solver retried them all
    assert all(r["recoveredFaults"] == r["injectedFaults"] and r["passed"] for r in rollouts)
    text = cli(
        "run", "--env", "crm", "--task", "TASK-001", "--agent", f"{SOLVER}:no_retries",
        "--faults", "search_*:unavailable@1",
    )  # fmt: skip
    assert text.exit_code == 1  # the agent gave up: failed, but the reward is valid evidence
    assert "Injected     1 (0 recovered" in text.stdout and "not valid" not in text.stdout


def test_a_malformed_plan_is_one_coded_line(crm: Path) -> None:
    bad = cli("run", "--env", "crm", "--task", "TASK-001", "--faults", "unavailable@0.1,x@2")
    assert bad.exit_code == 1
    assert bad.stderr == (
        "error: faults_invalid: fault entry 2 \"x@2\": unknown kind 'x'; the kinds are "
        "latency, unavailable, rate_limited, timeout.\n"
    )
    Path("deep.json").write_text('{"faults": ' + "[" * 100_000 + "]" * 100_000 + "}")
    for command in ("run", "serve"):  # a RecursionError was internal_error
        deep = cli(command, "--env", "crm", "--task", "TASK-001", "--faults", "deep.json")
        assert deep.exit_code == 1
        assert deep.stderr == (
            'error: faults_invalid: fault file "deep.json": it nests too deeply to be a fault '
            "plan.\n"
        )
    seedless = cli("run", "--env", "crm", "--task", "TASK-001", "--fault-seed", "3")
    assert seedless.exit_code == 2 and "--fault-seed needs --faults" in seedless.stderr
    lone = cli("eval", "--env", "crm", "--tasks", "TASK-001", "--baseline")
    assert lone.exit_code == 2 and "--baseline compares" in lone.stderr


def test_eval_baseline_compares_the_plan_with_and_without_faults(crm: Path) -> None:
    Path("faults.json").write_text(json.dumps({"faults": [{"kind": "unavailable", "p": 0.2}]}))
    done = cli(
        "eval", "--env", "crm", "--tasks", "TASK-001,TASK-002", "--runs", "5",
        "--agent", f"solver={SOLVER}", "--agent", f"no_retries={SOLVER}:no_retries",
        "--faults", "faults.json", "--fault-seed", "1", "--baseline", "--out", "ev", "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["baseline"] == read_summary(crm / "ev")["baseline"]
    base = {a["agent"]: a for a in data["baseline"]["agents"]}
    assert (data["baseline"]["faults"], data["baseline"]["faultSeed"]) == ("unavailable@0.2", 1)
    solver, quitter = base["solver"], base["no_retries"]
    assert solver["withoutFaults"]["passRate"] == solver["withFaults"]["passRate"] == 1.0
    assert solver["drop"] == 0.0 and solver["recoveredFaults"] == solver["injectedFaults"] > 0
    assert quitter["withoutFaults"]["passRate"] == 1.0 and quitter["drop"] > 0
    assert quitter["recoveredFaults"] == 0 and quitter["recoveryRate"] == 0.0
    # the eval's own statistics are the faulted rollouts'; the baseline ones are marked
    assert data["planned"] == data["finished"] == 20
    own = {a["agent"]: a for a in data["agents"]}
    assert own["no_retries"]["passRate"] == quitter["withFaults"]["passRate"]
    lines = [json.loads(x) for x in (crm / "ev/runs/index.jsonl").read_text().splitlines()]
    marks = [x.get("baseline", False) for x in lines]
    assert marks == [False] * 20 + [True] * 20
    assert all(x["injectedFaults"] == 0 for x in lines[20:])
    text = cli(
        "eval", "--env", "crm", "--tasks", "TASK-001", "--agent", f"{SOLVER}:no_retries",
        "--faults", "unavailable@0.5", "--baseline", "--out", "ev2",
    )  # fmt: skip
    assert "Robustness (--faults unavailable@0.5, seed 0; without vs with)" in text.stdout
    assert "Faults unavailable@0.5 (seed 0) · baseline without faults: 1 rollouts" in text.stdout
    md = (crm / "ev2" / "summary.md").read_text()
    assert "## Robustness (pass rate without and with faults)" in md


@pytest.mark.anyio
async def test_an_mcp_client_meets_the_same_faults_as_run(tmp_path: Path) -> None:
    project = make_project(tmp_path / "project")
    agent = project / "scripted.py"
    agent.write_text(SCRIPTED)
    plan = ("--faults", "list_users:unavailable@0.5,latency=1ms@0.5", "--fault-seed", "4")
    script = shlex.join(serve_command("--task", "TASK-001", *plan))
    params = StdioServerParameters(
        command="sh", args=["-c", script], cwd=str(project), env=child_env()
    )
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            answers = [await client.call_tool(name, args) for name, args in CALLS]
            await client.call_tool("submit", {"answer": "done"})
    assert any(a.is_error for a in answers)  # the plan struck
    runs = project / ".silo" / "runs"
    (served,) = list(runs.iterdir())
    shutil.move(served, tmp_path / "served")
    ran = cli_in(
        project, "run", "--env", ENV_NAME, "--task", "TASK-001", "--agent", str(agent), *plan
    )
    (direct,) = list(runs.iterdir())
    for name in ("result.json", "state-diff.json"):
        assert (tmp_path / "served" / name).read_bytes() == (direct / name).read_bytes(), ran


def cli_in(project: Path, *args: str) -> str:
    done = silo_cli(*args, cwd=project)
    return done.stdout + done.stderr


def test_an_openenv_client_meets_the_same_faults_as_run(tmp_path: Path) -> None:
    """``serve --protocol openenv`` (a harness server, DESIGN §16) takes ``--faults`` too."""
    project = tmp_path / "project"
    project.mkdir()
    assert silo_cli("init", "crm", "--template", "crm", cwd=project).returncode == 0
    agent = project / "scripted.py"
    agent.write_text(SCRIPTED)
    plan = ("--faults", "list_users:unavailable@0.5,latency=1ms@0.5", "--fault-seed", "4")

    async def play(url: str) -> list[bool]:
        async with connect(url.replace("http", "ws", 1) + "/ws") as ws:

            async def step(action: dict[str, Any]) -> dict[str, Any]:
                await ws.send(json.dumps({"type": "step", "data": action}))
                answer: dict[str, Any] = json.loads(await ws.recv())["data"]
                return answer

            await ws.send(json.dumps({"type": "reset", "data": {"task": "TASK-001"}}))
            assert json.loads(await ws.recv())["type"] == "observation"
            errors = []
            for name, args in CALLS:
                seen = await step({"type": "call_tool", "tool_name": name, "arguments": args})
                errors.append(bool(seen["observation"]["result"]["is_error"]))
            done = await step(
                {"type": "call_tool", "tool_name": "submit", "arguments": {"answer": "done"}}
            )
            assert done["done"] is True
            return errors

    runs = project / ".silo" / "runs"
    with serving(project, "openenv", *plan) as info:
        errors = anyio.run(play, info["url"])
    assert any(errors)  # the plan struck
    (served,) = list(runs.iterdir())
    shutil.move(served, tmp_path / "served")
    ran = cli_in(project, "run", "--env", "crm", "--task", "TASK-001", "--agent", str(agent), *plan)
    (direct,) = list(runs.iterdir())
    for name in ("result.json", "state-diff.json"):
        assert (tmp_path / "served" / name).read_bytes() == (direct / name).read_bytes(), ran
