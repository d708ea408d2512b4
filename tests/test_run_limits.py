"""run(): the token limit, model steps, agent crashes, and agents that block the event loop."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo

from .worlds import ENV

pytestmark = pytest.mark.anyio


async def test_the_token_limit_stops_a_plain_agent_that_records_usage(tmp_path: Path) -> None:
    turns: list[int] = []

    async def agent(ctx: silo.AgentContext) -> str:
        for turn in range(10):
            turns.append(turn)
            ctx.record_model_step(model="m", input_tokens=30, output_tokens=10)
            await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
        return "never"

    result = await silo.run(ENV, "TASK-ANSWER", agent, token_limit=100, runs_dir=tmp_path)
    assert result.termination_reason == "max_tokens" and turns == [0, 1, 2]
    assert result.tool_calls == 2  # the third turn's call meets the cancelled scope
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (3, 90, 30)
    assert result.error == "Token limit reached (120 of 100 tokens)."
    written = json.loads((tmp_path / result.run_id / "result.json").read_text())
    keys = list(written)
    # after toolFaults and the injected faults' two counters (DESIGN section 14)
    assert keys[keys.index("toolFaults") + 1 : keys.index("toolFaults") + 6] == [
        "injectedFaults",
        "recoveredFaults",
        "modelSteps",
        "inputTokens",
        "outputTokens",
    ]
    assert (written["modelSteps"], written["inputTokens"], written["outputTokens"]) == (3, 90, 30)
    run_json = json.loads((tmp_path / result.run_id / "run.json").read_text())
    assert run_json["config"]["tokenLimit"] == 100


async def test_no_usage_recorded_means_zeros_and_no_limit() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        ctx.record_model_step(model="m")  # usage unknown: counted as a step, no tokens
        return "2"

    result = await silo.run(ENV, "TASK-ANSWER", agent, token_limit=1)
    assert result.termination_reason == "completed" and result.passed
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (1, 0, 0)
    step = next(e for e in result.trace if e["type"] == "model_step")
    assert list(step)[2:9] == [
        "model",
        "usage",
        "stopReason",
        "durationMs",
        "attempts",
        "message",
        "at",
    ]


async def test_model_steps_refuse_fields_that_are_not_json() -> None:
    problems: list[str] = []

    async def agent(ctx: silo.AgentContext) -> str:
        cases: tuple[dict[str, Any], ...] = (
            {"raw": object()},
            {"message": {"toolCalls": [{1: "x"}]}},
            {"input_tokens": "12"},
            {"input_tokens": True},
            {"score": float("nan")},
            {"usage": {}},
        )
        for fields in cases:
            try:
                ctx.record_model_step(model="m", **fields)
            except TypeError as exc:
                problems.append(str(exc))
        with pytest.raises(ValueError, match="output_tokens must be >= 0"):
            ctx.record_model_step(output_tokens=-1)
        return "2"

    result = await silo.run(ENV, "TASK-ANSWER", agent)
    assert len(problems) == 6 and "raw is a object, which is not JSON" in problems[0]
    assert "non-string key 1" in problems[1] and "reserved" in problems[5]
    assert all(e["type"] != "model_step" for e in result.trace)


async def test_a_crash_keeps_its_type_and_traceback(tmp_path: Path) -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        reply: dict[str, Any] = {}
        return str(reply["content"])

    result = await silo.run(ENV, "TASK-ANSWER", agent, runs_dir=tmp_path)
    assert result.termination_reason == "agent_error" and result.error == "KeyError: 'content'"
    lines = (tmp_path / result.run_id / "trace.jsonl").read_text().splitlines()
    crash = next(json.loads(line) for line in lines if '"agent_error"' in line)
    assert crash["error"]["type"] == "KeyError" and crash["error"]["message"] == "'content'"
    assert 'reply["content"]' in crash["error"]["traceback"]


async def test_a_crash_inside_a_task_group_names_the_real_exception() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        async def fail() -> None:
            raise ConnectionError("model server down")

        async with anyio.create_task_group() as tg:
            tg.start_soon(fail)
        return "never"

    result = await silo.run(ENV, "TASK-ANSWER", agent)
    assert result.error == "ConnectionError: model server down"


async def test_an_agent_that_blocks_the_loop_past_its_deadline_is_a_timeout() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        ctx.set_output("early")
        time.sleep(0.2)  # noqa: ASYNC251 - the point: the loop is held past the deadline
        ctx.set_output("late")  # after the deadline: not graded
        return "2"  # returned after the deadline: not the answer

    result = await silo.run(ENV, "TASK-ANSWER", agent, timeout=0.02)
    assert result.termination_reason == "timeout" and not result.passed
    assert result.agent_output == "early"
    blocked = next(e for e in result.trace if e["type"] == "loop_blocked")
    assert 100 < blocked["overrunMs"] < 5000
    assert result.error is not None and "event loop was held" in result.error


async def test_a_blocked_agent_that_then_calls_a_tool_executes_nothing() -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        time.sleep(0.1)  # noqa: ASYNC251
        await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
        return "done"

    result = await silo.run(ENV, "TASK-BLOCK", agent, timeout=0.02)
    assert (result.termination_reason, result.tool_calls, result.passed) == ("timeout", 0, False)


def test_a_normal_timeout_records_no_loop_blocked_event() -> None:
    # In virtual time the deadline fires exactly: no overrun can come from a loaded machine.
    import trio.testing

    async def agent(ctx: silo.AgentContext) -> str:
        await anyio.sleep_forever()
        return "never"

    async def main() -> silo.RunResult:
        return await silo.run(ENV, "TASK-ANSWER", agent, timeout=0.02)

    clock = trio.testing.MockClock(autojump_threshold=0)
    result = anyio.run(main, backend="trio", backend_options={"clock": clock})
    assert result.termination_reason == "timeout"
    assert all(e["type"] != "loop_blocked" for e in result.trace)
    assert result.error == "Time limit exceeded (0.02 s)."


async def test_run_many_and_evaluate_take_the_token_limit(tmp_path: Path) -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        ctx.record_model_step(input_tokens=5, output_tokens=5)
        await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
        return "2"

    many = await silo.run_many(ENV, ["TASK-ANSWER"], agent, runs=2, token_limit=10)
    assert [r.termination_reason for r in many] == ["max_tokens", "max_tokens"]
    summary = await silo.evaluate(ENV, ["TASK-ANSWER"], {"a": agent}, token_limit=10)
    assert summary.records[0].termination_reason == "max_tokens"
    assert summary.config["tokenLimit"] == 10
    with pytest.raises(ValueError, match="token_limit"):
        await silo.run_many(ENV, ["TASK-ANSWER"], agent, token_limit=-5)


def test_an_environment_given_a_non_list_says_so() -> None:
    for bad in (5, "get_customer", {"a": 1}):
        with pytest.raises(silo.DefinitionError, match="must be lists"):
            silo.Environment(name="x", create_state=dict, tools=bad)  # type: ignore[arg-type]
