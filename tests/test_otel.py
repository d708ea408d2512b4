"""OpenTelemetry: each rollout as GenAI semantic-convention spans over OTLP.

The real OpenTelemetry SDK exports, through its own OTLP/HTTP exporter configured by the
standard variables, to a receiver on 127.0.0.1 that the test starts (``otlp_support``): the
library (``RunOptions(otel=True)``), ``run --otel``, ``eval`` under ``SILO_OTEL=1`` and
``serve --otel``. Off, nothing of OpenTelemetry is imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import silo_async as silo
from silo_async import _telemetry, agents
from silo_async.testing import Reply, ScriptedModelServer, ToolCall

from .cli_support import cli
from .otlp_support import Receiver, Span, otlp_receiver
from .peers import require_extra
from .test_cli_run import GOOD, TOOL, VERIFIER
from .worlds import ENV

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = [
    Reply(
        text="Checking.",
        tool_calls=[
            ToolCall("get_customer", {"customerId": "CUS-404"}, id="call_miss"),
            ToolCall("block_customer", {"customerId": "CUS-001"}, id="call_block"),
        ],
        input_tokens=40,
        output_tokens=9,
    ),
    Reply(text="Blocked CUS-001.", input_tokens=50, output_tokens=4),
]


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """A receiver the standard OTLP variables point at; telemetry reset after the test."""
    for var in [v for v in os.environ if v.startswith("OTEL_")] + [_telemetry.ENV_VAR]:
        monkeypatch.delenv(var, raising=False)
    with otlp_receiver() as running:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", running.endpoint)
        try:
            yield running
        finally:
            _telemetry.shutdown()


def by_id(spans: list[Span]) -> dict[str, Span]:
    return {s.span_id: s for s in spans}


def evaluation(span: Span) -> dict[str, object]:
    (found,) = [attrs for name, attrs in span.events if name == "gen_ai.evaluation.result"]
    return found


async def test_a_rollout_is_an_invoke_agent_span_with_its_tools_and_chats(
    receiver: Receiver,
) -> None:
    with ScriptedModelServer(SCRIPT) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url)
        how = silo.RunOptions(otel=True)
        result = await silo.run(ENV, "TASK-BLOCK", agent, options=how)
    await anyio.to_thread.run_sync(_telemetry.shutdown)  # sends what the batch holds
    (rollout,) = receiver.named("invoke_agent")
    assert rollout.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert rollout.attributes["gen_ai.agent.name"] == "openai/scripted" == result.agent_name
    assert rollout.attributes["silo.task.id"] == "TASK-BLOCK"
    assert rollout.attributes["silo.run.id"] == result.run_id
    assert evaluation(rollout)["gen_ai.evaluation.score.value"] == 1.0 == result.reward
    assert evaluation(rollout)["gen_ai.evaluation.score.label"] == "passed"
    assert rollout.parent_span_id == "" and rollout.service == "silo_async"
    tools = receiver.named("execute_tool")
    assert [s.attributes["gen_ai.tool.name"] for s in tools] == ["get_customer", "block_customer"]
    assert [s.attributes["gen_ai.tool.call.id"] for s in tools] == ["call_miss", "call_block"]
    assert tools[0].attributes["error.type"] == "not_found" and tools[0].status_code == 2
    assert "error.type" not in tools[1].attributes
    chats = receiver.named("chat")
    assert [s.attributes["gen_ai.request.model"] for s in chats] == ["scripted"] * 2
    usage = [
        (s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"])
        for s in chats
    ]
    assert usage == [(40, 9), (50, 4)]
    for child in tools + chats:  # children of their rollout, inside its time
        assert child.parent_span_id == rollout.span_id and child.trace_id == rollout.trace_id
        assert rollout.start_ns <= child.start_ns <= child.end_ns <= rollout.end_ns


async def test_a_failed_rollout_is_labelled_failed(receiver: Receiver) -> None:
    async def idle(ctx: silo.AgentContext) -> str:
        return "nothing"

    result = await silo.run(ENV, "TASK-BLOCK", idle, options=silo.RunOptions(otel=True))
    await silo.run(ENV, "TASK-BLOCK", idle)  # not asked: not exported
    await anyio.to_thread.run_sync(_telemetry.shutdown)
    (rollout,) = receiver.named("invoke_agent")
    assert not result.passed and result.reward < 1
    assert evaluation(rollout)["gen_ai.evaluation.score.value"] == result.reward
    assert evaluation(rollout)["gen_ai.evaluation.score.label"] == "failed"
    assert receiver.named("execute_tool") == receiver.named("chat") == []


@pytest.mark.parametrize("on_disk", [False, True], ids=["in-memory", "run-dir"])
async def test_an_injected_fault_is_the_tool_spans_error_type(
    receiver: Receiver, tmp_path: Path, on_disk: bool
) -> None:
    """In memory the trace is read without encoding it; on disk from its lines: the same spans."""

    async def blocker(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
        await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
        return "Blocked."

    how = silo.RunOptions(otel=True, faults="block_customer:unavailable@1")
    runs_dir = tmp_path / "runs" if on_disk else None
    result = await silo.run(ENV, "TASK-BLOCK", blocker, options=how, runs_dir=runs_dir)
    await anyio.to_thread.run_sync(_telemetry.shutdown)
    assert (result.run_dir is not None) is on_disk
    ok, faulted = receiver.named("execute_tool")
    assert "error.type" not in ok.attributes and ok.status_code == 0
    assert faulted.attributes["error.type"] == "unavailable" and faulted.status_code == 2
    calls = [e for e in result.trace if e["type"] == "tool_result"]
    assert [s.end_ns - s.start_ns for s in (ok, faulted)] == [
        int(e["durationMs"] * 1_000_000) for e in calls
    ]


# -- the CLI -----------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
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
    (tmp_path / "good_agent.py").write_text(textwrap.dedent(GOOD))
    (tmp_path / "idle_agent.py").write_text("async def agent(ctx):\n    return ''\n")
    return tmp_path


def test_run_otel_exports_the_rollout(receiver: Receiver, project: Path) -> None:
    result = cli(
        "run", "--env=shop", "--task=TASK-001", "--agent=good_agent.py", "--otel", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (rollout,) = receiver.named("invoke_agent")  # sent before the command returned
    assert rollout.attributes["silo.run.id"] == data["runId"]
    assert rollout.attributes["gen_ai.agent.name"] == data["agent"]
    (tool,) = receiver.named("execute_tool")
    assert tool.attributes["gen_ai.tool.name"] == "block_customer"
    assert tool.attributes["gen_ai.tool.call.id"] == "call_1"  # no model named it: silo's id
    assert receiver.paths == ["/v1/traces"]
    assert not _telemetry.enabled(silo.RunOptions())  # switched off with the command


def test_eval_under_silo_otel_exports_every_rollout(
    receiver: Receiver, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SILO_OTEL", "1")
    result = cli(
        "eval", "--env=shop", "--task=TASK-001", "--runs=2",
        "--agent=good=good_agent.py", "--agent=idle=idle_agent.py", "--out=out",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rollouts = receiver.named("invoke_agent")
    labels = sorted(
        (
            str(s.attributes["gen_ai.agent.name"]),
            str(evaluation(s)["gen_ai.evaluation.score.label"]),
        )
        for s in rollouts
    )
    assert labels == [("good", "passed")] * 2 + [("idle", "failed")] * 2
    index = (project / "out" / "runs" / "index.jsonl").read_text().splitlines()
    assert {s.attributes["silo.run.id"] for s in rollouts} == {
        json.loads(line)["runId"] for line in index
    }
    parents = by_id(rollouts)
    assert all(t.parent_span_id in parents for t in receiver.named("execute_tool"))
    assert len(receiver.named("execute_tool")) == 2


@pytest.mark.parametrize(
    ("protocol", "said"),
    [("grpc", "opentelemetry-exporter-otlp-proto-grpc"), ("http/json", "http/protobuf")],
)
def test_a_protocol_it_cannot_export_is_said_before_anything_runs(
    receiver: Receiver, project: Path, monkeypatch: pytest.MonkeyPatch, protocol: str, said: str
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
    result = cli("run", "--env=shop", "--task=TASK-001", "--agent=good_agent.py", "--otel")
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: otel_unavailable: ") and said in line
    assert not (project / ".silo" / "runs").exists()  # nothing ran


def test_off_nothing_of_opentelemetry_is_imported(project: Path) -> None:
    code = textwrap.dedent(
        """
        import sys
        import anyio
        import silo_async as silo
        from silo_async.cli._app import app
        from tests.worlds import ENV

        async def idle(ctx):
            return "no"

        anyio.run(silo.run, ENV, "TASK-BLOCK", idle)
        try:
            app(["run", "--env=shop", "--task=TASK-001", "--agent=good_agent.py"])
        except SystemExit as done:
            assert done.code == 0, done.code
        loaded = sorted(m for m in sys.modules if m.startswith("opentelemetry"))
        print(len(loaded), loaded[:3])
        """
    )
    env = {k: v for k, v in os.environ.items() if k != _telemetry.ENV_VAR}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0 []"


async def test_serve_otel_exports_each_episode(receiver: Receiver, project: Path) -> None:
    require_extra("mcp")  # serve's
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = [sys.executable, "-m", "silo_async", "serve", "--env=shop", "--task=TASK-001"]
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "--otel"], cwd=str(project), env=dict(os.environ)
    )
    with (project / "stderr.txt").open("w") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            await client.call_tool("block_customer", {"customerId": "CUS-001"})
            await client.call_tool("submit", {"answer": "Blocked."})
    # The server sends its spans as it exits, once the client has gone.
    await anyio.to_thread.run_sync(receiver.wait_for, lambda r: bool(r.named("invoke_agent")))
    (rollout,) = receiver.named("invoke_agent")
    assert rollout.attributes["gen_ai.agent.name"] == "mcp"
    assert evaluation(rollout)["gen_ai.evaluation.score.label"] == "passed"
    (tool,) = receiver.named("execute_tool")
    assert tool.parent_span_id == rollout.span_id
