"""What each harness adapter costs on top of an episode, and how many OpenEnv sessions one holds.

In one run, on a crm world (``get_user``, valid input), median µs per call:

* ``episode_call_us``: ``Episode.call_tool`` itself, the floor every adapter stands on;
* ``inspect_tooldef_us``: the Inspect ``ToolDef`` callable (``silo_task``'s tools), in the loop;
* ``held_call_us``: an episode held on the background loop and called from another event loop
  through a worker thread — the path of verifiers' harness (``Session.call_tool``);
* ``trl_method_us``: a TRL ``environment_factory`` tool method, called synchronously;
* ``openenv_call_us``: a ``call_tool`` step over OpenEnv's ``/ws`` (a ``websockets`` client, the
  library OpenEnv's client uses), server in its own process; ``openenv_server_cpu_us`` that
  server's CPU time per call;
* ``nemo_gym_call_us``: a ``POST /get_user`` with the session cookie (keep-alive HTTP), server in
  its own process; ``nemo_gym_server_cpu_us`` its CPU per call.

Then ``openenv_sessions``: ``--sessions`` WebSocket sessions opened at once on one server
process (each ``reset`` into its own episode and world), every one answering a call while all
are open: ``openenv_open_s`` to open them, ``openenv_rss_kib_per_session`` the server's resident
memory per session. OpenEnv's servers default to one environment per server and document
raising ``max_concurrent_envs``; its guidance is 256 sessions per core (512 on this 2-core
machine), printed beside the figure.

Prints a table, then one JSON line. Run: ``.venv/bin/python benchmarks/bench_harnesses.py``
(``--calls N``, ``--sessions N``). Needs the ``inspect`` and ``harness-servers`` extras.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
from websockets.asyncio.client import connect

import silo_async as silo
from silo_async.integrations._held import HeldEpisode
from silo_async.integrations.inspect._tools import tool_defs
from silo_async.integrations.trl import environment_factory
from silo_async.project import load_environment

TASK = "TASK-001"
TOOL, ARGS = "get_user", {"userId": "USR-001"}
ROUNDS = 5
OPENENV_PER_CORE = 256
BIG = ["--max-tool-calls", "100000000", "--timeout-ms", "3600000"]


def median_of_rounds(sample: Callable[[], float]) -> float:
    """Median over ROUNDS (after a warm-up) of one round's µs per call."""
    sample()
    return statistics.median(sample() for _ in range(ROUNDS))


async def async_us(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    samples = []
    for _ in range(ROUNDS + 1):
        start = time.perf_counter()
        for _ in range(calls):
            await call()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples[1:])


async def in_process(project: Path, calls: int) -> dict[str, float]:
    env = load_environment("crm", project)
    limits: dict[str, Any] = {"max_tool_calls": 10**9, "timeout": None}
    async with silo.episode(env, TASK, max_tool_calls=10**9, timeout=None) as ep:
        episode_us = await async_us(lambda: ep.call_tool(TOOL, ARGS), calls)
        (tool,) = [d for d in tool_defs(ep, list(ep.tools)) if d.name == TOOL]
        inspect_us = await async_us(lambda: tool.tool(**ARGS), calls)
    held = await anyio.to_thread.run_sync(lambda: HeldEpisode(env, TASK, limits))
    held_us = await async_us(lambda: anyio.to_thread.run_sync(held.call_tool, TOOL, ARGS), calls)
    await anyio.to_thread.run_sync(held.close, None)
    return {
        "episode_call_us": episode_us,
        "inspect_tooldef_us": inspect_us,
        "held_call_us": held_us,
    }


def trl_us(project: Path, calls: int) -> float:
    cls = environment_factory("crm", cwd=project, max_tool_calls=10**9)
    instance = cls()
    instance.reset(task=TASK)
    method = getattr(instance, TOOL)

    def round_() -> float:
        start = time.perf_counter()
        for _ in range(calls):
            method(**ARGS)
        return (time.perf_counter() - start) / calls * 1e6

    return median_of_rounds(round_)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@contextmanager
def server(project: Path, command: list[str]) -> Iterator[tuple[str, int]]:
    """A server child in the project: its base URL (from its JSON startup line) and pid."""
    with subprocess.Popen(
        command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as child:
        try:
            assert child.stdout is not None
            info = json.loads(child.stdout.readline())
            yield info["url"], child.pid
        finally:
            child.terminate()
            child.wait(timeout=30)


def serve_command(protocol: str) -> list[str]:
    return [sys.executable, "-m", "silo_async", "serve", "--env", "crm", "--protocol", protocol,
            "--port", "0", "--json", *BIG]  # fmt: skip


async def openenv_us(url: str, pid: int, calls: int) -> tuple[float, float]:
    frame = json.dumps(
        {"type": "step", "data": {"type": "call_tool", "tool_name": TOOL, "arguments": ARGS}}
    )
    async with connect(url.replace("http", "ws", 1) + "/ws", max_size=None) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {"task": TASK}}))
        await ws.recv()

        async def call() -> None:
            await ws.send(frame)
            await ws.recv()

        cpu = cpu_seconds(pid)
        wall = await async_us(call, calls)
        server_cpu = (cpu_seconds(pid) - cpu) / (calls * (ROUNDS + 1)) * 1e6
    return wall, server_cpu


async def nemo_gym_us(url: str, pid: int, calls: int) -> tuple[float, float]:
    async with httpx2.AsyncClient(base_url=url) as client:
        await client.post("/seed_session", json={"task": TASK})

        async def call() -> None:
            response = await client.post(f"/{TOOL}", json=ARGS)
            response.raise_for_status()

        cpu = cpu_seconds(pid)
        wall = await async_us(call, calls)
        server_cpu = (cpu_seconds(pid) - cpu) / (calls * (ROUNDS + 1)) * 1e6
    return wall, server_cpu


async def hold_sessions(url: str, pid: int, sessions: int) -> dict[str, float]:
    """Open ``sessions`` WebSocket sessions at once, each in its own episode; one call on each."""
    ws_url = url.replace("http", "ws", 1) + "/ws"
    before = rss_kib(pid)
    opened: list[Any] = []
    limiter = anyio.CapacityLimiter(64)
    start = time.perf_counter()

    async def open_one() -> None:
        async with limiter:
            ws = await connect(ws_url, max_size=None, ping_interval=None, open_timeout=60)
            await ws.send(json.dumps({"type": "reset", "data": {"task": TASK}}))
            reply = json.loads(await ws.recv())
            assert reply["type"] == "observation", reply
            opened.append(ws)

    async with anyio.create_task_group() as group:
        for _ in range(sessions):
            group.start_soon(open_one)
    open_s = time.perf_counter() - start
    frame = json.dumps(
        {"type": "step", "data": {"type": "call_tool", "tool_name": TOOL, "arguments": ARGS}}
    )
    answered = 0

    async def call_one(ws: Any) -> None:
        nonlocal answered
        async with limiter:
            await ws.send(frame)
            reply = json.loads(await ws.recv())
            answered += reply["data"]["observation"]["result"]["is_error"] is False

    async with anyio.create_task_group() as group:
        for ws in opened:
            group.start_soon(call_one, ws)
    after = rss_kib(pid)
    for ws in opened:
        await ws.close()
    return {
        "openenv_sessions": float(answered),
        "openenv_open_s": open_s,
        "openenv_rss_kib_per_session": (after - before) / max(answered, 1),
    }


def sessions_command(sessions: int) -> list[str]:
    """A server child with room for ``sessions`` open episodes (the library's max_sessions)."""
    code = (
        "import anyio, json, sys\n"
        "from silo_async.project import load_environment\n"
        "from silo_async.serve._openenv import serve_openenv\n"
        "env = load_environment('crm')\n"
        "ready = lambda info: print(json.dumps(info), flush=True)\n"
        f"anyio.run(lambda: serve_openenv(env, port=0, max_episodes={sessions}, "
        "timeout=None, max_tool_calls=10**9, on_ready=ready))\n"
    )
    return [sys.executable, "-c", code]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per round")
    parser.add_argument("--sessions", type=int, default=2000, help="OpenEnv sessions held")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "silo_async", "init", "crm", "--template", "crm"],
            cwd=project, check=True, capture_output=True,
        )  # fmt: skip
        figures: dict[str, float] = anyio.run(in_process, project, args.calls)
        figures["trl_method_us"] = trl_us(project, args.calls)
        with server(project, serve_command("openenv")) as (url, pid):
            wall, cpu = anyio.run(openenv_us, url, pid, args.calls)
            figures.update(openenv_call_us=wall, openenv_server_cpu_us=cpu)
        with server(project, serve_command("nemo-gym")) as (url, pid):
            wall, cpu = anyio.run(nemo_gym_us, url, pid, args.calls)
            figures.update(nemo_gym_call_us=wall, nemo_gym_server_cpu_us=cpu)
        with server(project, sessions_command(args.sessions)) as (url, pid):
            figures.update(anyio.run(hold_sessions, url, pid, args.sessions))
    cores = os.cpu_count() or 1
    base = figures["episode_call_us"]
    for key, value in figures.items():
        ratio = f"{value / base:6.1f} x episode" if key.endswith("_us") else ""
        print(f"{key:<34}{value:>14.1f}  {ratio}")
    print(f"{'openenv published (256/core)':<34}{OPENENV_PER_CORE * cores:>14}  on {cores} cores")
    print(f"(load average {os.getloadavg()[0]:.1f} on {cores} cores)")
    figures["openenv_published_sessions"] = float(OPENENV_PER_CORE * cores)
    print(json.dumps({k: round(v, 2) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
