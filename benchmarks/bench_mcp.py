"""What MCP costs on top of an episode: median µs per ``tools/call`` and HTTP throughput.

In one run, on a crm world (``get_user``, valid input):

* ``episode_call_us``: ``Episode.call_tool`` itself;
* ``mcp_memory_call_us``: a ``tools/call`` round trip through the official mcp client and the
  served episode in memory (no transport);
* ``mcp_http_call_us``: the same over streamable HTTP on loopback, one client at a time, the
  server (``silo-async serve --transport http``) in its own process;
* ``http_calls_per_s``: that server's throughput with 200 clients at once, each playing its own
  episode.

Targets: ``mcp_memory_call_us`` <= 10 x ``episode_call_us``; ``http_calls_per_s`` >= 1,000.
Prints a table, then one JSON line. Run: ``.venv/bin/python benchmarks/bench_mcp.py``
(``--clients N``, ``--calls N`` per client).
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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import silo_async as silo
from silo_async.serve import EpisodeServer

TASK = "TASK-001"
TOOL, ARGS = "get_user", {"userId": "USR-001"}
ROUNDS = 7


async def median_us(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    """Median over ROUNDS of the mean µs per call (after a warm-up round)."""
    samples: list[float] = []
    for round_ in range(ROUNDS + 1):
        start = time.perf_counter()
        for _ in range(calls):
            await call()
        if round_:
            samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


async def in_process(env: silo.Environment) -> tuple[float, float]:
    limit = 10**9
    async with silo.episode(env, TASK, max_tool_calls=limit, timeout=None) as ep:
        direct = await median_us(lambda: ep.call_tool(TOOL, ARGS), 2_000)
        served = EpisodeServer(ep, name=env.name)
        async with Client(served.server) as client:
            memory = await median_us(lambda: client.call_tool(TOOL, ARGS), 300)
    return direct, memory


def start_server(project: Path) -> tuple[subprocess.Popen[str], str]:
    command = [
        sys.executable, "-m", "silo_async", "serve", "--env", "sales", "--task", TASK,
        "--transport", "http", "--port", "0", "--json", "--max-tool-calls", "1000000",
        "--timeout-ms", "3600000",
    ]  # fmt: skip
    proc = subprocess.Popen(
        command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    return proc, str(json.loads(proc.stdout.readline())["url"])


async def one_client(url: str, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async with httpx2.AsyncClient(timeout=60) as http, httpx2.AsyncClient(timeout=60) as session:
        opened = (await http.post(f"{url}/episodes", json={"task": TASK})).json()
        async with Client(streamable_http_client(opened["url"], http_client=session)) as client:
            await client.call_tool(TOOL, ARGS)  # connected and warm
            return await work(client)


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def throughput(url: str, clients: int, calls: int, server_pid: int) -> dict[str, float]:
    """Calls per second with every client connected, and the CPU each side spent per call."""
    ready, done = anyio.Event(), anyio.Event()
    waiting, running = [clients], [clients]
    marks: list[float] = []

    async def work(client: Client) -> None:
        waiting[0] -= 1
        if not waiting[0]:
            marks.extend((time.perf_counter(), cpu_s(os.getpid()), cpu_s(server_pid)))
            ready.set()
        await ready.wait()  # every client connected: measure calls only
        for _ in range(calls):
            await client.call_tool(TOOL, ARGS)
        running[0] -= 1
        if not running[0]:
            marks.extend((time.perf_counter(), cpu_s(os.getpid()), cpu_s(server_pid)))
            done.set()
        await done.wait()  # nobody disconnects while others are still measured

    async with anyio.create_task_group() as group:
        for _ in range(clients):
            group.start_soon(one_client, url, work)
    total = clients * calls
    return {
        "per_s": total / (marks[3] - marks[0]),
        "client_cpu_us": (marks[4] - marks[1]) / total * 1e6,
        "server_cpu_us": (marks[5] - marks[2]) / total * 1e6,
    }


async def over_http(
    url: str, clients: int, calls: int, server_pid: int
) -> tuple[float, dict[str, float]]:
    async def sequential(client: Client) -> float:
        return await median_us(lambda: client.call_tool(TOOL, ARGS), 100)

    return await one_client(url, sequential), await throughput(url, clients, calls, server_pid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20, help="calls per client")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "silo_async", "init", "sales", "--template", "crm"],
            cwd=project, check=True, capture_output=True,
        )  # fmt: skip
        env = silo.load_environment("sales", project)
        direct, memory = anyio.run(in_process, env)
        proc, url = start_server(project)
        try:
            http_us, load = anyio.run(over_http, url, options.clients, options.calls, proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    rows = [
        ("Episode.call_tool", f"{direct:.1f} µs", ""),
        ("MCP in memory", f"{memory:.1f} µs", f"{memory / direct:.1f} x episode (target <= 10)"),
        ("MCP over HTTP, 1 client", f"{http_us:.0f} µs", ""),
        (f"HTTP, {options.clients} clients", f"{load['per_s']:,.0f} calls/s", "target >= 1,000"),
        ("  server CPU per call", f"{load['server_cpu_us']:.0f} µs", ""),
        ("  clients' CPU per call", f"{load['client_cpu_us']:.0f} µs", "(the mcp client, httpx2)"),
    ]
    for label, figure, note in rows:
        print(f"{label:<26}{figure:>16}  {note}")
    print(
        json.dumps(
            {
                "episode_call_us": round(direct, 2),
                "mcp_memory_call_us": round(memory, 2),
                "mcp_http_call_us": round(http_us, 1),
                "http_calls_per_s": round(load["per_s"], 1),
                "server_cpu_us_per_call": round(load["server_cpu_us"], 1),
                "client_cpu_us_per_call": round(load["client_cpu_us"], 1),
                "clients": options.clients,
                "calls_per_client": options.calls,
            }
        )
    )


if __name__ == "__main__":
    main()
