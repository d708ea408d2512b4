"""Run directories: created on demand, written by silo_async's own worker threads."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

import silo_async as silo

from .worlds import ENV, blocker

pytestmark = pytest.mark.anyio


async def test_concurrent_first_runs_create_a_missing_runs_dir(tmp_path: Path) -> None:
    runs_dir = tmp_path / "not" / "yet" / "there"
    results = await silo.run_many(
        ENV, ["TASK-BLOCK"], blocker, runs=12, concurrency=12, runs_dir=runs_dir
    )
    assert sorted(p.name for p in runs_dir.iterdir()) == sorted(r.run_id for r in results)
    for result in results:
        files = sorted(p.name for p in (runs_dir / result.run_id).iterdir())
        assert files == ["result.json", "run.json", "state-diff.json", "trace.jsonl"]
        written = json.loads((runs_dir / result.run_id / "result.json").read_text())
        assert written["passed"] is True


async def test_artifacts_do_not_wait_for_the_agents_worker_threads(tmp_path: Path) -> None:
    """One agent holds anyio's only default worker thread until the other run is written."""
    other_written = threading.Event()
    waits: list[bool] = []
    limiter = anyio.to_thread.current_default_thread_limiter()
    tokens = limiter.total_tokens
    limiter.total_tokens = 1

    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
        if ctx.task.startswith("Block"):
            # A blocking client in a worker thread, waiting for the other run's artifacts.
            waits.append(await anyio.to_thread.run_sync(other_written.wait, 2.0))
        return "done"

    def written(index: int, result: silo.RunResult) -> None:
        if index == 1:
            other_written.set()

    try:
        with anyio.fail_after(10):
            results = await silo.run_many(
                ENV, ["TASK-BLOCK", "TASK-ANSWER"], agent, runs_dir=tmp_path, on_result=written
            )
    finally:
        limiter.total_tokens = tokens
    assert waits == [True]  # the other run was written while this thread still waited
    assert all((tmp_path / r.run_id / "result.json").is_file() for r in results)
