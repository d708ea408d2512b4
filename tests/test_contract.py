"""Conformance of the implementation to DESIGN.md, one test per statement of the public contract.

Each test is named after the statement it checks (section numbers refer to DESIGN.md). Many of
these behaviours also have a focused test elsewhere; here they are checked exactly as a reader of
DESIGN.md (who never saw the code) would check them.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from click.testing import CliRunner

import silo_async as silo
from silo_async.cli._app import app

pytestmark = pytest.mark.anyio

OPP_SCHEMA = {
    "type": "object",
    "properties": {"opportunityId": {"type": "string"}},
    "required": ["opportunityId"],
    "additionalProperties": False,
}


def make_world() -> dict[str, Any]:
    """A tiny world: one counter and one record, fresh on every call."""
    return {"counter": 0, "records": {"OPP-004": {"id": "OPP-004", "stage": "open"}}}


@silo.tool(name="get_opportunity", description="Read one opportunity.", input_schema=OPP_SCHEMA)
def get_opportunity(state: dict[str, Any], args: dict[str, Any]) -> Any:
    found = state["records"].get(args["opportunityId"])
    if found is None:
        raise silo.tool_error("not_found", "no such opportunity", {"id": args["opportunityId"]})
    return found


@silo.tool(name="bump", description="Add one to the counter.")
async def bump(state: dict[str, Any], args: dict[str, Any]) -> Any:
    state["counter"] += 1
    return state["counter"]


@silo.tool(name="reject", description="Always rejects in-world.")
def reject(state: dict[str, Any], args: dict[str, Any]) -> Any:
    raise silo.ToolError("conflict", "not now", {"why": "busy"})


@silo.tool(name="crash", description="A tool with a bug.")
def crash(state: dict[str, Any], args: dict[str, Any]) -> Any:
    raise LookupError("bug in the environment")


@silo.tool(name="hang", description="Never returns.")
async def hang(state: dict[str, Any], args: dict[str, Any]) -> Any:
    await anyio.sleep_forever()


@silo.verifier(id="VER-COUNT", task_id="TASK-COUNT")
def counted(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [
        silo.check("counter moved", final["counter"] > initial["counter"]),
        silo.check("answer is ok", ctx.agent_output == "ok", f"got {ctx.agent_output!r}"),
        silo.optional("task seen", ctx.task.id == "TASK-COUNT"),
        silo.optional("never true", False),
    ]


@silo.verifier(id="VER-BOOM", task_id="TASK-BOOM")
def boom(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    raise RuntimeError("verifier bug")


@silo.verifier(id="VER-OPT", task_id="TASK-OPT")
def only_optional(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
    return [silo.optional("nice", True)]


ENV_TASKS = [silo.Task("TASK-COUNT", "Count", "Bump the counter once and say ok.", "VER-COUNT")]

ENV = silo.Environment(
    name="contract",
    create_state=make_world,
    tools=[get_opportunity, bump, reject, crash, hang],
    verifiers=[counted, boom, only_optional],
    tasks=[
        *ENV_TASKS,
        silo.Task("TASK-BOOM", "Boom", "Anything.", "VER-BOOM"),
        silo.Task("TASK-OPT", "Optional", "Anything.", "VER-OPT"),
    ],
)


async def solver(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("bump", {})
    return "ok"


# --- Section 2: public names and signatures -------------------------------------------------


def test_section2_public_names_are_reexported_from_silo_async() -> None:
    names = [
        "Environment",
        "run",
        "run_many",
        "Tool",
        "tool",
        "bind_tools",
        "ToolResult",
        "ToolSpec",
        "ToolError",
        "tool_error",
        "SiloError",
        "Task",
        "Verifier",
        "verifier",
        "check",
        "optional",
        "AgentContext",
        "RunResult",
        "load_environment",
    ]
    missing = [n for n in names if not hasattr(silo, n)]
    assert missing == []


def test_section2_run_and_run_many_signature_defaults() -> None:
    run = inspect.signature(silo.run).parameters
    assert run["max_tool_calls"].default == 100
    assert run["timeout"].default == 120.0
    assert run["runs_dir"].default is None
    many = inspect.signature(silo.run_many).parameters
    assert many["runs"].default == 1
    assert many["concurrency"].default == 64
    assert many["max_tool_calls"].default == 100
    assert many["timeout"].default == 120.0
    assert many["runs_dir"].default is None


def test_section5_the_17_silo_error_codes() -> None:
    assert silo.ERROR_CODES == (
        "environment_not_found",
        "environment_already_exists",
        "template_not_found",
        "entrypoint_outside_environment",
        "runtime_contract_invalid",
        "data_not_found",
        "data_already_exists",
        "invalid_json",
        "task_not_found",
        "task_already_exists",
        "task_invalid",
        "tool_already_exists",
        "verifier_already_exists",
        "registry_not_found",
        "already_registered",
        "state_type_not_found",
        "unsafe_name",
    )
    err = silo.SiloError("task_not_found", "gone", {"id": "T"})
    assert (err.code, err.message, err.details) == ("task_not_found", "gone", {"id": "T"})


def test_section2_task_defaults_and_camelcase_on_disk() -> None:
    task = silo.Task("T-1", "Title", "Do it.", "VER-1")
    assert task.difficulty == "unspecified"
    assert task.verifier_id == "VER-1"
    data = task.to_dict()
    assert list(data) == ["id", "title", "instruction", "verifierId", "difficulty"]
    assert data["verifierId"] == "VER-1"
    assert silo.Task.from_dict(data) == task


def test_section2_toolspec_to_dict_keys() -> None:
    spec = silo.bind_tools(make_world(), [get_opportunity])[0].spec
    assert isinstance(spec, silo.ToolSpec)
    assert (spec.name, spec.description) == ("get_opportunity", "Read one opportunity.")
    assert spec.input_schema == OPP_SCHEMA
    assert spec.to_dict() == {
        "name": "get_opportunity",
        "description": "Read one opportunity.",
        "inputSchema": OPP_SCHEMA,
    }


def test_section2_tool_result_defaults_to_not_an_error() -> None:
    result = silo.ToolResult({"x": 1})
    assert result.output == {"x": 1}
    assert result.is_error is False


def test_section2_input_schema_is_checked_when_the_tool_is_defined() -> None:
    with pytest.raises(silo.DefinitionError):

        @silo.tool(name="bad", description="d", input_schema={"type": "no-such-type"})
        def bad(state: Any, args: Any) -> Any:
            return None


def test_section2_tool_error_helper_builds_a_tool_error() -> None:
    err = silo.tool_error("not_allowed", "nope", {"k": 1})
    assert isinstance(err, silo.ToolError)
    assert (err.code, err.message, err.details) == ("not_allowed", "nope", {"k": 1})


def test_section2_check_and_optional() -> None:
    required = silo.check("label", True)
    assert (required.label, required.passed, required.detail) == ("label", True, "")
    assert required.required is True
    assert silo.optional("other", False, "why").required is False


# --- Section 1: the agent contract ----------------------------------------------------------


async def test_section1_ctx_task_is_the_instruction_and_ctx_tools_are_toolspecs() -> None:
    seen: dict[str, Any] = {}

    async def agent(ctx: silo.AgentContext) -> str:
        seen["task"] = ctx.task
        seen["tools"] = ctx.tools
        seen["scope"] = ctx.cancel_scope
        seen["cancelled"] = ctx.cancelled
        return "ok"

    await silo.run(ENV, "TASK-COUNT", agent)
    assert seen["task"] == "Bump the counter once and say ok."
    assert all(isinstance(t, silo.ToolSpec) for t in seen["tools"])
    assert [t.name for t in seen["tools"]] == ["get_opportunity", "bump", "reject", "crash", "hang"]
    assert isinstance(seen["scope"], anyio.CancelScope)
    assert seen["cancelled"] is False


@pytest.mark.parametrize(
    ("returned", "text"),
    [("as is ", "as is "), (None, ""), ({"a": [1, 2], "b": "x y"}, '{"a":[1,2],"b":"x y"}')],
)
async def test_section1_return_value_str_as_is_none_empty_else_compact_json(
    returned: object, text: str
) -> None:
    async def agent(ctx: silo.AgentContext) -> object:
        return returned

    result = await silo.run(ENV, "TASK-COUNT", agent)
    assert result.output_text == text
    assert result.agent_output == returned
    assert result.checks[1].detail == f"got {text!r}"  # ctx.agent_output is the text form


async def test_section1_call_beyond_max_tool_calls_is_not_executed_not_recorded_no_return() -> None:
    after_refused: list[bool] = []
    cancelled_seen: list[bool] = []

    async def agent(ctx: silo.AgentContext) -> str:
        try:
            for _ in range(2):
                await ctx.call_tool("bump", {})
            await ctx.call_tool("bump", {})
            after_refused.append(True)
        finally:
            cancelled_seen.append(ctx.cancelled)
        return "ok"

    result = await silo.run(ENV, "TASK-COUNT", agent, max_tool_calls=2)
    assert after_refused == []
    assert cancelled_seen == [True]
    assert result.termination_reason == "max_tool_calls"
    assert result.tool_calls == 2
    calls = [e for e in result.trace if e["type"] == "tool_call"]
    assert len(calls) == 2
    # The world saw exactly two bumps: the refused third call never executed.
    assert result.state_diff["scalars"] == [{"field": "counter", "from": 0, "to": 2}]


async def test_section1_timeout_cancels_a_hung_agent_and_the_tool_in_flight() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("hang", {})
        return "never"

    with anyio.fail_after(10):
        result = await silo.run(ENV, "TASK-COUNT", agent, timeout=0.01)
    assert result.termination_reason == "timeout"
    assert result.passed is False


async def test_section1_unknown_tool_is_tool_not_found_echoing_name_with_suggestions() -> None:
    got: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> str:
        got.append(await ctx.call_tool("get_oportunity", {"opportunityId": "OPP-004"}))
        return "ok"

    await silo.run(ENV, "TASK-COUNT", agent)
    result = got[0]
    assert result.is_error is True
    assert result.output["code"] == "tool_not_found"
    assert "get_oportunity" in result.output["message"]
    assert "get_opportunity" in result.output["message"]


async def test_section1_invalid_input_uses_silos_message_format() -> None:
    got: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> str:
        got.append(await ctx.call_tool("get_opportunity", {"opportunityID": "OPP-004"}))
        return "ok"

    await silo.run(ENV, "TASK-COUNT", agent)
    assert got[0].is_error is True
    assert got[0].output["code"] == "invalid_input"
    assert got[0].output["message"] == (
        'Invalid arguments for "get_opportunity": "opportunityId" is required; '
        '"opportunityID" is not a parameter; expected one of: opportunityId.'
    )


async def test_section1_invalid_input_reports_all_violations_at_once() -> None:
    got: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> str:
        got.append(await ctx.call_tool("get_opportunity", {"a": 1, "b": 2}))
        return "ok"

    await silo.run(ENV, "TASK-COUNT", agent)
    message = got[0].output["message"]
    assert '"opportunityId" is required' in message
    assert '"a" is not a parameter' in message
    assert '"b" is not a parameter' in message


async def test_section1_tool_error_comes_back_as_a_value_with_code_message_details() -> None:
    got: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> str:
        got.append(await ctx.call_tool("reject", {}))
        got.append(await ctx.call_tool("get_opportunity", {"opportunityId": "OPP-999"}))
        return "ok"

    result = await silo.run(ENV, "TASK-COUNT", agent)
    assert got[0] == silo.ToolResult(
        {"code": "conflict", "message": "not now", "details": {"why": "busy"}}, is_error=True
    )
    assert got[1].output["code"] == "not_found"
    assert result.tool_errors == 2
    assert result.tool_faults == 0


async def test_section1_environment_fault_is_internal_error_counted_apart_and_traced() -> None:
    got: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> str:
        got.append(await ctx.call_tool("crash", {}))
        await ctx.call_tool("bump", {})
        return "ok"

    result = await silo.run(ENV, "TASK-COUNT", agent)
    assert got[0].is_error is True
    assert got[0].output["code"] == "internal_error"
    assert result.tool_faults == 1
    assert result.tool_errors == 0
    assert result.tool_calls == 2
    assert result.passed is True  # the rollout continued
    fault = next(e for e in result.trace if e["type"] == "tool_result" and "fault" in e)["fault"]
    assert fault["type"] == "LookupError"
    assert "Traceback" in fault["traceback"]
    assert result.result_dict()["toolFaults"] == 1


async def test_section1_partial_output_is_graded_when_cancelled_and_return_wins() -> None:
    async def stopped(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        ctx.set_output("ok")
        await ctx.call_tool("hang", {})
        return "never"

    async def returns(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        ctx.set_output("partial")
        return "ok"

    cancelled = await silo.run(ENV, "TASK-COUNT", stopped, timeout=0.01)
    assert cancelled.termination_reason == "timeout"
    assert cancelled.output_text == "ok"
    returned = await silo.run(ENV, "TASK-COUNT", returns)
    assert returned.output_text == "ok"
    assert returned.passed is True


# --- Section 2: scoring, results, the verifier always runs -----------------------------------


async def test_section2_passed_is_all_required_reward_is_share_of_all_checks() -> None:
    result = await silo.run(ENV, "TASK-COUNT", solver)
    assert result.passed is True
    assert result.reward == 0.75  # 3 of 4 checks (one optional fails)
    assert [c.required for c in result.checks] == [True, True, False, False]

    async def wrong(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        return "nope"

    failed = await silo.run(ENV, "TASK-COUNT", wrong)
    assert failed.passed is False
    assert failed.reward == 0.5


async def test_section2_verifier_without_required_check_is_an_error(tmp_path: Path) -> None:
    result = await silo.run(ENV, "TASK-OPT", solver, runs_dir=tmp_path)
    assert result.passed is False
    assert result.error
    assert result.run_dir is not None
    assert (result.run_dir / "result.json").is_file()


async def test_section2_verifier_that_raises_gives_failed_result_with_all_artifacts(
    tmp_path: Path,
) -> None:
    result = await silo.run(ENV, "TASK-BOOM", solver, runs_dir=tmp_path)
    assert result.passed is False
    assert result.error is not None and "verifier bug" in result.error
    assert result.run_dir is not None
    names = sorted(p.name for p in result.run_dir.iterdir())
    assert names == ["result.json", "run.json", "state-diff.json", "trace.jsonl"]


async def test_section2_verifier_runs_after_agent_crash_with_agent_error() -> None:
    async def crasher(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        raise ValueError("agent bug")

    result = await silo.run(ENV, "TASK-COUNT", crasher)
    assert result.termination_reason == "agent_error"
    assert isinstance(result.error, str) and "agent bug" in result.error
    assert [c.label for c in result.checks][:1] == ["counter moved"]
    assert result.checks[0].passed is True  # graded on the world the crash left behind
    assert result.trace[-1]["type"] == "verifier_result"


async def test_section2_outer_cancellation_propagates_after_artifacts_are_written(
    tmp_path: Path,
) -> None:
    started = anyio.Event()

    async def agent(ctx: silo.AgentContext) -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    returned: list[silo.RunResult] = []
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def go() -> None:
                returned.append(await silo.run(ENV, "TASK-COUNT", agent, runs_dir=tmp_path))

            tg.start_soon(go)
            await started.wait()
            scope.cancel()
    assert returned == []  # re-raised, never turned into a return value
    (run_dir,) = list(tmp_path.iterdir())
    result = json.loads((run_dir / "result.json").read_text())
    assert result["terminationReason"] == "cancelled"
    lines = (run_dir / "trace.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "verifier_result"


async def test_section2_run_result_attributes() -> None:
    result = await silo.run(ENV, "TASK-COUNT", solver)
    for name in [
        "run_id",
        "task",
        "agent_output",
        "passed",
        "reward",
        "termination_reason",
        "tool_calls",
        "tool_errors",
        "tool_faults",
        "error",
        "checks",
        "trace",
        "state_diff",
        "run_dir",
        "started_at",
        "finished_at",
        "duration_ms",
    ]:
        assert hasattr(result, name), name
    assert isinstance(result.task, silo.Task)
    assert result.error is None
    assert result.run_dir is None


async def test_section2_trace_objects_are_the_ones_in_trace_jsonl(tmp_path: Path) -> None:
    result = await silo.run(ENV, "TASK-COUNT", solver, runs_dir=tmp_path)
    assert result.run_dir is not None
    on_disk = [
        json.loads(line) for line in (result.run_dir / "trace.jsonl").read_text().splitlines()
    ]
    assert on_disk == result.trace
    tool_result = next(e for e in on_disk if e["type"] == "tool_result")
    assert tool_result["isError"] is False and "is_error" not in tool_result
    assert all("type" in event for event in result.trace)
    assert result.trace[0]["type"] == "run_start"
    assert result.trace[-1]["type"] == "verifier_result"


# --- Section 3: artifacts on disk -----------------------------------------------------------

_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


async def test_section3_result_and_state_diff_have_no_timestamps_no_run_ids(
    tmp_path: Path,
) -> None:
    result = await silo.run(ENV, "TASK-COUNT", solver, runs_dir=tmp_path)
    assert result.run_dir is not None
    for name in ["result.json", "state-diff.json"]:
        text = (result.run_dir / name).read_text()
        assert result.run_id not in text, name
        assert _TIMESTAMP.search(text) is None, name
        assert "runId" not in text and "At" not in text, name
    result_json = json.loads((result.run_dir / "result.json").read_text())
    assert result_json == result.result_dict()
    for key in ["passed", "reward", "terminationReason", "toolCalls", "toolErrors", "toolFaults"]:
        assert key in result_json
    run_json = json.loads((result.run_dir / "run.json").read_text())
    assert run_json["runId"] == result.run_id
    assert "startedAt" in run_json and "durationMs" in run_json
    assert run_json["config"] == {"maxToolCalls": 100, "timeoutMs": 120000, "tokenLimit": None}
    assert result.run_dir == tmp_path / result.run_id


async def test_section6_tool_outputs_are_copies() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        first = await ctx.call_tool("get_opportunity", {"opportunityId": "OPP-004"})
        first.output["stage"] = "hacked"
        second = await ctx.call_tool("get_opportunity", {"opportunityId": "OPP-004"})
        return str(second.output["stage"])

    result = await silo.run(ENV, "TASK-COUNT", agent)
    assert result.output_text == "open"
    assert result.state_diff == silo.state_diff(make_world(), make_world())


# --- Section 2: run_many --------------------------------------------------------------------


async def test_section2_run_many_input_order_fresh_worlds_failures_isolated() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        if "Anything" in ctx.task:
            raise RuntimeError("one rollout fails")
        count = await ctx.call_tool("bump", {})
        await anyio.lowlevel.checkpoint()
        return "ok" if count.output == 1 else f"shared world: {count.output}"

    results = await silo.run_many(
        ENV, ["TASK-COUNT", "TASK-BOOM", "TASK-COUNT"], agent, runs=3, concurrency=4
    )
    assert [r.task.id for r in results] == ["TASK-COUNT"] * 3 + ["TASK-BOOM"] * 3 + [
        "TASK-COUNT"
    ] * 3
    counts = [r for r in results if r.task.id == "TASK-COUNT"]
    assert all(r.passed and r.output_text == "ok" for r in counts)
    assert all(r.termination_reason == "agent_error" for r in results if r.task.id == "TASK-BOOM")
    assert len({r.run_id for r in results}) == 9


# --- Section 6: determinism across backends --------------------------------------------------


def _artifacts_on(backend: str, runs_dir: Path) -> tuple[str, str]:
    async def once() -> silo.RunResult:
        return await silo.run(ENV, "TASK-COUNT", solver, runs_dir=runs_dir)

    result = anyio.run(once, backend=backend)
    assert result.run_dir is not None
    return (
        (result.run_dir / "result.json").read_text(),
        (result.run_dir / "state-diff.json").read_text(),
    )


def test_section6_result_and_state_diff_byte_identical_on_asyncio_and_trio(
    tmp_path: Path,
) -> None:
    assert _artifacts_on("asyncio", tmp_path / "a") == _artifacts_on("trio", tmp_path / "t")


# --- Section 4: the CLI ---------------------------------------------------------------------

AGENTS = """
async def agent(ctx):
    return "default"


async def other(ctx):
    return "other"
"""


def cli(*args: str) -> Any:
    """Invoke ``silo-async`` in-process; stdout and stderr stay apart."""
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory (the cwd) with one crm environment whose name is not an identifier."""
    monkeypatch.chdir(tmp_path)
    created = cli("init", "support-desk", "--template", "crm")
    assert created.exit_code == 0, created.output
    return tmp_path


def _one_error_line(result: Any, code: str) -> None:
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {code}: "), lines[0]


def test_section4_python_dash_m_and_console_script() -> None:
    from importlib.metadata import entry_points

    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts")}
    assert "silo-async" in scripts
    done = subprocess.run(
        [sys.executable, "-m", "silo_async", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert "silo-async" in done.stdout


def test_section4_commands_and_subcommands_exist() -> None:
    groups = {
        "env": ["validate", "list"],
        "data": ["list", "show", "add", "update", "remove"],
        "task": ["list", "show", "add", "update", "remove"],
        "tool": ["add", "list"],
        "verifier": ["add", "list"],
    }
    for group, subs in groups.items():
        for sub in subs:
            assert cli(group, sub, "--help").exit_code == 0, (group, sub)
    assert cli("init", "--help").exit_code == 0
    run_help = cli("run", "--help").output
    for flag in ["--env", "--task", "--agent", "--runs", "--max-tool-calls", "--timeout-ms"]:
        assert flag in run_help, flag
    assert "--json" in run_help


def test_section3_environment_manifest_keys_and_layout(project: Path) -> None:
    root = project / ".silo" / "environments" / "support-desk"
    manifest = json.loads((root / "silo.environment.json").read_text())
    assert list(manifest) == ["name", "template", "templateVersion", "entrypoint", "tools"]
    assert manifest["name"] == "support-desk"
    for part in [
        "__init__.py",
        "environment.py",
        "state.py",
        "data",
        "tasks",
        "tools",
        "verifiers",
    ]:
        assert (root / part).exists(), part
    assert (root / "tools" / "__init__.py").is_file()
    assert (root / "verifiers" / "__init__.py").is_file()


def test_section3_task_files_use_camelcase_keys(project: Path) -> None:
    added = cli(
        "task", "add", "TASK-900", "--env", "support-desk", "--title", "T",
        "--instruction", "Do it.", "--verifier", "VER-001",
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    path = project / ".silo/environments/support-desk/tasks/TASK-900.json"
    data = json.loads(path.read_text())
    assert list(data) == ["id", "title", "instruction", "verifierId", "difficulty"]
    assert data["difficulty"] == "unspecified"


def test_section4_every_listing_and_show_command_prints_json(project: Path) -> None:
    commands = [
        ["env", "list"],
        ["env", "validate", "--env", "support-desk"],
        ["data", "list", "--env", "support-desk"],
        ["data", "show", "accounts", "--env", "support-desk"],
        ["task", "list", "--env", "support-desk"],
        ["task", "show", "TASK-001", "--env", "support-desk"],
        ["tool", "list", "--env", "support-desk"],
        ["verifier", "list", "--env", "support-desk"],
    ]
    for command in commands:
        result = cli(*command, "--json")
        assert result.exit_code == 0, (command, result.output)
        json.loads(result.stdout)


def test_section4_silo_errors_are_one_line_code_and_message_exit_1(project: Path) -> None:
    _one_error_line(cli("task", "list", "--env", "nope"), "environment_not_found")
    _one_error_line(cli("init", "support-desk"), "environment_already_exists")
    _one_error_line(cli("init", "other", "--template", "nope"), "template_not_found")
    _one_error_line(cli("init", "../escape"), "unsafe_name")
    _one_error_line(cli("task", "show", "TASK-404", "--env", "support-desk"), "task_not_found")
    _one_error_line(cli("data", "show", "nothing", "--env", "support-desk"), "data_not_found")


def test_section4_usage_errors_exit_2(project: Path) -> None:
    assert cli("run", "--env", "support-desk").exit_code == 2
    assert cli("no-such-command").exit_code == 2
    assert cli("run", "--env", "support-desk", "--task", "TASK-001", "--runs", "x").exit_code == 2


def test_section5_failed_creation_leaves_nothing_and_overwrites_nothing(project: Path) -> None:
    environments = project / ".silo" / "environments"
    manifest = environments / "support-desk" / "silo.environment.json"
    before = manifest.read_bytes()
    assert cli("init", "support-desk", "--template", "blank").exit_code == 1
    assert cli("init", "fresh", "--template", "nope").exit_code == 1
    assert sorted(p.name for p in environments.iterdir()) == ["support-desk"]
    assert manifest.read_bytes() == before


def _run(*extra: str) -> Any:
    return cli("run", "--env", "support-desk", "--task", "TASK-001", "--json", *extra)


def test_section4_run_writes_the_four_artifacts_under_silo_runs(project: Path) -> None:
    (project / "silo_agent.py").write_text(AGENTS)
    result = _run()
    assert result.exit_code in (0, 1), result.output  # 1: the idle agent fails the task
    report = json.loads(result.stdout)
    run_dir = project / ".silo" / "runs" / report["runId"]
    names = sorted(p.name for p in run_dir.iterdir())
    assert names == ["result.json", "run.json", "state-diff.json", "trace.jsonl"]
    assert report["agentOutput"] == "default"


def test_section1_agent_file_forms(project: Path) -> None:
    (project / "agents.py").write_text(AGENTS)
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "mod.py").write_text(AGENTS)
    assert json.loads(_run("--agent", "./agents.py").stdout)["agentOutput"] == "default"
    assert json.loads(_run("--agent", "./agents.py:other").stdout)["agentOutput"] == "other"
    assert json.loads(_run("--agent", "pkg.mod:other").stdout)["agentOutput"] == "other"


def test_section1_without_agent_only_silo_agent_py_is_used(project: Path) -> None:
    (project / "agent.py").write_text(AGENTS)
    missing = _run()
    assert missing.exit_code == 1
    assert "silo_agent.py" in missing.stderr
    assert missing.stdout == ""


def test_section1_file_without_async_callable_gets_a_clear_error(project: Path) -> None:
    (project / "plain.py").write_text("def agent(ctx):\n    return 1\n\nvalue = 3\n")
    result = _run("--agent", "./plain.py")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ")
    assert "plain.py" in result.stderr
    assert "agent" in result.stderr


def test_section4_agent_loading_errors_carry_a_code(project: Path) -> None:
    (project / "plain.py").write_text("value = 3\n")
    result = _run("--agent", "./plain.py")
    assert result.exit_code == 1
    assert result.stderr.startswith('error: agent_not_found: Agent file "./plain.py" has no')
    missing = _run("--agent", "./nowhere.py")
    assert missing.stderr.startswith('error: agent_not_found: Agent file "./nowhere.py" was not')
    (project / "sync.py").write_text("def agent(ctx):\n    return 1\n")
    assert _run("--agent", "./sync.py").stderr.startswith("error: agent_invalid: ")


def test_section3_on_disk_environment_loads_under_a_non_identifier_name(project: Path) -> None:
    env = silo.load_environment("support-desk")
    assert isinstance(env, silo.Environment)
    assert env.name == "support-desk"
    assert "support-desk" not in sys.modules
    assert not any(name.startswith("support-desk") for name in sys.modules)


# --- More of sections 1, 2, 3 and 6 ---------------------------------------------------------


async def test_section1_call_tool_is_always_a_checkpoint() -> None:
    async def spinner(ctx: silo.AgentContext) -> str:
        while True:  # only sync tools and unknown names: call_tool is the one checkpoint
            await ctx.call_tool("bump", {})
            await ctx.call_tool("no-such-tool", {})

    with anyio.fail_after(10):
        # 0.2 s, not 0.01: on a loaded machine the rollout's start alone can take 10 ms, so
        # the deadline passed before the first call (seen: tool_calls == 0).
        result = await silo.run(ENV, "TASK-COUNT", spinner, timeout=0.2, max_tool_calls=10**9)
    assert result.termination_reason == "timeout"
    assert result.tool_calls > 0


async def test_section1_hung_agent_is_stopped_and_still_graded() -> None:
    async def sleeper(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        await anyio.sleep_forever()
        return "never"

    with anyio.fail_after(10):
        # 0.2 s: the first call must come before the deadline even on a loaded machine.
        result = await silo.run(ENV, "TASK-COUNT", sleeper, timeout=0.2)
    assert result.termination_reason == "timeout"
    assert result.error is not None
    assert [c.passed for c in result.checks] == [True, False, True, False]


async def test_section2_input_schema_is_draft_2020_12() -> None:
    @silo.tool(
        name="pairs",
        description="Takes a tuple.",
        input_schema={
            "type": "object",
            "properties": {"pair": {"type": "array", "prefixItems": [{"type": "string"}]}},
        },
    )
    def pairs(state: Any, args: Any) -> Any:
        return "accepted"

    (bound,) = silo.bind_tools(make_world(), [pairs])
    env = silo.Environment(
        name="draft", create_state=make_world, tools=[pairs], verifiers=[counted], tasks=ENV_TASKS
    )
    got: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> str:
        got.append(await ctx.call_tool("pairs", {"pair": [1]}))  # prefixItems is 2020-12 only
        got.append(await ctx.call_tool("pairs", {"pair": ["a", 1]}))
        return "ok"

    await silo.run(env, "TASK-COUNT", agent)
    assert bound.name == "pairs"
    assert got[0].is_error is True
    assert got[0].output["code"] == "invalid_input"
    assert got[1] == silo.ToolResult("accepted")


async def test_section3_trace_jsonl_is_written_as_events_happen(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        (run_dir,) = list(tmp_path.iterdir())
        lines = (run_dir / "trace.jsonl").read_text().splitlines()
        seen.append([json.loads(line)["type"] for line in lines])
        return "ok"

    await silo.run(ENV, "TASK-COUNT", agent, runs_dir=tmp_path)
    assert seen == [["run_start", "tool_call", "tool_result"]]


def test_section2_a_hung_async_verifier_is_bounded() -> None:
    import trio.testing

    @silo.verifier(id="VER-HANG", task_id="TASK-HANG")
    async def hangs(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        await anyio.sleep_forever()
        return []

    env = silo.Environment(
        name="hang",
        create_state=make_world,
        tools=[bump],
        verifiers=[hangs],
        tasks=[silo.Task("TASK-HANG", "Hang", "Anything.", "VER-HANG")],
    )

    async def main() -> silo.RunResult:
        return await silo.run(env, "TASK-HANG", solver)

    # Virtual time: the verifier's bound elapses at once, whatever its length.
    clock = trio.testing.MockClock(autojump_threshold=0)
    result = anyio.run(main, backend="trio", backend_options={"clock": clock})
    assert result.passed is False
    assert result.error is not None
    assert result.trace[-1]["type"] == "verifier_result"


async def test_section2_run_many_runs_dir_one_directory_per_rollout(tmp_path: Path) -> None:
    results = await silo.run_many(ENV, ["TASK-COUNT"], solver, runs=3, runs_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(r.run_id for r in results)
    assert all(r.run_dir == tmp_path / r.run_id for r in results)


async def test_section2_cancelled_run_many_propagates_after_artifacts_are_written(
    tmp_path: Path,
) -> None:
    started = 0
    all_started = anyio.Event()

    async def agent(ctx: silo.AgentContext) -> str:
        nonlocal started
        started += 1
        if started == 3:
            all_started.set()
        await anyio.sleep_forever()
        return "never"

    returned: list[object] = []
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def go() -> None:
                returned.append(
                    await silo.run_many(ENV, ["TASK-COUNT"], agent, runs=3, runs_dir=tmp_path)
                )

            tg.start_soon(go)
            await all_started.wait()
            scope.cancel()
    assert returned == []
    run_dirs = list(tmp_path.iterdir())
    assert len(run_dirs) == 3
    for run_dir in run_dirs:
        result = json.loads((run_dir / "result.json").read_text())
        assert result["terminationReason"] == "cancelled"


async def test_section6_artifacts_identical_whatever_the_concurrency(tmp_path: Path) -> None:
    def texts(results: list[silo.RunResult]) -> list[tuple[str, str]]:
        out = []
        for r in results:
            assert r.run_dir is not None
            out.append(
                (
                    (r.run_dir / "result.json").read_text(),
                    (r.run_dir / "state-diff.json").read_text(),
                )
            )
        return out

    tasks = ["TASK-COUNT", "TASK-BOOM"]
    serial = await silo.run_many(ENV, tasks, solver, runs=2, concurrency=1, runs_dir=tmp_path / "a")
    wide = await silo.run_many(ENV, tasks, solver, runs=2, concurrency=8, runs_dir=tmp_path / "b")
    assert texts(serial) == texts(wide)


# --- More of sections 1, 3, 4 and 6 (CLI and package) ---------------------------------------


def test_section4_every_command_that_prints_something_has_json() -> None:
    commands = [
        ["init"],
        ["env", "list"],
        ["env", "validate"],
        *[["data", sub] for sub in ["list", "show", "add", "update", "remove"]],
        *[["task", sub] for sub in ["list", "show", "add", "update", "remove"]],
        ["tool", "add"],
        ["tool", "list"],
        ["verifier", "add"],
        ["verifier", "list"],
        ["run"],
    ]
    missing = [c for c in commands if "--json" not in cli(*c, "--help").output]
    assert missing == []


def test_section4_long_work_stays_quiet_when_piped(project: Path) -> None:
    (project / "silo_agent.py").write_text(AGENTS)
    result = cli("run", "--env", "support-desk", "--task", "TASK-001", "--runs", "3")
    assert result.exit_code in (0, 1), result.output
    assert result.stderr == ""
    assert "\x1b[" not in result.stdout  # no terminal control codes when not a terminal
    assert len(list((project / ".silo" / "runs").iterdir())) == 3


def test_section4_run_flags_reach_the_run(project: Path) -> None:
    (project / "silo_agent.py").write_text(AGENTS)
    result = _run("--max-tool-calls", "7", "--timeout-ms", "5000")
    report = json.loads(result.stdout)
    run_json = json.loads((project / ".silo" / "runs" / report["runId"] / "run.json").read_text())
    assert run_json["config"] == {"maxToolCalls": 7, "timeoutMs": 5000, "tokenLimit": None}


def test_section3_tasks_are_discovered_tools_only_from_the_registry(project: Path) -> None:
    root = project / ".silo" / "environments" / "support-desk"
    task = {"id": "TASK-777", "title": "T", "instruction": "I.", "verifierId": "VER-001"}
    (root / "tasks" / "TASK-777.json").write_text(json.dumps(task))
    (root / "tools" / "stray.py").write_text(
        "import silo_async as silo\n\n\n"
        '@silo.tool(name="stray_tool", description="Not registered.")\n'
        "def stray_tool(state, input):\n    return 1\n"
    )
    (root / "verifiers" / "stray_verifier.py").write_text(
        "import silo_async as silo\n\n\n"
        '@silo.verifier(id="VER-STRAY", task_id="TASK-777")\n'
        "def stray(final, initial, ctx):\n    return [silo.check('x', True)]\n"
    )
    verifiers = cli("verifier", "list", "--env", "support-desk", "--json")
    assert verifiers.exit_code == 0, verifiers.output
    assert "VER-001" in verifiers.stdout
    assert "VER-STRAY" not in verifiers.stdout
    tasks = json.loads(cli("task", "list", "--env", "support-desk", "--json").stdout)
    assert "TASK-777" in [t["id"] for t in tasks]
    tools = json.loads(cli("tool", "list", "--env", "support-desk", "--json").stdout)
    assert "stray_tool" not in json.dumps(tools)
    env = silo.load_environment("support-desk")
    state = env.create_state()
    assert "stray_tool" not in [t.name for t in env.bind_tools(state)]


def test_section3_tool_list_json_uses_camelcase_input_schema(project: Path) -> None:
    tools = json.loads(cli("tool", "list", "--env", "support-desk", "--json").stdout)
    entries = tools if isinstance(tools, list) else tools["tools"]
    assert entries
    assert all("inputSchema" in t and "input_schema" not in t for t in entries)


def test_section5_names_are_validated_because_they_become_paths_and_code(project: Path) -> None:
    env = ["--env", "support-desk"]
    _one_error_line(cli("tool", "add", "class", *env), "unsafe_name")
    _one_error_line(cli("verifier", "add", "../VER", *env, "--task", "TASK-001"), "unsafe_name")
    task = ["--title", "t", "--instruction", "i", "--verifier", "VER-001"]
    _one_error_line(cli("task", "add", "../x", *env, *task), "unsafe_name")
    (project / "d.json").write_text("[]")
    _one_error_line(cli("data", "add", "../d", *env, "--file", "d.json"), "unsafe_name")
    assert not (project / ".silo" / "environments" / "d.json").exists()


def test_section1_agent_error_names_what_was_found(project: Path) -> None:
    (project / "agents.py").write_text("async def helper(ctx):\n    return 1\n")
    result = _run("--agent", "./agents.py:nope")
    assert result.exit_code == 1
    assert "nope" in result.stderr
    assert "helper" in result.stderr


def test_section6_core_dependencies_are_anyio_attrs_jsonschema_click() -> None:
    from importlib.metadata import requires

    core = {
        re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower()
        for req in requires("silo_async") or []
        if "extra ==" not in req
    }
    assert core == {"anyio", "attrs", "jsonschema", "click"}


def test_section4_anyio_run_appears_only_in_the_cli() -> None:
    package = Path(silo.__file__).parent
    offenders = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "anyio.run(" in path.read_text() and path.relative_to(package).parts[0] != "cli"
    ]
    assert offenders == []


def test_section6_shipped_worlds_never_read_the_wall_clock_or_global_random() -> None:
    templates = Path(silo.__file__).parent / "templates"
    # Task families are given their own seeded random.Random (DESIGN section 18): naming the
    # class is allowed, calling the module's global functions is not.
    banned = re.compile(
        r"^\s*from random import (?!Random\b)|\brandom\.(?!Random\b)\w+\(|datetime\.now"
        r"|date\.today|time\.time\(|utcnow",
        re.MULTILINE,
    )
    offenders = [
        str(path.relative_to(templates))
        for path in templates.rglob("*.py")
        if banned.search(path.read_text())
    ]
    assert offenders == []


async def test_section2_run_many_never_exceeds_its_concurrency() -> None:
    running = 0
    peak = 0

    async def agent(ctx: silo.AgentContext) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        for _ in range(3):
            await ctx.call_tool("bump", {})
            await anyio.lowlevel.checkpoint()
        running -= 1
        return "ok"

    results = await silo.run_many(ENV, ["TASK-COUNT"], agent, runs=6, concurrency=2)
    assert peak == 2
    assert len(results) == 6


def test_section5_nothing_is_overwritten(project: Path) -> None:
    env = ["--env", "support-desk"]
    root = project / ".silo" / "environments" / "support-desk"
    (project / "new.json").write_text('{"replaced": true}')
    data = root / "data" / "accounts.json"
    before = data.read_bytes()
    _one_error_line(
        cli("data", "add", "accounts", *env, "--file", "new.json"), "data_already_exists"
    )
    assert data.read_bytes() == before
    task_file = root / "tasks" / "TASK-001.json"
    before = task_file.read_bytes()
    task = ["--title", "t", "--instruction", "i", "--verifier", "VER-001"]
    _one_error_line(cli("task", "add", "TASK-001", *env, *task), "task_already_exists")
    assert task_file.read_bytes() == before


def test_section5_a_failed_tool_add_leaves_nothing_half_made(project: Path) -> None:
    tools = project / ".silo" / "environments" / "support-desk" / "tools"
    (tools / "__init__.py").unlink()
    before = sorted(p.name for p in tools.iterdir())
    _one_error_line(cli("tool", "add", "fresh_tool", "--env", "support-desk"), "registry_not_found")
    assert sorted(p.name for p in tools.iterdir()) == before


async def test_section1_call_tool_never_raises_for_a_rejected_call() -> None:
    calls: list[tuple[Any, Any]] = [
        ("get_opportunity", None),
        ("get_opportunity", [1]),
        ("get_opportunity", "text"),
        ("get_opportunity", {"opportunityId": 5}),
        ("bump", {"extra": 1}),
        (123, {}),
    ]
    got: list[silo.ToolResult] = []

    async def agent(ctx: silo.AgentContext) -> str:
        for name, args in calls:
            got.append(await ctx.call_tool(name, args))
        return "ok"

    result = await silo.run(ENV, "TASK-COUNT", agent)
    assert result.termination_reason == "completed"
    assert [r.is_error for r in got] == [True] * len(calls)
    assert [r.output["code"] for r in got] == ["invalid_input"] * 5 + ["tool_not_found"]
    assert result.tool_errors == len(calls)
