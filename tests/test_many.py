"""run_many: input order, isolation, determinism across concurrency and backends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import silo_async as silo
from silo_async._runid import new_run_id

from .worlds import ENV, blocker

pytestmark = pytest.mark.anyio


async def mixed(ctx: silo.AgentContext) -> object:
    """Behaves differently per call: crash, hang, or solve — to check isolation."""
    mixed.calls += 1  # type: ignore[attr-defined]
    kind = mixed.calls % 3  # type: ignore[attr-defined]
    if kind == 0:
        raise RuntimeError("boom")
    if kind == 1:
        await anyio.sleep_forever()
    return await blocker(ctx)


class TestLimits:
    @pytest.fixture
    def anyio_backend(self, fake_clock_backend: Any) -> Any:
        """asyncio, and trio in virtual time."""
        return fake_clock_backend

    async def test_results_in_input_order_and_isolated(self) -> None:
        # The hung rollouts time out; the others must finish first: trio in virtual time, asyncio
        # with a second to spare on a loaded machine.
        mixed.calls = 0  # type: ignore[attr-defined]
        done: list[int] = []
        results = await silo.run_many(
            ENV, ["TASK-BLOCK", "TASK-ANSWER"], mixed, runs=3, concurrency=4, timeout=1.0,
            on_result=lambda i, r: done.append(i),
        )  # fmt: skip
        assert [r.task.id for r in results] == ["TASK-BLOCK"] * 3 + ["TASK-ANSWER"] * 3
        assert sorted(done) == list(range(6))
        reasons = {r.termination_reason for r in results}
        assert reasons == {"agent_error", "timeout", "completed"}
        for r in results:
            if r.termination_reason == "completed" and r.task.id == "TASK-BLOCK":
                assert r.passed
            # every rollout had its own world: only its own block is in its diff
            log = r.state_diff["collections"].get("log", {"added": []})
            assert log["added"] in ([], ["LOG-1"])
        assert len({r.run_id for r in results}) == 6


async def test_each_rollout_knows_its_run_number(tmp_path: Path) -> None:
    results = await silo.run_many(
        ENV, ["TASK-BLOCK", "TASK-ANSWER"], blocker, runs=2, runs_dir=tmp_path
    )
    assert [r.run_index for r in results] == [1, 2, 1, 2]
    for r in results:
        assert r.run_dir is not None
        run_json = json.loads((r.run_dir / "run.json").read_text())
        assert (run_json["agent"], run_json["run"]) == ("ScriptedAgent", r.run_index)
    lone = await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=tmp_path)
    assert lone.run_index == 1


async def test_arguments_are_checked_before_anything_runs() -> None:
    with pytest.raises(silo.SiloError, match="TASK-X"):
        await silo.run_many(ENV, ["TASK-BLOCK", "TASK-X"], blocker)
    with pytest.raises(ValueError, match="runs"):
        await silo.run_many(ENV, ["TASK-BLOCK"], blocker, runs=0)
    with pytest.raises(ValueError, match="concurrency"):
        await silo.run_many(ENV, ["TASK-BLOCK"], blocker, concurrency=0)


def _artifact_bytes(run_dir: Path | None) -> tuple[bytes, bytes]:
    assert run_dir is not None
    return (run_dir / "result.json").read_bytes(), (run_dir / "state-diff.json").read_bytes()


async def _interleaved(ctx: silo.AgentContext) -> str:
    await anyio.lowlevel.checkpoint()
    await ctx.call_tool("get_customer", {"customerId": "CUS-002"})
    await anyio.sleep(0.001)
    await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
    await ctx.call_tool("block_customer", {"customerId": "CUS-001"})  # rejected: already blocked
    return "2"


async def test_same_rollout_is_byte_identical_alone_and_among_1000(tmp_path: Path) -> None:
    alone = await silo.run(ENV, "TASK-BLOCK", _interleaved, runs_dir=tmp_path / "alone")
    crowd = await silo.run_many(
        ENV, ["TASK-BLOCK"], _interleaved, runs=1000, concurrency=1000, runs_dir=tmp_path / "crowd"
    )
    expected = _artifact_bytes(alone.run_dir)
    assert all(_artifact_bytes(r.run_dir) == expected for r in crowd)
    reference = Path(__file__).parent / "baselines" / "core" / "TASK-BLOCK.result.json"
    assert expected[0] == reference.read_bytes()  # and identical across backends


def test_run_ids_sort_by_time_and_never_collide() -> None:
    ids = [new_run_id(1_700_000_000.0) for _ in range(5000)]
    assert len(set(ids)) == 5000 and ids == sorted(ids)
    later = new_run_id(1_700_000_000.5)
    assert later > ids[-1] and later.startswith("run_20231114T221320500_")


def test_trace_on_disk_is_valid_json_after_kill_9(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import anyio, sys
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        import silo_async as silo
        from tests.worlds import ENV

        async def agent(ctx):
            while True:
                await ctx.call_tool("get_customer", {{"customerId": "CUS-001"}})
                await ctx.call_tool("get_customer", {{"customerId": "CUS-" + "9" * 5000}})

        anyio.run(lambda: silo.run(ENV, "TASK-BLOCK", agent, max_tool_calls=20_000, timeout=30,
                                   runs_dir={str(tmp_path)!r}))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        for _ in range(200):
            traces = list(tmp_path.glob("*/trace.jsonl"))
            if traces and traces[0].stat().st_size > 200_000:
                break
            subprocess.run(["sleep", "0.05"], check=True)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    [trace] = list(tmp_path.glob("*/trace.jsonl"))
    text = trace.read_text()
    lines = text.splitlines()
    if not text.endswith("\n"):
        # Linux may cut a write() that spans pages when SIGKILL lands between two pages: only
        # the last line can be torn, and every reader drops an unterminated last line.
        lines.pop()
    assert len(lines) > 10
    events: list[Any] = [json.loads(line) for line in lines]
    assert events[0]["type"] == "run_start"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
