"""``silo-async run``: reports, --json, --runs N, exit codes, limits, flag and agent errors."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import Result

from .cli_support import cli

TOOL = """
import silo_async as silo


@silo.tool(
    name="block_customer",
    description="Block a customer by id.",
    input_schema={
        "type": "object",
        "properties": {"customerId": {"type": "string"}},
        "required": ["customerId"],
        "additionalProperties": False,
    },
)
def block_customer(state, input):
    customer = state["customers"].get(input["customerId"])
    if customer is None:
        raise silo.tool_error("not_found", f'Customer "{input["customerId"]}" was not found.')
    customer["status"] = "blocked"
    return customer
"""

VERIFIER = """
import silo_async as silo


@silo.verifier(id="VER-001", task_id="TASK-001", name="CUS-001 is blocked")
def ver_001(final, initial, ctx):
    return [
        silo.check("CUS-001 is blocked", final["customers"]["CUS-001"]["status"] == "blocked"),
        silo.optional("An answer was given", bool(ctx.agent_output)),
    ]
"""

GOOD = """
async def agent(ctx):
    await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
    return "Blocked CUS-001."
"""

IDLE = """
async def agent(ctx):
    return ""
"""


def write(path: Path, text: str) -> None:
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    steps = [
        ["init", "shop"],
        ["data", "add", "customers", "--env", "shop", "--data", '{"CUS-001": {"status": "ok"}}'],
        ["tool", "add", "block_customer", "--env", "shop"],
        ["verifier", "add", "VER-001", "--env", "shop", "--task", "TASK-001"],
        [
            "task",
            "add",
            "TASK-001",
            "--env=shop",
            "--title=Block a customer",
            "--instruction=Block customer CUS-001.",
            "--verifier=VER-001",
        ],
    ]
    for step in steps:
        assert cli(*step).exit_code == 0, step
    env = tmp_path / ".silo" / "environments" / "shop"
    write(env / "tools" / "block_customer.py", TOOL)
    write(env / "verifiers" / "ver_001.py", VERIFIER)
    write(tmp_path / "silo_agent.py", GOOD)
    return tmp_path


def run(*args: str) -> Result:
    return cli("run", "--env", "shop", "--task", "TASK-001", *args)


def test_pass_report_exit_0(project: Path) -> None:
    result = run()
    assert result.exit_code == 0, result.output
    assert "Result      PASS" in result.stdout
    assert "Reward      1.00" in result.stdout
    run_dir = result.stdout.splitlines()[-1].split()[-1]
    assert run_dir.startswith(".silo/runs/")
    assert json.loads((project / run_dir / "result.json").read_text())["passed"] is True


def test_fail_report_exit_1(project: Path) -> None:
    write(project / "idle.py", IDLE)
    result = run("--agent", "idle.py")
    assert result.exit_code == 1
    assert "Result      FAIL" in result.stdout
    assert "Failed      ✗ CUS-001 is blocked" in result.stdout
    assert result.stderr == ""


def test_single_json(project: Path) -> None:
    result = run("--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["passed"] is True
    assert data["terminationReason"] == "completed"
    assert data["agent"] == "silo_agent.py:agent"
    assert data["task"]["id"] == "TASK-001"
    assert data["config"] == {"maxToolCalls": 100, "timeoutMs": 120000, "tokenLimit": None}
    assert (project / data["runDir"] / "run.json").is_file()
    assert data["runId"] == Path(data["runDir"]).name


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_many_runs_text(backend: str) -> None:
    result = cli("--backend", backend, "run", "--env=shop", "--task=TASK-001", "--runs=3")
    assert result.exit_code == 0, result.output
    assert "Rollouts     3" in result.stdout
    assert "Passed       3 / 3" in result.stdout
    assert "Avg calls    1.0" in result.stdout
    lines = [line for line in result.stdout.splitlines() if line.startswith("run ")]
    assert [line.split()[:3] for line in lines] == [
        ["run", "1", "PASS"],
        ["run", "2", "PASS"],
        ["run", "3", "PASS"],
    ]
    assert all("reward 1.00 · 1 call · completed  .silo/runs/" in line for line in lines)
    assert len({line.split()[-1] for line in lines}) == 3  # one run directory each


def test_many_runs_json_and_mixed_outcomes_exit_1(project: Path) -> None:
    # Passes on the first call only; --concurrency 1 keeps the order deterministic.
    write(
        project / "flaky.py",
        """
        calls = 0

        async def agent(ctx):
            global calls
            calls += 1
            if calls == 1:
                await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
                return "done"
            return ""
        """,
    )
    result = run("--agent", "flaky.py", "--runs", "2", "--concurrency", "1", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["task"]["id"] == "TASK-001"
    assert (data["runs"], data["passed"]) == (2, 1)
    assert (data["bestReward"], data["worstReward"], data["meanReward"]) == (1.0, 0.0, 0.5)
    assert data["avgToolCalls"] == 0.5
    assert [r["reward"] for r in data["rollouts"]] == [1.0, 0.0]
    assert [r["passed"] for r in data["rollouts"]] == [True, False]


def test_limits(project: Path) -> None:
    write(
        project / "slow.py",
        """
        import anyio

        async def agent(ctx):
            await anyio.sleep_forever()
        """,
    )
    timed = run("--agent", "slow.py", "--timeout-ms", "1")
    assert timed.exit_code == 1
    assert "Ended early  timeout" in timed.stdout
    capped = run("--max-tool-calls", "0", "--json")
    assert capped.exit_code == 1
    data = json.loads(capped.stdout)
    assert data["terminationReason"] == "max_tool_calls"
    assert data["config"]["maxToolCalls"] == 0


def test_agent_crash_is_reported(project: Path) -> None:
    write(project / "crash.py", "async def agent(ctx):\n    raise RuntimeError('model down')\n")
    result = run("--agent", "crash.py")
    assert result.exit_code == 1
    assert "Ended early  agent_error" in result.stdout
    assert "Error        RuntimeError: model down" in result.stdout


def test_an_agent_that_blocks_the_loop_is_reported_as_a_timeout(project: Path) -> None:
    write(
        project / "blocking.py",
        "import time\n\nasync def agent(ctx):\n    time.sleep(0.2)\n    return 'late'\n",
    )
    result = run("--agent", "blocking.py", "--timeout-ms", "20")
    assert result.exit_code == 1
    assert "Ended early  timeout" in result.stdout
    assert "Time limit exceeded (0.02 s). The event loop was held" in result.stdout


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--runs", "0"], "Invalid value for '--runs': 0 is not in the range x>=1."),
        (["--timeout-ms", "abc"], "Invalid value for '--timeout-ms': 'abc' is not a whole number"),
        (["--timeout-ms", "0"], "Invalid value for '--timeout-ms'"),
        (["--max-tool-calls", "-1"], "Invalid value for '--max-tool-calls'"),
        (["--concurrency", "0"], "Invalid value for '--concurrency'"),
        (["--runs=-2"], "Invalid value for '--runs'"),
    ],
)
def test_bad_flag_values_are_usage_errors(flags: list[str], message: str) -> None:
    result = run(*flags)
    assert result.exit_code == 2
    assert message in result.stderr


def test_missing_flags_are_usage_errors() -> None:
    result = cli("run", "--env", "shop")
    assert result.exit_code == 2
    assert "Missing option '--task'" in result.stderr


def test_missing_environment_and_task_keep_their_codes(project: Path) -> None:
    ghost = cli("run", "--env", "ghost", "--task", "TASK-001")
    assert ghost.exit_code == 1
    assert ghost.stderr.startswith("error: environment_not_found: ")
    nope = cli("run", "--env", "shop", "--task", "NOPE", "--json")
    assert nope.exit_code == 1
    assert nope.stdout == ""
    assert nope.stderr.startswith('error: task_not_found: Task "NOPE" was not found')


def test_task_with_unregistered_verifier_fails_before_the_agent_loads(project: Path) -> None:
    update = ["task", "update", "TASK-001", "--env", "shop", "--verifier", "VER-404"]
    assert cli(*update).exit_code == 0
    (project / "silo_agent.py").unlink()
    result = run()
    assert result.exit_code == 1
    assert result.stderr.startswith("error: task_invalid: ")


def test_missing_default_agent_says_what_was_looked_for(project: Path) -> None:
    (project / "silo_agent.py").unlink()
    result = run()
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"error: agent_not_found: No --agent given and ./silo_agent.py was not found in {project}."
    )
    assert result.stderr.rstrip().endswith("or use a model with --model PROVIDER/MODEL.")


def test_missing_agent_file_names_the_path() -> None:
    result = run("--agent", "agents/bot.py")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        'error: agent_not_found: Agent file "agents/bot.py" was not found'
    )


def test_agent_syntax_error_names_file_and_line(project: Path) -> None:
    write(project / "bad.py", "async def agent(ctx):\n    return (\n")
    result = run("--agent", "bad.py")
    assert result.exit_code == 1
    assert f"{project / 'bad.py'}:2" in result.stderr


def test_sync_agent_is_rejected(project: Path) -> None:
    write(project / "sync.py", "def agent(ctx):\n    return ''\n")
    result = run("--agent", "sync.py")
    assert result.exit_code == 1
    assert "is a plain function; an agent must be a coroutine function" in result.stderr


def test_module_without_async_callable_names_what_was_found(project: Path) -> None:
    write(project / "helpers.py", "def solve(ctx):\n    return ''\n")
    result = run("--agent", "helpers.py:solve")
    assert result.exit_code == 1
    assert '"solve" in agent file "helpers.py" is a plain function' in result.stderr
    result = run("--agent", "helpers.py")
    assert 'Agent file "helpers.py" has no "agent"' in result.stderr
    assert "solve (a plain function)" in result.stderr


def test_named_callable_and_module_spec(project: Path) -> None:
    pkg = f"cli_run_agents_{project.name.replace('-', '_')}"
    (project / pkg).mkdir()
    write(project / pkg / "__init__.py", "")
    write(project / pkg / "bots.py", GOOD.replace("def agent", "def solver"))
    by_module = run("--agent", f"{pkg}.bots:solver", "--json")
    assert by_module.exit_code == 0, by_module.output
    assert json.loads(by_module.stdout)["agent"] == f"{pkg}.bots:solver"
    by_path = run("--agent", f"{pkg}/bots.py:solver")
    assert by_path.exit_code == 0, by_path.output
