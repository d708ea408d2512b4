"""Episodes: a rollout driven from outside, one call at a time (DESIGN §7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo

from .worlds import ENV

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend(fake_clock_backend: Any) -> Any:
    """Limit tests run on asyncio and on trio in virtual time."""
    return fake_clock_backend


def _files(run_dir: Path | None) -> tuple[bytes, bytes]:
    assert run_dir is not None
    return (run_dir / "result.json").read_bytes(), (run_dir / "state-diff.json").read_bytes()


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_customer", {"customerId": "CUS-002"}),
    ("get_customr", {"customerId": "CUS-002"}),  # unknown tool: a value
    ("get_customer", {"customerID": "CUS-001"}),  # invalid input: a value
    ("block_customer", {"customerId": "CUS-001"}),
    ("block_customer", {"customerId": "CUS-001"}),  # rejected: already blocked
    ("explode", {}),  # an environment fault
]


async def test_same_calls_and_output_give_the_same_files_as_run(tmp_path: Path) -> None:
    async def agent(ctx: silo.AgentContext) -> str:
        for name, args in CALLS:
            await ctx.call_tool(name, args)
        return "blocked CUS-001"

    # No time limit: in virtual time, waiting on the run directory's thread may jump the clock.
    ran = await silo.run(ENV, "TASK-BLOCK", agent, timeout=None, runs_dir=tmp_path / "run")
    async with silo.episode(ENV, "TASK-BLOCK", timeout=None, runs_dir=tmp_path / "episode") as ep:
        assert ep.task == "Block customer CUS-001." and ep.task_id == "TASK-BLOCK"
        assert [t.name for t in ep.tools] == ["get_customer", "block_customer", "explode", "slow"]
        outcomes = [await ep.call_tool(name, args) for name, args in CALLS]
        result = await ep.finish("blocked CUS-001")
    assert [r.is_error for r in outcomes] == [False, True, True, False, True, True]
    assert [r.output.get("code") for r in outcomes[1:3]] == ["tool_not_found", "invalid_input"]
    assert _files(result.run_dir) == _files(ran.run_dir)
    assert (result.passed, result.tool_calls, result.tool_errors, result.tool_faults) == (
        True,
        6,
        3,
        1,
    )
    run_json = json.loads((tmp_path / "episode" / result.run_id / "run.json").read_text())
    assert run_json["agent"] == "mcp"


async def test_finish_is_idempotent_and_later_calls_are_invalid_state() -> None:
    async with silo.episode(ENV, "TASK-ANSWER") as ep:
        before = (ep.finished, ep.result)
        first = await ep.finish("2")
        assert before == (False, None)
        assert (ep.finished, ep.result) == (True, first)
        assert await ep.finish("3") is first
        late = await ep.call_tool("get_customer", {"customerId": "CUS-001"})
    assert first.passed and first.agent_output == "2" and first.tool_calls == 0
    assert late.is_error and late.output == {
        "code": "invalid_state",
        "message": "The episode has ended (completed).",
    }
    assert ep.result is first


async def test_leaving_the_block_finishes_with_the_output_so_far(tmp_path: Path) -> None:
    async with silo.episode(ENV, "TASK-ANSWER", timeout=None, runs_dir=tmp_path) as ep:
        ep.set_output("2")
    assert ep.finished and ep.result is not None
    assert ep.result.termination_reason == "completed" and ep.result.passed
    assert (tmp_path / ep.run_id / "result.json").is_file()


async def test_the_deadline_finishes_the_episode_with_nobody_calling(tmp_path: Path) -> None:
    # A second: the call must land before the deadline, in real time on a loaded machine under
    # asyncio (trio runs in virtual time, where the second costs nothing).
    async with silo.episode(ENV, "TASK-BLOCK", timeout=1.0, runs_dir=tmp_path) as ep:
        await ep.call_tool("block_customer", {"customerId": "CUS-001"})
        result = await ep.wait_finished()  # nobody calls: the episode ends by itself
        assert ep.finished
        late = await ep.call_tool("get_customer", {"customerId": "CUS-001"})
    assert result.termination_reason == "timeout" and result.passed  # graded on the world
    assert result.error is not None and result.error.startswith("Time limit exceeded (1 s).")
    assert late.output["code"] == "invalid_state"
    assert late.output["message"] == "The episode has ended (timeout)."
    written = json.loads((tmp_path / ep.run_id / "result.json").read_text())
    assert written["terminationReason"] == "timeout" and written["toolCalls"] == 1


async def test_a_call_in_flight_at_the_deadline_is_cancelled() -> None:
    # A second: the call must start before the deadline (real time under asyncio).
    async with silo.episode(ENV, "TASK-BLOCK", timeout=1.0) as ep:
        with anyio.fail_after(30):  # the tool sleeps an hour: it must be interrupted
            answer = await ep.call_tool("slow", {"seconds": 3600})
        assert ep.finished
    assert answer.is_error and answer.output["code"] == "limit_exceeded"
    assert ep.result is not None and ep.result.termination_reason == "timeout"
    assert ep.result.tool_calls == 1
    assert [e["type"] for e in ep.result.trace].count("tool_result") == 0


async def test_the_call_beyond_the_limit_finishes_the_episode(tmp_path: Path) -> None:
    episode = silo.episode(ENV, "TASK-BLOCK", max_tool_calls=1, timeout=None, runs_dir=tmp_path)
    async with episode as ep:
        await ep.call_tool("get_customer", {"customerId": "CUS-001"})
        refused = await ep.call_tool("block_customer", {"customerId": "CUS-001"})
        assert ep.finished  # already when the refused call returns
        after = await ep.call_tool("block_customer", {"customerId": "CUS-001"})
    assert refused.is_error and refused.output == {
        "code": "limit_exceeded",
        "message": "Tool call limit exceeded (1): the episode has ended.",
    }
    assert after.output["message"] == "The episode has ended (max_tool_calls)."
    result = ep.result
    assert result is not None and result.termination_reason == "max_tool_calls"
    assert result.tool_calls == 1 and not result.passed  # neither call executed
    assert [e["type"] for e in result.trace].count("tool_call") == 1


async def test_the_token_limit_finishes_the_episode() -> None:
    async with silo.episode(ENV, "TASK-ANSWER", token_limit=100) as ep:
        ep.record_model_step(model="m", input_tokens=60, output_tokens=10)
        assert not ep.finished
        ep.record_model_step(model="m", input_tokens=20, output_tokens=10)
        result = await ep.wait_finished()
        refused = await ep.call_tool("get_customer", {"customerId": "CUS-001"})
    assert result.termination_reason == "max_tokens"
    assert (result.model_steps, result.input_tokens, result.output_tokens) == (2, 80, 20)
    assert result.error == "Token limit reached (100 of 100 tokens)."
    assert refused.output["message"] == "The episode has ended (max_tokens)."


async def test_outer_cancellation_writes_the_episode_then_propagates(tmp_path: Path) -> None:
    episode = silo.episode(ENV, "TASK-BLOCK", timeout=None, runs_dir=tmp_path)
    with anyio.CancelScope() as scope:
        async with episode as ep:
            await ep.call_tool("block_customer", {"customerId": "CUS-001"})
            scope.cancel()  # as a Ctrl-C would, while the block awaits
            await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert ep.result is not None and ep.result.termination_reason == "cancelled"
    written = json.loads((tmp_path / ep.run_id / "result.json").read_text())
    assert written["terminationReason"] == "cancelled" and written["passed"] is True


async def test_an_exception_in_the_block_is_an_agent_error_and_propagates() -> None:
    with pytest.raises(KeyError, match="content"):
        async with silo.episode(ENV, "TASK-ANSWER") as ep:
            reply: dict[str, str] = {}
            ep.set_output(reply["content"])
    result = ep.result
    assert result is not None and result.termination_reason == "agent_error"
    assert result.error == "KeyError: 'content'"
    crash = next(e for e in result.trace if e["type"] == "agent_error")
    assert crash["error"]["type"] == "KeyError" and "Traceback" in crash["error"]["traceback"]


async def test_calls_may_come_from_other_tasks() -> None:
    async with silo.episode(ENV, "TASK-BLOCK") as ep:
        async with anyio.create_task_group() as tg:
            tg.start_soon(ep.call_tool, "block_customer", {"customerId": "CUS-001"})
            tg.start_soon(ep.call_tool, "get_customer", {"customerId": "CUS-002"})
        result = await ep.finish()
    assert result.passed and result.tool_calls == 2


async def test_errors_before_anything_runs() -> None:
    with pytest.raises(silo.SiloError) as info:
        silo.episode(ENV, "TASK-NOPE")
    assert info.value.code == "task_not_found"
    with pytest.raises(ValueError, match="token_limit"):
        silo.episode(ENV, "TASK-BLOCK", token_limit=-1)
    ep = silo.episode(ENV, "TASK-BLOCK")
    with pytest.raises(RuntimeError, match="async with"):
        await ep.call_tool("get_customer", {"customerId": "CUS-001"})


async def test_finished_means_graded_and_ended_comes_first() -> None:
    async with silo.episode(ENV, "TASK-BLOCK", max_tool_calls=0) as ep:
        assert (ep.ended, ep.finished, ep.result) == (False, False, None)
        await ep.call_tool("get_customer", {"customerId": "CUS-001"})  # beyond the limit
        assert ep.ended and ep.finished and ep.result is not None
