"""The async SDK never blocks its event loop: the store's file I/O and imports run on a thread.

Two proofs. An audit hook sees every file a method opens, lists, creates or removes inside the
project, and on which thread: none of it happens on the event loop's thread. And an
environment whose world can only be built once another task of the same loop has run shows
that the loop goes on while an SDK call works (on the loop, it would wait for itself).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import types
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from silo_async.project import EnvironmentHandle, Project

from .test_cli_walkthrough import TOOL, VERIFIER

pytestmark = pytest.mark.anyio

#: Audit events of file-system work (``Path.is_dir`` is a plain stat and raises none).
_FILE_EVENTS = frozenset(
    {"open", "os.listdir", "os.scandir", "os.mkdir", "os.remove", "os.rename", "os.rmdir"}
)


class _Watch:
    """Which files under ``root`` were touched on thread ``loop_thread`` (audit hook sink)."""

    root: str | None = None
    loop_thread: int | None = None
    seen: list[tuple[str, str]] = []  # noqa: RUF012 - one watch per process, reset by the fixture


def _audit(event: str, args: tuple[Any, ...]) -> None:
    root = _Watch.root
    if root is None or event not in _FILE_EVENTS or threading.get_ident() != _Watch.loop_thread:
        return
    if args and isinstance(args[0], str | bytes | os.PathLike):
        path = os.fsdecode(args[0])
        if path.startswith(root):
            _Watch.seen.append((event, path))


_hook_installed = False


@pytest.fixture
def watch(tmp_path: Path) -> Iterator[type[_Watch]]:
    """Record file work under ``tmp_path`` done on the calling thread (audit hooks stay)."""
    global _hook_installed
    if not _hook_installed:  # an audit hook cannot be removed: install one, switch it off
        sys.addaudithook(_audit)
        _hook_installed = True
    _Watch.root, _Watch.loop_thread, _Watch.seen = str(tmp_path), threading.get_ident(), []
    try:
        yield _Watch
    finally:
        _Watch.root = None


async def _authored(root: Path) -> EnvironmentHandle:
    project = await Project.open(root)
    env = await project.environments.create("shop")
    await env.data.add("customers", {"CUS-001": {"id": "CUS-001", "status": "active"}})
    await env.tools.scaffold("block_customer")
    task = {"id": "TASK-001", "title": "t", "instruction": "i", "verifierId": "VER-001"}
    await env.tasks.add(task)
    await env.verifiers.scaffold("VER-001", "TASK-001")
    return env


def _sdk_calls(env: EnvironmentHandle) -> dict[str, Callable[[], Awaitable[Any]]]:
    task = {"id": "TASK-002", "title": "t", "instruction": "i", "verifierId": "VER-001"}
    project = env.project
    return {
        "environments.list": project.environments.list,
        "environments.create": lambda: project.environments.create("other"),
        "environments.open": lambda: project.environments.open("shop"),
        "load": env.load,
        "validate": env.validate,
        "data.list": env.data.list,
        "data.get": lambda: env.data.get("customers"),
        "data.add": lambda: env.data.add("orders", []),
        "data.update": lambda: env.data.update("orders", [1]),
        "data.put": lambda: env.data.put("orders", [2]),
        "data.remove": lambda: env.data.remove("orders"),
        "tasks.list": env.tasks.list,
        "tasks.get": lambda: env.tasks.get("TASK-001"),
        "tasks.add": lambda: env.tasks.add(task),
        "tasks.update": lambda: env.tasks.update({**task, "title": "u"}),
        "tasks.put": lambda: env.tasks.put(task),
        "tasks.remove": lambda: env.tasks.remove("TASK-002"),
        "tools.list": env.tools.list,
        "tools.scaffold": lambda: env.tools.scaffold("set_tier"),
        "verifiers.list": env.verifiers.list,
        "verifiers.scaffold": lambda: env.verifiers.scaffold("VER-002", "TASK-001"),
    }


async def test_no_sdk_method_touches_a_file_on_the_event_loop(
    tmp_path: Path, watch: type[_Watch]
) -> None:
    env = await _authored(tmp_path)
    (env.path / "tools" / "block_customer.py").write_text(TOOL, encoding="utf-8")
    (env.path / "verifiers" / "ver_001.py").write_text(VERIFIER, encoding="utf-8")
    watch.seen.clear()
    for name, call in _sdk_calls(env).items():
        await call()
        assert watch.seen == [], f"{name} did file work on the event loop: {watch.seen}"
    assert len(await env.tasks.list()) == 1  # every call really ran (add, update, remove)


async def test_the_loop_goes_on_while_an_sdk_call_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = await _authored(tmp_path)
    gate = types.ModuleType("_silo_offloop_gate")
    started, release = threading.Event(), threading.Event()
    gate.__dict__.update(started=started, release=release)
    monkeypatch.setitem(sys.modules, gate.__name__, gate)
    # The world is built by tools.list(): it says it started, then waits for the loop.
    (env.path / "environment.py").write_text(
        "import _silo_offloop_gate as gate\n\n\n"
        "def create_state():\n"
        "    gate.started.set()\n"
        "    if not gate.release.wait(20):\n"
        "        raise RuntimeError('the event loop was blocked')\n"
        "    return {'customers': {}}\n",
        encoding="utf-8",
    )
    progressed: list[str] = []

    async def other_task() -> None:
        await anyio.to_thread.run_sync(started.wait)  # the SDK call is in progress from here on
        progressed.append("ran while tools.list worked")
        release.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(other_task)
        tools = await env.tools.list()
    assert progressed == ["ran while tools.list worked"]
    assert [t["name"] for t in tools] == ["block_customer"]


async def test_sdk_and_store_see_the_same_files(tmp_path: Path) -> None:
    env = await _authored(tmp_path)
    store = env.store
    assert store.data.get("customers") == await env.data.get("customers")
    assert store.tasks.list() == await env.tasks.list()
    written = json.loads((env.path / "tasks" / "TASK-001.json").read_text(encoding="utf-8"))
    assert written["verifierId"] == "VER-001"
