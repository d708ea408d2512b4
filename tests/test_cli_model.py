"""``--model``, ``--base-url`` and ``--max-turns`` on ``run`` and ``eval``, against real SDKs."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from tests.peers import by_extra, extra
from tests.test_cli_run import GOOD, TOOL, VERIFIER

from .cli_support import cli


def solver(request: ModelRequest) -> Reply:
    """A model that blocks CUS-001, then says so."""
    if request.turn == 0:
        return Reply(tool_calls=[ToolCall("block_customer", {"customerId": "CUS-001"})])
    return Reply(text="Blocked CUS-001.")


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    steps = [
        ["init", "shop"],
        ["data", "add", "customers", "--env", "shop", "--data", '{"CUS-001": {"status": "ok"}}'],
        ["tool", "add", "block_customer", "--env", "shop"],
        ["verifier", "add", "VER-001", "--env", "shop", "--task", "TASK-001"],
        ["task", "add", "TASK-001", "--env=shop", "--title=Block", "--verifier=VER-001"],
    ]
    steps[-1].append("--instruction=Block customer CUS-001.")
    for step in steps:
        assert cli(*step).exit_code == 0, step
    env = tmp_path / ".silo" / "environments" / "shop"
    (env / "tools" / "block_customer.py").write_text(textwrap.dedent(TOOL))
    (env / "verifiers" / "ver_001.py").write_text(textwrap.dedent(VERIFIER))
    (tmp_path / "silo_agent.py").write_text(textwrap.dedent(GOOD))
    return tmp_path


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer(solver) as running:
        yield running


def run(*args: str) -> Result:
    return cli("run", "--env", "shop", "--task", "TASK-001", *args)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("provider", by_extra("openai", "anthropic"))
def test_run_with_a_model(
    server: ScriptedModelServer, project: Path, provider: str, backend: str
) -> None:
    result = cli(
        "--backend",
        backend,
        "run",
        "--env=shop",
        "--task=TASK-001",
        f"--model={provider}/scripted",
        f"--base-url={server.base_url}",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["passed"] and data["agent"] == f"{provider}/scripted"
    assert data["agentOutput"] == "Blocked CUS-001."
    assert [r.model for r in server.requests] == ["scripted", "scripted"]
    trace = (project / data["runDir"] / "trace.jsonl").read_text().splitlines()
    steps = [e for e in map(json.loads, trace) if e["type"] == "model_step"]
    assert len(steps) == 2 and steps[0]["model"] == "scripted"


@extra("openai")
def test_run_max_turns_and_a_label(server: ScriptedModelServer) -> None:
    result = run("--model", "mini=openai/scripted", "--base-url", server.base_url, "--max-turns=1")
    assert result.exit_code == 0, result.output  # the one reply's call still ran
    assert len(server.requests) == 1
    assert "Result       PASS" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "mistral/large"], 'unknown provider "mistral"'),
        (["--model", "gpt-4.1"], "is not PROVIDER/MODEL"),
        pytest.param(
            ["--model", "openai/gpt-4.1"],
            "No API key for openai: set OPENAI_API_KEY",
            marks=extra("openai"),
        ),
    ],
)
def test_run_model_invalid(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: model_invalid: ") and message in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_run_model_invalid_for_a_missing_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    result = run("--model", "anthropic/c", "--base-url", "http://127.0.0.1:9")
    assert result.exit_code == 1
    assert "error: model_invalid:" in result.stderr
    assert "pip install 'silo_async[anthropic]'" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--model", "openai/m", "--agent", "silo_agent.py"],
        ["--base-url", "http://127.0.0.1:9/v1"],
        ["--max-turns", "3"],
        ["--model", "openai/m", "--max-turns", "0"],
    ],
)
def test_run_model_usage_errors(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output


@extra("anthropic")
@extra("openai")
def test_eval_models_beside_an_agent(server: ScriptedModelServer, project: Path) -> None:
    result = cli(
        "eval",
        "--env=shop",
        "--agent=silo_agent.py",
        "--model=mini=openai/scripted",
        "--model=anthropic/scripted",
        f"--base-url={server.base_url}",
        "--runs=2",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["config"]["agents"] == ["silo_agent", "mini", "anthropic/scripted"]
    assert data["finished"] == 6
    assert {r.protocol for r in server.requests} == {"chat", "messages"}
    assert len(server.requests) == 8  # two model agents, two runs, two responses each


@extra("openai")
def test_eval_only_models_needs_no_agent_file(server: ScriptedModelServer, project: Path) -> None:
    (project / "silo_agent.py").unlink()
    args = ["eval", "--env=shop", "--model=openai/scripted", f"--base-url={server.base_url}"]
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["config"]["agents"] == ["openai/scripted"]


@extra("openai")
def test_eval_duplicate_labels() -> None:
    url = "--base-url=http://127.0.0.1:9/v1"
    result = cli("eval", "--env=shop", "--model=openai/m", "--model=openai/m", url)
    assert result.exit_code == 1
    assert result.stderr.startswith('error: agent_invalid: Two agents are labelled "openai/m"')
    result = cli("eval", "--env=shop", "--agent=x=silo_agent.py", "--model=x=openai/m", url)
    assert result.exit_code == 1 and "agent_invalid" in result.stderr


CRASH = """
async def agent(ctx):
    reply = {"choices": []}
    return reply["content"]
"""

COUNTING = """
async def agent(ctx):
    for _ in range(5):
        ctx.record_model_step(model="mine", input_tokens=30, output_tokens=10)
        await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
    return "done"
"""


@extra("openai")
def test_run_report_shows_model_steps_and_tokens(server: ScriptedModelServer) -> None:
    result = run("--model", "openai/scripted", "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    assert "Model steps  2\n" in result.stdout
    assert "Tokens       20 in · 10 out\n" in result.stdout
    plain = run()  # an agent that records no model step: no such rows
    assert "Model steps" not in plain.stdout and "Tokens" not in plain.stdout


@extra("openai")
def test_run_many_shows_tokens(server: ScriptedModelServer) -> None:
    result = run("--model", "openai/scripted", "--base-url", server.base_url, "--runs=2")
    assert result.exit_code == 0, result.output
    assert "Tokens       40 in · 20 out (mean 30 per run)" in result.stdout
    assert "30 tokens" in result.stdout.splitlines()[-1]


@extra("openai")
@pytest.mark.parametrize("agent", ["model", "plain"])
def test_token_limit_on_run(server: ScriptedModelServer, project: Path, agent: str) -> None:
    if agent == "model":
        args = ["--model", "openai/scripted", "--base-url", server.base_url]
    else:
        (project / "counting.py").write_text(COUNTING)
        args = ["--agent", "counting.py"]
    result = run(*args, "--token-limit", "15", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["terminationReason"] == "max_tokens"
    assert data["config"]["tokenLimit"] == 15
    assert (data["modelSteps"], data["toolCalls"]) == (1, 0)


@extra("openai")
def test_token_limit_on_eval(server: ScriptedModelServer, project: Path) -> None:
    (project / "counting.py").write_text(COUNTING)
    url = f"--base-url={server.base_url}"
    args = ["eval", "--env=shop", "--agent=counting.py", "--model=openai/scripted", url]
    result = cli(*args, "--token-limit=15", "--json")
    assert result.exit_code == 0, result.output
    out = Path(json.loads(result.stdout)["outDir"])
    results = [json.loads(p.read_text()) for p in out.glob("runs/run_*/result.json")]
    assert [r["terminationReason"] for r in results] == ["max_tokens", "max_tokens"]


def test_a_crash_names_its_exception_and_shows_the_traceback(project: Path) -> None:
    (project / "crash.py").write_text(CRASH)
    result = run("--agent", "crash.py")
    assert result.exit_code == 1
    assert "Ended early  agent_error\n" in result.stdout
    assert "Error        KeyError: 'content'\n" in result.stdout
    run_id = json.loads(run("--agent", "crash.py", "--json").stdout)["runId"]
    assert "Traceback    silo-async runs show run_" in result.stdout
    assert "Traceback (most recent call last)" not in result.stdout

    for shown in (run("--agent", "crash.py", "--traceback"), cli("runs", "show", run_id)):
        assert "The agent raised:\nTraceback (most recent call last):" in shown.stdout
        assert 'return reply["content"]' in shown.stdout
        assert "KeyError: 'content'" in shown.stdout.split("The agent raised:")[1]
    root_flag = cli("--traceback", "run", "--env=shop", "--task=TASK-001", "--agent=crash.py")
    assert "The agent raised:" in root_flag.stdout

    data = json.loads(cli("runs", "show", run_id, "--json").stdout)
    assert data["agentError"]["type"] == "KeyError"
    assert "Traceback" in data["agentError"]["traceback"]
    many = run("--agent", "crash.py", "--runs=2", "--traceback")
    assert many.stdout.count("raised:\nTraceback (most recent call last):") == 2


def model_steps_under(root: Path) -> list[dict[str, Any]]:
    """Every model step of every trace under ``root``."""
    found = []
    for trace in sorted(root.rglob("trace.jsonl")):
        events = map(json.loads, trace.read_text().splitlines())
        found += [e for e in events if e["type"] == "model_step"]
    return found


@extra("openai")
def test_run_policy_version_stamps_every_model_step(
    server: ScriptedModelServer, project: Path
) -> None:
    """--policy-version V on run stamps policyVersion (a str) on every step."""
    url = f"--base-url={server.base_url}"
    result = run("--model=openai/scripted", url, "--policy-version", "17", "--runs=2")
    assert result.exit_code == 0, result.output
    steps = model_steps_under(project / ".silo" / "runs")
    assert len(steps) == 4 and {s["policyVersion"] for s in steps} == {"17"}


@extra("openai")
def test_eval_policy_version_is_in_the_plan_and_on_every_step(
    server: ScriptedModelServer, project: Path
) -> None:
    out = project / "ev"
    args = ["eval", "--env=shop", "--model=openai/scripted", f"--base-url={server.base_url}"]
    result = cli(*args, f"--out={out}", "--policy-version=ckpt-3")
    assert result.exit_code == 0, result.output
    assert json.loads((out / "eval.json").read_text())["policyVersion"] == "ckpt-3"
    steps = model_steps_under(out)
    assert len(steps) == 2 and {s["policyVersion"] for s in steps} == {"ckpt-3"}
    # A resume may repeat it, not change it.
    again = cli("eval", f"--resume={out}", "--policy-version=ckpt-4")
    assert again.exit_code == 1
    assert "resume_conflict" in again.stderr and "--policy-version" in again.stderr


@extra("openai")
def test_run_with_a_responses_model(server: ScriptedModelServer, project: Path) -> None:
    """The spec openai-responses/MODEL on --model."""
    result = run("--model=openai-responses/scripted", f"--base-url={server.base_url}", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["passed"] and data["agent"] == "openai-responses/scripted"
    assert {r.protocol for r in server.requests} == {"responses"}
    bad = run("--model=openai-response/scripted", f"--base-url={server.base_url}")
    assert bad.exit_code == 1 and "openai-responses" in bad.stderr
