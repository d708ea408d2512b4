"""Run directories: created on demand, written on the loop or by silo_async's own threads."""

from __future__ import annotations

import functools
import gc
import json
import math
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

import silo_async as silo
from silo_async.runs import _writer as writing

from .worlds import ENV, blocker
from .worlds import create_state as create_world

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
            waits.append(await anyio.to_thread.run_sync(other_written.wait, 10.0))
        return "done"

    def written(index: int, result: silo.RunResult) -> None:
        if index == 1:
            other_written.set()

    try:
        with anyio.fail_after(30):
            results = await silo.run_many(
                ENV, ["TASK-BLOCK", "TASK-ANSWER"], agent, runs_dir=tmp_path, on_result=written
            )
    finally:
        limiter.total_tokens = tokens
    assert waits == [True]  # the other run was written while this thread still waited
    assert all((tmp_path / r.run_id / "result.json").is_file() for r in results)


class _World(dict[str, Any]):
    """A world that can be watched with a weak reference."""


async def test_a_run_waiting_to_write_its_files_has_let_go_of_its_world(tmp_path: Path) -> None:
    worlds: list[weakref.ref[_World]] = []

    def create_state() -> _World:
        world = _World(create_world())
        worlds.append(weakref.ref(world))
        return world

    env = silo.Environment(
        name="watched",
        create_state=create_state,
        tools=list(ENV.tools),
        verifiers=list(ENV.verifiers),
        tasks=list(ENV.tasks),
    )
    writer = writing._writer()
    writer.threads_until = math.inf  # as if the disk were slow: the files go to the threads
    limiter = writer.limiter
    holders = [object() for _ in range(int(limiter.total_tokens))]

    async def agent(ctx: silo.AgentContext) -> str:
        for holder in holders:  # every artifact thread is now taken: the write has to wait
            await limiter.acquire_on_behalf_of(holder)
        return "2"

    async with anyio.create_task_group() as tg:
        tg.start_soon(functools.partial(silo.run, env, "TASK-ANSWER", agent, runs_dir=tmp_path))
        with anyio.fail_after(5):
            while limiter.statistics().tasks_waiting == 0:  # noqa: ASYNC110 (no event to await)
                await anyio.sleep(0.001)
        gc.collect()
        alive = [ref() is not None for ref in worlds]
        for holder in holders:
            limiter.release_on_behalf_of(holder)
    assert alive == [False]  # graded and let go of before its files are written
    [run_dir] = tmp_path.iterdir()
    assert json.loads((run_dir / "result.json").read_text())["passed"] is True


def _threads_of_steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the thread that runs each run directory's creation (and still create it)."""
    threads: list[int] = []
    create = writing._create_run_dir

    def recorded(run_dir: str) -> int:
        threads.append(threading.get_ident())
        return create(run_dir)

    monkeypatch.setattr(writing, "_create_run_dir", recorded)
    return threads


async def test_a_quick_disk_is_written_from_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writing, "SLOW_IO_S", 60.0)  # every step counts as quick
    threads = _threads_of_steps(monkeypatch)
    await silo.run_many(ENV, ["TASK-ANSWER"], blocker, runs=3, concurrency=1, runs_dir=tmp_path)
    assert threads == [threading.get_ident()] * 3  # no worker thread: the GIL stays with the loop
    assert len(list(tmp_path.glob("*/run.json"))) == 3


async def test_a_slow_step_sends_the_next_ones_to_worker_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writing, "SLOW_IO_S", 0.0)  # every step counts as slow
    monkeypatch.setattr(writing, "SLOW_SPELL_S", 60.0)
    threads = _threads_of_steps(monkeypatch)
    await silo.run_many(ENV, ["TASK-ANSWER"], blocker, runs=3, concurrency=1, runs_dir=tmp_path)
    loop = threading.get_ident()
    assert threads[0] == loop  # tried on the loop first...
    assert loop not in threads[1:]  # ...then, the disk being slow, on the worker threads
    assert len(list(tmp_path.glob("*/run.json"))) == 3  # and every file written all the same


async def test_the_loop_tries_again_after_a_slow_spell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writing, "SLOW_IO_S", 60.0)
    writing._writer().threads_until = time.monotonic() - 0.001  # a spell that just ended
    threads = _threads_of_steps(monkeypatch)
    await silo.run(ENV, "TASK-ANSWER", blocker, runs_dir=tmp_path)
    assert threads == [threading.get_ident()]
