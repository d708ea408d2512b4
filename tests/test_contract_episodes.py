"""Conformance to DESIGN.md section 7 (episodes: a rollout driven from outside).

One test per statement of the section, written as a reader of DESIGN.md alone would check it:
only the public names (``silo.episode``, ``silo.Episode``, ``RunResult``, the files on disk).
Limits run on asyncio with tiny values and on trio in virtual time (MockClock).
"""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from tests.test_contract import ENV

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend(fake_clock_backend: Any) -> Any:
    """Limits on asyncio (tiny values) and on trio in virtual time."""
    return fake_clock_backend


def tool_calls(result: silo.RunResult) -> list[dict[str, Any]]:
    return [e for e in result.trace if e["type"] == "tool_call"]


def files(run_dir: Path | None) -> tuple[bytes, bytes]:
    assert run_dir is not None
    return (run_dir / "result.json").read_bytes(), (run_dir / "state-diff.json").read_bytes()


async def graded(ep: silo.Episode) -> silo.RunResult:
    """The result of an episode that has ended by itself.

    ``finished`` turns true with ``result`` once it is graded and written. The files may be
    written off the loop (a slow disk), and in virtual time (trio's MockClock) the clock then
    races ahead while the loop waits for them: the bound is in real seconds.
    """
    patience = time.monotonic() + 10
    while not ep.finished:  # DESIGN gives no event to wait on
        assert time.monotonic() < patience, "the episode never finished"
        await anyio.sleep(0.01)
    assert ep.result is not None
    return ep.result


def counter(result: silo.RunResult) -> Any:
    return {s["field"]: s["to"] for s in result.state_diff["scalars"]}.get("counter", 0)


def test_section7_episode_signature_and_type() -> None:
    params = inspect.signature(silo.episode).parameters
    assert list(params)[:2] == ["env", "task_id"]
    defaults = {n: p.default for n, p in params.items() if p.kind is p.KEYWORD_ONLY}
    assert defaults == {
        "max_tool_calls": 100,
        "timeout": 120.0,
        "token_limit": None,
        "runs_dir": None,
        "agent_name": "mcp",
        "limits": None,  # silo.Limits, instead of the three keywords
        "user": None,  # section 13: the task's user (default: its scripted user)
        "faults": None,  # silo.Faults (DESIGN section 14)
    }
    assert isinstance(silo.episode(ENV, "TASK-COUNT"), silo.Episode)
    assert "Episode" in silo.__all__ and "episode" in silo.__all__


async def test_section7_task_and_tools_are_as_on_agent_context() -> None:
    seen: dict[str, Any] = {}

    async def look(ctx: silo.AgentContext) -> str:
        seen["task"], seen["tools"] = ctx.task, [t.to_dict() for t in ctx.tools]
        return ""

    await silo.run(ENV, "TASK-COUNT", look)
    async with silo.episode(ENV, "TASK-COUNT") as ep:
        assert ep.task == seen["task"] == "Bump the counter once and say ok."
        assert all(isinstance(t, silo.ToolSpec) for t in ep.tools)
        assert [t.to_dict() for t in ep.tools] == seen["tools"]
        assert not ep.finished and ep.result is None


async def test_section7_call_tool_gives_the_same_tool_results_never_raising() -> None:
    async with silo.episode(ENV, "TASK-COUNT") as ep:
        ok = await ep.call_tool("get_opportunity", {"opportunityId": "OPP-004"})
        assert isinstance(ok, silo.ToolResult) and not ok.is_error
        assert ok.output == {"id": "OPP-004", "stage": "open"}
        unknown = await ep.call_tool("bumpp", {})
        assert unknown.is_error and unknown.output["code"] == "tool_not_found"
        assert "bumpp" in unknown.output["message"] and "bump" in unknown.output["message"]
        bad = await ep.call_tool("get_opportunity", {"opportunityID": "OPP-004"})
        assert bad.is_error and bad.output["message"] == (
            'Invalid arguments for "get_opportunity": "opportunityId" is required; '
            '"opportunityID" is not a parameter; expected one of: opportunityId.'
        )
        rejected = await ep.call_tool("reject", {})
        assert rejected.output == {
            "code": "conflict",
            "message": "not now",
            "details": {"why": "busy"},
        }
        fault = await ep.call_tool("crash", {})
        assert fault.is_error and fault.output["code"] == "internal_error"
        result = await ep.finish("ok")
    assert (result.tool_calls, result.tool_errors, result.tool_faults) == (
        5,
        3,
        1,
    )  # faults counted apart


async def test_section7_finish_grades_once_writes_artifacts_and_is_idempotent(
    tmp_path: Path,
) -> None:
    async with silo.episode(ENV, "TASK-COUNT", runs_dir=tmp_path) as ep:
        await ep.call_tool("bump", {})
        first = await ep.finish("ok")
        assert ep.finished and ep.result is first
        second = await ep.finish("something else")
        assert second is first
    assert isinstance(first, silo.RunResult)
    assert first.passed and first.reward == 0.75 and first.agent_output == "ok"
    assert first.termination_reason == "completed"
    assert ep.result is first
    assert first.run_dir is not None and first.run_dir.parent == tmp_path
    names = {p.name for p in first.run_dir.iterdir()}
    assert {"trace.jsonl", "result.json", "state-diff.json", "run.json"} <= names
    graded = [e for e in first.trace if e["type"] == "verifier_result"]
    assert len(graded) == 1  # graded once


async def test_section7_set_output_and_record_model_step_reach_the_result() -> None:
    async with silo.episode(ENV, "TASK-COUNT") as ep:
        await ep.call_tool("bump", {})
        ep.record_model_step(model="m", input_tokens=7, output_tokens=3)
        ep.set_output("partial")
    result = ep.result
    assert result is not None
    assert result.agent_output == "partial"
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (1, 7, 3)
    steps = [e for e in result.trace if e["type"] == "model_step"]
    assert steps[0]["model"] == "m" and steps[0]["usage"] == {"inputTokens": 7, "outputTokens": 3}


async def test_section7_finish_answer_wins_over_the_partial_output() -> None:
    async with silo.episode(ENV, "TASK-COUNT") as ep:
        await ep.call_tool("bump", {})
        ep.set_output("partial")
        result = await ep.finish("ok")
    assert result.agent_output == "ok" and result.passed


async def test_section7_left_without_finish_is_completed_with_the_output_so_far(
    tmp_path: Path,
) -> None:
    async with silo.episode(ENV, "TASK-COUNT", runs_dir=tmp_path) as ep:
        await ep.call_tool("bump", {})
        ep.set_output("ok")
        inside = ep.finished
    assert (inside, ep.finished) == (False, True)
    result = ep.result
    assert result is not None and result.termination_reason == "completed"
    assert result.agent_output == "ok" and result.passed
    assert json.loads(files(result.run_dir)[0])["terminationReason"] == "completed"


async def test_section7_the_deadline_finishes_the_episode_with_nobody_calling(
    tmp_path: Path,
) -> None:
    # A second, not less: the first call must land before the deadline even on a loaded
    # machine (asyncio runs in real time; trio in virtual time, where it costs nothing).
    async with silo.episode(ENV, "TASK-COUNT", timeout=1.0, runs_dir=tmp_path) as ep:
        await ep.call_tool("bump", {})
        ep.set_output("ok")
        await anyio.sleep(1.2)  # nobody calls
        result = await graded(ep)
        assert result.termination_reason == "timeout"
        # Graded (and written) on the world as it was, while still inside the block.
        assert counter(result) == 1 and result.checks[0].passed
        assert json.loads(files(result.run_dir)[0])["terminationReason"] == "timeout"
    assert ep.result is result


async def test_section7_the_deadline_runs_from_the_start_of_the_episode() -> None:
    # Margins in whole seconds (real time on asyncio): the first call lands 1.5 s before the
    # deadline; the late one comes 2.2 s after the start but only 1.7 s after the first call.
    async with silo.episode(ENV, "TASK-COUNT", timeout=2.0) as ep:
        await anyio.sleep(0.5)
        assert not (await ep.call_tool("bump", {})).is_error
        await anyio.sleep(1.7)
        late = await ep.call_tool("bump", {})
    assert late.output["code"] == "invalid_state"
    assert ep.result is not None and ep.result.termination_reason == "timeout"


async def test_section7_a_call_in_flight_at_the_deadline_returns_limit_exceeded() -> None:
    # A second: the call must start before the deadline even on a loaded machine.
    async with silo.episode(ENV, "TASK-COUNT", timeout=1.0) as ep:
        with anyio.fail_after(30):
            hung = await ep.call_tool("hang", {})
        assert hung.is_error and hung.output["code"] == "limit_exceeded"
        assert ep.finished
    assert ep.result is not None and ep.result.termination_reason == "timeout"


async def test_section7_the_call_beyond_max_tool_calls_is_not_executed_and_ends_it(
    tmp_path: Path,
) -> None:
    async with silo.episode(ENV, "TASK-COUNT", max_tool_calls=2, runs_dir=tmp_path) as ep:
        for _ in range(2):
            assert not (await ep.call_tool("bump", {})).is_error
        before = ep.finished
        beyond = await ep.call_tool("bump", {})
        assert (before, ep.finished) == (False, True)  # already true when that call returns
        assert isinstance(beyond, silo.ToolResult) and beyond.is_error
        assert beyond.output["code"] == "limit_exceeded"
    result = ep.result
    assert result is not None and result.termination_reason == "max_tool_calls"
    assert result.tool_calls == 2 and len(tool_calls(result)) == 2  # not recorded
    assert counter(result) == 2  # not executed


async def test_section7_after_the_end_every_call_is_invalid_state_and_executes_nothing() -> None:
    async with silo.episode(ENV, "TASK-COUNT", timeout=0.05) as ep:
        await anyio.sleep(0.2)
        calls: list[tuple[str, dict[str, Any]]] = [("bump", {}), ("nope", {}), ("reject", {})]
        for name, args in calls:
            after = await ep.call_tool(name, args)
            assert after == silo.ToolResult(
                {"code": "invalid_state", "message": "The episode has ended (timeout)."},
                is_error=True,
            )
    result = ep.result
    assert result is not None and result.tool_calls == 0 and counter(result) == 0
    assert tool_calls(result) == []


async def test_section7_after_finish_calls_are_invalid_state_naming_the_reason() -> None:
    async with silo.episode(ENV, "TASK-COUNT") as ep:
        await ep.finish("ok")
        after = await ep.call_tool("bump", {})
    assert after.is_error and after.output["code"] == "invalid_state"
    assert after.output["message"] == "The episode has ended (completed)."
    assert ep.result is not None and counter(ep.result) == 0


async def test_section7_outer_cancellation_is_cancelled_written_then_reraised(
    tmp_path: Path,
) -> None:
    reached_after = False
    with anyio.CancelScope() as scope:
        async with silo.episode(ENV, "TASK-COUNT", timeout=None, runs_dir=tmp_path) as ep:
            await ep.call_tool("bump", {})
            scope.cancel()
            await anyio.sleep_forever()
        reached_after = True
    assert scope.cancelled_caught and not reached_after  # re-raised out of the block
    result = ep.result
    assert result is not None and result.termination_reason == "cancelled"
    assert json.loads(files(result.run_dir)[0])["terminationReason"] == "cancelled"
    assert counter(result) == 1


async def test_section7_token_limit_finishes_the_episode_as_max_tokens() -> None:
    async with silo.episode(ENV, "TASK-COUNT", token_limit=30) as ep:
        ep.record_model_step(model="m", input_tokens=10, output_tokens=5)
        assert not (await ep.call_tool("bump", {})).is_error
        ep.record_model_step(model="m", input_tokens=10, output_tokens=5)  # 30 reached
        after = await ep.call_tool("bump", {})
    assert after.output["code"] == "invalid_state"
    result = ep.result
    assert result is not None and result.termination_reason == "max_tokens"
    assert (result.input_tokens, result.output_tokens) == (20, 10)


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_opportunity", {"opportunityId": "OPP-004"}),
    ("bumpp", {}),
    ("get_opportunity", {"opportunityID": 4}),
    ("bump", {}),
    ("reject", {}),
    ("crash", {}),
    ("bump", {}),
]


async def test_section7_run_and_episode_write_the_same_result_and_state_diff(
    tmp_path: Path,
) -> None:
    async def scripted(ctx: silo.AgentContext) -> str:
        ctx.record_model_step(model="m", input_tokens=3, output_tokens=2, stop_reason="x")
        for name, args in CALLS:
            await ctx.call_tool(name, args)
        return "ok"

    ran = await silo.run(ENV, "TASK-COUNT", scripted, runs_dir=tmp_path / "run")
    async with silo.episode(ENV, "TASK-COUNT", runs_dir=tmp_path / "episode") as ep:
        ep.record_model_step(model="m", input_tokens=3, output_tokens=2, stop_reason="x")
        for name, args in CALLS:
            await ep.call_tool(name, args)
        played = await ep.finish("ok")
    assert files(ran.run_dir) == files(played.run_dir)
    assert ran.passed and played.passed and played.tool_faults == 1


async def test_section7_limits_give_the_same_files_as_run(tmp_path: Path) -> None:
    async def eager(ctx: silo.AgentContext) -> str:
        ctx.set_output("ok")
        for _ in range(5):
            await ctx.call_tool("bump", {})
        return "never"

    ran = await silo.run(ENV, "TASK-COUNT", eager, max_tool_calls=3, runs_dir=tmp_path / "r")
    async with silo.episode(ENV, "TASK-COUNT", max_tool_calls=3, runs_dir=tmp_path / "e") as ep:
        ep.set_output("ok")
        for _ in range(4):
            await ep.call_tool("bump", {})
    assert ran.termination_reason == "max_tool_calls"
    assert ep.result is not None
    assert files(ran.run_dir) == files(ep.result.run_dir)
