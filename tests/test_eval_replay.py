"""replay(): a recorded run reproduced byte for byte; changes to verifiers or tools reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.eval import load_run, replay

from .test_eval_support import (
    bad_agent,
    crashing_agent,
    faulty_agent,
    good_agent,
    greedy_agent,
    make_env,
)

pytestmark = pytest.mark.anyio


async def record(tmp_path: Path, agent: Any, task: str = "T-1", **kw: Any) -> Path:
    result = await silo.run(make_env(), task, agent, runs_dir=tmp_path / "runs", **kw)
    assert result.run_dir is not None
    return result.run_dir


@pytest.mark.parametrize(
    ("agent", "reason"),
    [
        (good_agent, "completed"),
        (bad_agent, "completed"),
        (faulty_agent, "completed"),
        (crashing_agent, "agent_error"),
        (greedy_agent, "max_tool_calls"),
    ],
)
async def test_replay_reproduces_the_recording(tmp_path: Path, agent: Any, reason: str) -> None:
    run_dir = await record(tmp_path, agent, max_tool_calls=4)
    report = await replay(run_dir, make_env())
    assert report.replayed.termination_reason == reason
    assert report.identical, report.differences
    assert report.result_identical and report.diff_identical and report.differences == []
    recorded = load_run(run_dir)
    assert len(report.calls) == len(recorded.calls()) == recorded.result["toolCalls"]
    assert report.to_dict()["identical"] is True


async def test_replay_after_a_verifier_change_reports_the_difference(tmp_path: Path) -> None:
    run_dir = await record(tmp_path, good_agent)
    report = await replay(run_dir, make_env(strict=True))
    assert not report.identical
    assert all(c.matches for c in report.calls)  # the world behaved the same...
    assert report.diff_identical  # ...and changed the same way
    assert not report.result_identical  # ...but today's verifier grades it differently
    assert "result.json passed: true -> false" in report.differences
    assert any(d.startswith("result.json checks[0]") for d in report.differences)


async def test_replay_reports_a_tool_whose_output_changed(tmp_path: Path) -> None:
    run_dir = await record(tmp_path, good_agent)
    env = make_env()

    def different_world() -> Any:
        state = env.create_state()
        state["items"][0]["note"] = "changed"
        return state

    changed = silo.Environment(
        name=env.name,
        create_state=different_world,
        tools=env.tools,
        verifiers=env.verifiers,
        tasks=env.tasks,
    )
    report = await replay(run_dir, changed)
    assert not report.identical
    assert [c.matches for c in report.calls] == [False, True]
    assert report.differences[0].startswith("call #1 get_item: recorded")
    assert report.result_identical  # grading did not look at the note


async def test_replay_finds_runs_by_id_in_the_project(tmp_path: Path) -> None:
    result = await silo.run(make_env(), "T-2", good_agent, runs_dir=tmp_path / ".silo" / "runs")
    report = await replay(result.run_id, make_env(), cwd=tmp_path)
    assert report.identical and report.task_id == "T-2" and report.run_id == result.run_id


class TestTimeouts:
    @pytest.fixture
    def anyio_backend(self, fake_clock_backend: Any) -> Any:
        return fake_clock_backend

    async def test_replay_reproduces_a_timeout(self, tmp_path: Path) -> None:
        async def stuck(ctx: silo.AgentContext) -> str:
            await ctx.call_tool("get_item", {"itemId": "A"})
            ctx.set_output("half")
            await anyio.sleep_forever()
            return "never"

        # A second: the call must land before the deadline, when recorded and when replayed
        # (real time under asyncio; trio runs in virtual time).
        run_dir = await record(tmp_path, stuck, timeout=1.0)
        report = await replay(run_dir, make_env())
        assert report.replayed.termination_reason == "timeout"
        assert report.identical, report.differences
