"""run(): the agent contract, real limits, grading that always happens, artifacts."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo

from .worlds import ENV, blocker, noop

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend(fake_clock_backend: Any) -> Any:
    """Limit tests run on asyncio and on trio in virtual time."""
    return fake_clock_backend


async def test_passing_run_and_its_trace() -> None:
    result = await silo.run(ENV, "TASK-BLOCK", blocker)
    assert (result.passed, result.reward, result.termination_reason) == (True, 1.0, "completed")
    assert (result.tool_calls, result.tool_errors, result.tool_faults, result.error) == (
        2,
        0,
        0,
        None,
    )
    types = [e["type"] for e in result.trace]
    assert types == [
        "run_start", "tool_call", "tool_result", "tool_call", "tool_result",
        "agent_output", "run_end", "verifier_result",
    ]  # fmt: skip
    assert [e["seq"] for e in result.trace] == list(range(1, 9))
    start = result.trace[0]
    assert start["task"]["id"] == "TASK-BLOCK" and start["tools"] == [
        "get_customer",
        "block_customer",
        "explode",
        "slow",
    ]
    assert start["config"] == {"maxToolCalls": 100, "timeoutMs": 120000, "tokenLimit": None}
    call, res = result.trace[1], result.trace[2]
    assert call["callId"] == res["callId"] == 1 and res["isError"] is False
    assert isinstance(res["durationMs"], float) and res["at"].endswith("Z")
    assert result.trace[-1]["verifierId"] == "VER-BLOCK"
    assert result.state_diff == {
        "scalars": [],
        "collections": {
            "customers": {
                "added": [],
                "removed": [],
                "changed": ["CUS-001"],
                "fields": {"CUS-001": [{"path": "status", "from": "active", "to": "blocked"}]},
            },
            "log": {"added": ["LOG-1"], "removed": [], "changed": []},
        },
    }


async def test_context_exposes_task_tools_and_budget() -> None:
    seen: dict[str, Any] = {}

    async def agent(ctx: silo.AgentContext) -> None:
        seen["task"] = ctx.task
        seen["tools"] = [t.to_dict()["name"] for t in ctx.tools]
        seen["before"] = (ctx.remaining_tool_calls, ctx.tool_calls, ctx.cancelled)
        await ctx.call_tool("get_customer", {"customerId": "CUS-002"})
        seen["after"] = (ctx.remaining_tool_calls, ctx.tool_calls)
        seen["time"] = ctx.remaining_time
        seen["scope"] = isinstance(ctx.cancel_scope, anyio.CancelScope)

    await silo.run(ENV, "TASK-BLOCK", agent, max_tool_calls=5, timeout=10)
    assert seen["task"] == "Block customer CUS-001."
    assert seen["tools"] == ["get_customer", "block_customer", "explode", "slow"]
    assert seen["before"] == (5, 0, False) and seen["after"] == (4, 1)
    assert 0 < seen["time"] <= 10 and seen["scope"]


@pytest.mark.parametrize(
    ("output", "text"),
    [("2", "2"), (None, ""), (2, "2"), ({"a": [1, "x"]}, '{"a":[1,"x"]}'), ("ü", "ü")],
)
async def test_output_rule(output: Any, text: str) -> None:
    async def agent(ctx: silo.AgentContext) -> Any:
        return output

    result = await silo.run(ENV, "TASK-ANSWER", agent)
    assert result.output_text == text and result.agent_output == output
    assert result.trace[-3] == {**result.trace[-3], "type": "agent_output", "output": text}


async def test_hung_agent_is_stopped_by_the_timeout() -> None:
    async def hung(ctx: silo.AgentContext) -> str:
        ctx.set_output("2")
        await anyio.sleep_forever()
        return "never"

    # A second: the partial answer must be left before the deadline (real time under asyncio;
    # trio runs in virtual time).
    result = await silo.run(ENV, "TASK-ANSWER", hung, timeout=1.0)
    assert result.termination_reason == "timeout"
    assert result.error == "Time limit exceeded (1 s)."
    assert result.agent_output == "2" and result.passed  # the partial answer is graded


async def test_a_sleeping_tool_is_cancelled_by_the_timeout() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("slow", {"seconds": 3600})
        return "unreachable"

    # A second: the call must start before the deadline (real time under asyncio).
    result = await silo.run(ENV, "TASK-ANSWER", agent, timeout=1.0)
    assert result.termination_reason == "timeout" and result.agent_output is None
    assert result.tool_calls == 1
    assert [e["type"] for e in result.trace].count("tool_result") == 0


async def test_exactly_n_calls_run_and_the_next_is_refused() -> None:
    after: list[str] = []

    async def greedy(ctx: silo.AgentContext) -> None:
        for _ in range(1000):
            await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
        after.append("returned")

    result = await silo.run(ENV, "TASK-BLOCK", greedy, max_tool_calls=3)
    assert result.termination_reason == "max_tool_calls"
    assert result.tool_calls == 3 and after == []
    assert [e["type"] for e in result.trace].count("tool_call") == 3
    assert result.error == "Tool call limit exceeded (3)."


async def test_default_limit_is_100_and_call_101_is_not_recorded() -> None:
    async def greedy(ctx: silo.AgentContext) -> None:
        while True:
            await ctx.call_tool("get_customer", {"customerId": "CUS-001"})

    result = await silo.run(ENV, "TASK-BLOCK", greedy)
    calls = [e for e in result.trace if e["type"] == "tool_call"]
    assert result.tool_calls == 100 and len(calls) == 100 and calls[-1]["callId"] == 100


async def test_agent_that_catches_the_cancellation_cannot_keep_calling() -> None:
    async def stubborn(ctx: silo.AgentContext) -> str:
        for _ in range(3):
            try:
                await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
            except anyio.get_cancelled_exc_class():
                pass
        return "2"

    result = await silo.run(ENV, "TASK-ANSWER", stubborn, max_tool_calls=1)
    assert result.termination_reason == "max_tool_calls" and result.tool_calls == 1
    assert result.agent_output == "2"


async def test_agent_error_keeps_the_message_and_is_still_graded(tmp_path: Path) -> None:
    async def crashes(ctx: silo.AgentContext) -> None:
        await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
        raise RuntimeError("model server down")

    result = await silo.run(ENV, "TASK-BLOCK", crashes, runs_dir=tmp_path)
    assert (
        result.termination_reason == "agent_error"
        and result.error == "RuntimeError: model server down"
    )
    assert result.passed  # the world was changed before the crash: the verifier still ran
    assert result.run_dir is not None
    written = json.loads((result.run_dir / "result.json").read_text())
    assert written["error"] == "RuntimeError: model server down"


async def test_sync_agent_is_an_agent_error_that_says_how_to_fix_it() -> None:
    def not_async(ctx: silo.AgentContext) -> str:
        return "2"

    result = await silo.run(ENV, "TASK-ANSWER", not_async)  # type: ignore[arg-type]
    assert result.termination_reason == "agent_error"
    assert result.error is not None and "async def agent(ctx)" in result.error


async def test_tool_fault_is_counted_apart_and_traced() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        faulty = await ctx.call_tool("explode")
        wrong = await ctx.call_tool("get_customer", {})
        assert faulty.is_error and wrong.is_error
        return str(faulty.output["code"])

    result = await silo.run(ENV, "TASK-ANSWER", agent)
    assert (result.tool_calls, result.tool_errors, result.tool_faults) == (2, 1, 1)
    fault_event = next(e for e in result.trace if e["type"] == "tool_result" and "fault" in e)
    assert (
        fault_event["fault"]["type"] == "ZeroDivisionError"
        and "Traceback" in fault_event["fault"]["traceback"]
    )
    assert result.result_dict()["toolFaults"] == 1


async def test_unknown_tool_suggests_the_closest_names() -> None:
    async def agent(ctx: silo.AgentContext) -> Any:
        return (await ctx.call_tool("get_custmer", {"customerId": "CUS-001"})).output

    result = await silo.run(ENV, "TASK-ANSWER", agent)
    output = result.agent_output
    assert output["code"] == "tool_not_found"
    assert output["message"].startswith('Unknown tool "get_custmer". Closest tools: get_customer')
    assert output["details"]["suggestions"][0] == "get_customer"
    assert result.tool_errors == 1


async def test_verifier_that_raises_still_yields_a_written_result(tmp_path: Path) -> None:
    result = await silo.run(ENV, "TASK-RAISES", noop, runs_dir=tmp_path)
    assert not result.passed and result.reward == 0.0
    assert result.error == "Verifier VER-RAISES failed: KeyError: 'missing-field'"
    run_dir = result.run_dir
    assert run_dir is not None
    assert sorted(p.name for p in run_dir.iterdir()) == [
        "result.json",
        "run.json",
        "state-diff.json",
        "trace.jsonl",
    ]
    written = json.loads((run_dir / "result.json").read_text())
    assert written["passed"] is False and "KeyError" in written["error"]
    last = json.loads((run_dir / "trace.jsonl").read_text().splitlines()[-1])
    assert last["type"] == "verifier_result" and "KeyError" in last["error"]


async def test_verifier_without_required_checks_is_an_error() -> None:
    result = await silo.run(ENV, "TASK-OPTIONAL", noop)
    assert not result.passed
    assert result.error == (
        "Verifier VER-OPTIONAL failed: NoRequiredChecksError: VER-OPTIONAL returned no required "
        "checks; a task cannot be graded on optional evidence alone."
    )


async def test_outer_cancellation_writes_artifacts_then_propagates(tmp_path: Path) -> None:
    started = anyio.Event()

    async def waits(ctx: silo.AgentContext) -> None:
        await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
        started.set()
        await anyio.sleep_forever()

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(functools.partial(silo.run, ENV, "TASK-BLOCK", waits, runs_dir=tmp_path))
            await started.wait()
            scope.cancel()
    assert scope.cancelled_caught  # the cancellation reached the caller
    [run_dir] = list(tmp_path.iterdir())
    written = json.loads((run_dir / "result.json").read_text())
    assert written["terminationReason"] == "cancelled" and written["passed"] is True
    assert (
        json.loads((run_dir / "trace.jsonl").read_text().splitlines()[-1])["type"]
        == "verifier_result"
    )


async def test_model_step_events() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        ctx.record_model_step(
            model="m-1", input_tokens=120, output_tokens=7, stop_reason="tool_use"
        )
        return "2"

    result = await silo.run(ENV, "TASK-ANSWER", agent)
    step = next(e for e in result.trace if e["type"] == "model_step")
    assert step["model"] == "m-1" and step["usage"] == {"inputTokens": 120, "outputTokens": 7}
    assert step["stopReason"] == "tool_use"
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (1, 120, 7)


async def test_setup_errors_are_raised_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(silo.SiloError) as info:
        await silo.run(ENV, "TASK-NOPE", noop, runs_dir=tmp_path)
    assert info.value.code == "task_not_found" and "Available: TASK-ANSWER" in info.value.message
    with pytest.raises(ValueError, match="max_tool_calls"):
        await silo.run(ENV, "TASK-BLOCK", noop, max_tool_calls=-1)
    with pytest.raises(ValueError, match="timeout"):
        await silo.run(ENV, "TASK-BLOCK", noop, timeout=0)
    assert list(tmp_path.iterdir()) == []


async def test_artifacts_have_silo_keys_and_no_timestamps(tmp_path: Path) -> None:
    result = await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=tmp_path)
    run_dir = result.run_dir
    assert run_dir is not None and run_dir.name == result.run_id
    written = json.loads((run_dir / "result.json").read_text())
    assert list(written) == [
        "passed", "reward", "rewardValid", "invalidReason", "requiredPassed", "requiredTotal",
        "failedRequired", "checksPassed", "checksFailed", "toolCalls", "toolErrors",
        "toolFaults", "injectedFaults", "recoveredFaults", "modelSteps", "inputTokens",
        "outputTokens", "userTurns", "userToolCalls", "terminationReason", "agentOutput",
        "error", "checks",
    ]  # fmt: skip
    for name in ("result.json", "state-diff.json"):
        text = (run_dir / name).read_text()
        assert result.run_id not in text and "2026-" not in text and text.endswith("}\n")
    run_json = json.loads((run_dir / "run.json").read_text())
    assert run_json["runId"] == result.run_id and run_json["taskId"] == "TASK-BLOCK"
    lines = (run_dir / "trace.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == result.trace


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_call_tool_is_a_checkpoint(anyio_backend: str) -> None:
    """A busy agent whose tools never await is still stopped: call_tool itself is a checkpoint.

    Real clock: in virtual time a task that never blocks would never let it pass. A second, so
    that the first call lands before the deadline on a loaded machine; the agent works 2 ms
    between calls without awaiting (a few hundred calls, not a million trace events).
    """
    calls = 0

    async def busy(ctx: silo.AgentContext) -> None:
        nonlocal calls
        while True:
            await ctx.call_tool("get_customer", {"customerId": "CUS-001"})  # a sync tool
            calls += 1
            busy_until = time.perf_counter() + 0.002
            while time.perf_counter() < busy_until:  # CPU work: the event loop is held
                pass

    result = await silo.run(ENV, "TASK-BLOCK", busy, max_tool_calls=10**9, timeout=1.0)
    assert result.termination_reason == "timeout"
    # Cancellation lands at the checkpoint that opens call_tool, before the call is counted.
    assert result.tool_calls == calls > 0


async def test_output_json_cannot_hold_is_kept_as_text_and_the_run_is_written(
    tmp_path: Path,
) -> None:
    async def circular(ctx: silo.AgentContext) -> Any:
        answer: dict[str, Any] = {"total": 2}
        answer["self"] = answer
        return answer

    result = await silo.run(ENV, "TASK-ANSWER", circular, runs_dir=tmp_path)
    assert result.termination_reason == "agent_error"
    assert result.error is not None and "cannot be written as JSON" in result.error
    assert result.output_text == str(result.agent_output) and "'total': 2" in result.output_text
    written = json.loads((tmp_path / result.run_id / "result.json").read_text())
    assert written["agentOutput"] == result.output_text


async def test_model_step_with_a_circular_field_fails_at_the_call() -> None:
    seen: list[str] = []

    async def agent(ctx: silo.AgentContext) -> str:
        loop: list[Any] = []
        loop.append(loop)
        try:
            ctx.record_model_step(model="m", raw=loop)
        except TypeError as exc:
            seen.append(str(exc))
        return "2"

    result = await silo.run(ENV, "TASK-ANSWER", agent)
    assert seen and "nested deeper than" in seen[0]
    assert result.passed and all(e["type"] != "model_step" for e in result.trace)


async def call_once(
    create_state: Callable[[], Any], tool: silo.Tool, verifier: silo.Verifier
) -> silo.RunResult:
    """Run task T-1 of a one-tool world with an agent that calls the tool once."""
    env = silo.Environment(
        name="one-tool",
        create_state=create_state,
        tools=[tool],
        verifiers=[verifier],
        tasks=[silo.Task("T-1", "Call", "Call the tool.", verifier.id)],
    )

    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool(tool.name, {})
        return "ok"

    return await silo.run(env, "T-1", agent)


class _Row(dict[str, Any]):
    """A dict subclass: not plain JSON data, so the snapshot falls back to a deep copy."""


@pytest.mark.parametrize("world", ["plain", "custom"])
async def test_verifier_sees_the_world_as_it_was_before_the_agent(world: str) -> None:
    def create_state() -> dict[str, Any]:
        row: dict[str, Any] = {"id": "A", "tags": ("x", "y"), "n": 1}
        return {"rows": [_Row(row) if world == "custom" else row], "count": 1}

    @silo.tool(name="bump", description="Change everything.")
    def bump(state: dict[str, Any], args: dict[str, Any]) -> None:
        state["rows"][0]["n"] = 2
        state["rows"][0]["tags"] = ["z"]
        state["count"] += 1

    seen: list[Any] = []

    @silo.verifier(id="VER-1", task_id="T-1")
    def verify(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        seen.append(initial)
        return [silo.check("bumped", final["count"] == 2)]

    result = await call_once(create_state, bump, verify)
    assert result.passed
    assert seen[0]["count"] == 1 and seen[0]["rows"][0]["n"] == 1
    assert list(seen[0]["rows"][0]["tags"]) == ["x", "y"]
    assert result.state_diff == {
        "scalars": [{"field": "count", "from": 1, "to": 2}],
        "collections": {
            "rows": {
                "added": [],
                "removed": [],
                "changed": ["A"],
                "fields": {
                    "A": [
                        {
                            "path": "tags",
                            "fromLength": 2,
                            "toLength": 1,
                            "added": ["z"],
                            "removed": ["x", "y"],
                        },
                        {"path": "n", "from": 1, "to": 2},
                    ]
                },
            }
        },
    }


async def test_outer_cancellation_still_lets_an_async_verifier_finish() -> None:
    """Without a run directory the shield is only entered when something is awaited."""
    started = anyio.Event()
    graded: list[bool] = []

    @silo.verifier(id="VER-SLOW", task_id="TASK-SLOW")
    async def slow_verifier(
        final: Any, initial: Any, ctx: silo.VerifierContext
    ) -> list[silo.Check]:
        await anyio.sleep(0.01)  # a checkpoint inside grading: cancelled unless shielded
        graded.append(True)
        return [silo.check("graded", True)]

    env = silo.Environment(
        name="slow-grade",
        create_state=dict,
        verifiers=[slow_verifier],
        tasks=[silo.Task("TASK-SLOW", "Slow", "Wait.", "VER-SLOW")],
    )

    async def waits(ctx: silo.AgentContext) -> None:
        started.set()
        await anyio.sleep_forever()

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(silo.run, env, "TASK-SLOW", waits)
            await started.wait()
            scope.cancel()
    assert scope.cancelled_caught and graded == [True]


@pytest.mark.parametrize("on_disk", [False, True])
async def test_trace_keeps_inputs_and_outputs_as_they_were_at_the_call(
    tmp_path: Path, on_disk: bool
) -> None:
    async def reuses_and_mutates(ctx: silo.AgentContext) -> str:
        args = {"customerId": "CUS-001"}
        first = await ctx.call_tool("get_customer", args)
        args["customerId"] = "CUS-002"  # the same dict, reused for the next call
        first.output["status"] = "edited by the agent"
        first.output["tags"].append("x")
        await ctx.call_tool("get_customer", args)
        return "2"

    result = await silo.run(
        ENV, "TASK-ANSWER", reuses_and_mutates, runs_dir=tmp_path if on_disk else None
    )
    calls = [e for e in result.trace if e["type"] == "tool_call"]
    outputs = [e["output"] for e in result.trace if e["type"] == "tool_result"]
    assert [c["input"] for c in calls] == [{"customerId": "CUS-001"}, {"customerId": "CUS-002"}]
    assert outputs[0] == {"id": "CUS-001", "status": "active", "tags": ["vip"]}


async def test_tool_event_lines_are_the_canonical_encoding_of_their_events() -> None:
    async def varied(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
        await ctx.call_tool("get_customer", {"customerId": 'ünïcode "quoted" \n'})
        await ctx.call_tool("get_customer", None)
        await ctx.call_tool("explode", {})
        await ctx.call_tool("no_such_tool", {"x": [1.5, True, None]})
        return "2"

    result = await silo.run(ENV, "TASK-ANSWER", varied)
    tool_lines = [line for line in result.trace_lines if '"type":"tool_' in line]
    assert len(tool_lines) == 10
    for line in tool_lines:
        event = json.loads(line)
        assert silo_encode(event) == line  # same bytes as encoding the dict form
        expected = ["seq", "type", "callId", "tool"]
        if event["type"] == "tool_call":
            expected += ["input", "at"]
        else:
            expected += ["output", "isError", "durationMs", "at"]
            expected += ["fault"] if "fault" in event else []
        assert list(event) == expected
    fault = json.loads(tool_lines[7])
    assert fault["isError"] is True and fault["fault"]["type"] == "ZeroDivisionError"


def silo_encode(event: dict[str, Any]) -> str:
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)


async def test_in_memory_and_on_disk_traces_are_the_same_lines(tmp_path: Path) -> None:
    async def varied(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
        await ctx.call_tool("get_customer", {"customerId": "nope"})
        await ctx.call_tool("explode", {})
        ctx.record_model_step(model="m", input_tokens=1, output_tokens=2)
        return "2"

    def normalised(lines: tuple[str, ...]) -> list[dict[str, Any]]:
        events = [json.loads(line) for line in lines]
        for event in events:
            for volatile in ("at", "durationMs", "runId"):
                event.pop(volatile, None)
            event.get("fault", {}).pop("traceback", None)
        return events

    in_memory = await silo.run(ENV, "TASK-ANSWER", varied)
    on_disk = await silo.run(ENV, "TASK-ANSWER", varied, runs_dir=tmp_path)
    written = tuple((tmp_path / on_disk.run_id / "trace.jsonl").read_text().splitlines())
    assert written == on_disk.trace_lines
    assert normalised(in_memory.trace_lines) == normalised(on_disk.trace_lines)


async def test_diff_of_a_world_with_untouched_collections() -> None:
    """Collections the rollout left alone are skipped; what changed is still reported."""

    def create_state() -> dict[str, Any]:
        return {
            "a": {"A1": {"id": "A1", "v": 1}},
            "b": {"B1": {"id": "B1", "v": 1}},
            "c": [{"id": "C1"}],
            "total": 3,
        }

    @silo.tool(name="touch_b", description="Change B1 and the total.")
    def touch_b(state: dict[str, Any], args: dict[str, Any]) -> None:
        state["b"]["B1"]["v"] = 1.0  # a type change only
        state["total"] = 3.0

    @silo.verifier(id="VER-1", task_id="T-1")
    def verify(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        return [silo.check("ran", True)]

    result = await call_once(create_state, touch_b, verify)
    assert result.state_diff == {
        "scalars": [{"field": "total", "from": 3, "to": 3.0}],
        "collections": {
            "b": {
                "added": [],
                "removed": [],
                "changed": ["B1"],
                "fields": {"B1": [{"path": "v", "from": 1, "to": 1.0}]},
            }
        },
    }


async def test_a_result_keeps_its_diff_as_text_and_decodes_a_fresh_copy() -> None:
    result = await silo.run(ENV, "TASK-BLOCK", blocker)
    assert json.loads(result.state_diff_json) == result.state_diff
    assert result.state_diff_json.startswith('{"scalars":[],"collections":{"customers":')
    first = result.state_diff
    first["collections"].clear()  # a caller's edit never reaches the result
    assert result.state_diff["collections"]["customers"]["changed"] == ["CUS-001"]
