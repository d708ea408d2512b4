"""What MCP costs on top of an episode: median µs per ``tools/call`` and HTTP throughput.

In one run, on a crm world (``get_user``, valid input):

* ``episode_call_us``: ``Episode.call_tool`` itself;
* ``mcp_memory_call_us``: a ``tools/call`` round trip through the official mcp client and the
  served episode in memory (no transport);
* ``mcp_http_call_us``: the same over streamable HTTP on loopback, one client at a time, the
  server (``silo-async serve --transport http``) in its own process;
* ``http_calls_per_s``: that server's throughput with 200 clients at once, each playing its own
  episode through the official client. The clients live in ``--client-procs`` processes (2 by
  default, one per core of a 2-core machine): in one process they would share one core and cap
  the figure long before the server does. Median over ``--rounds`` rounds.
* ``server_cpu_us_per_call``: the server process's CPU time (user + system) over those rounds
  divided by their calls, median of the rounds. Unlike throughput it barely moves when other
  work shares the machine, so it is the figure to compare between runs;
  ``client_cpu_us_per_call`` is the same for the client processes together, and
  ``free_2core_calls_per_s`` what the two imply on two free cores shared by server and clients:
  ``min(1e6 / server, 2e6 / (server + clients))`` (the server runs on one core).

* ``kb_per_open_episode``: what an open crm episode costs the server in memory: the growth of
  a fresh server's resident set (VmRSS) while ``--episodes`` (1,000) episodes are opened and
  held open, divided by their number.

Targets: ``mcp_memory_call_us`` <= 10 x ``episode_call_us``; ``http_calls_per_s`` >= 1,000.
Prints a table, then one JSON line. Run: ``.venv/bin/python benchmarks/bench_mcp.py``
(``--clients N``, ``--calls N`` per client and round, ``--rounds N``, ``--client-procs N``,
``--episodes N``).
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import silo_async as silo
from silo_async.serve import EpisodeServer

TASK = "TASK-001"
TOOL, ARGS = "get_user", {"userId": "USR-001"}
ROUNDS = 7
#: One TLS context for all clients (the server is plain HTTP): httpx2 builds one per client
#: otherwise, loading the CA bundle each time, which dominates connecting 200 clients.
TLS = ssl.create_default_context()


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


def start_server(project: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    command = [
        sys.executable, "-m", "silo_async", "serve", "--env", "sales", "--task", TASK,
        "--transport", "http", "--port", "0", "--json", "--max-tool-calls", "1000000",
        "--timeout-ms", "3600000", *extra,
    ]  # fmt: skip
    proc = subprocess.Popen(
        command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert proc.stdout is not None
    return proc, str(json.loads(proc.stdout.readline())["url"])


async def one_client(url: str, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async with (
        httpx2.AsyncClient(timeout=120, verify=TLS) as http,
        httpx2.AsyncClient(timeout=120, verify=TLS) as session,
    ):
        opened = (await http.post(f"{url}/episodes", json={"task": TASK})).json()
        async with Client(streamable_http_client(opened["url"], http_client=session)) as client:
            await client.call_tool(TOOL, ARGS)  # connected and warm
            return await work(client)


def rss_kb(pid: int) -> int:
    """The resident set of a process, in KB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def open_many(url: str, count: int) -> None:
    """Open ``count`` episodes, a few at a time, and leave them open."""
    limiter = anyio.CapacityLimiter(20)

    async def one(http: httpx2.AsyncClient) -> None:
        async with limiter:
            response = await http.post(f"{url}/episodes", json={"task": TASK})
            assert response.status_code == 201, response.text

    async with httpx2.AsyncClient(timeout=120, verify=TLS) as http, anyio.create_task_group() as g:
        for _ in range(count):
            g.start_soon(one, http)


def memory_per_episode(project: Path, count: int) -> float:
    """KB of server memory per open episode, with ``count`` open (a fresh server)."""
    warm = 10
    proc, url = start_server(project, "--max-episodes", str(1 + warm + count))
    try:
        anyio.run(open_many, url, warm)  # the first episodes build what all share
        before = rss_kb(proc.pid)
        anyio.run(open_many, url, count)
        return (rss_kb(proc.pid) - before) / count
    finally:
        proc.kill()  # not Ctrl-C: grading and writing a thousand episodes is not measured here
        proc.wait(timeout=120)


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def worker(url: str, clients: int, calls: int) -> None:
    """A client process: connect ``clients`` clients, then play a round per ``go`` on stdin.

    Prints ``ready`` once every client is connected and ``done`` after each round; the parent
    times the rounds and reads every process's CPU time. Any other line (or EOF) stops it.
    """
    # starts[r] is set when round r begins; the next round's event exists before that.
    starts, ends = [anyio.Event()], [anyio.Event()]
    counts = {"connected": 0, "finished": 0}
    stopping = [False]

    async def work(client: Client) -> None:
        counts["connected"] += 1
        if counts["connected"] == clients:
            ends[0].set()
        round_ = 0
        while True:
            await starts[round_].wait()
            if stopping[0]:
                return
            for _ in range(calls):
                await client.call_tool(TOOL, ARGS)
            counts["finished"] += 1
            if counts["finished"] == clients:
                ends[round_ + 1].set()
            round_ += 1

    async def conduct() -> None:
        await ends[0].wait()
        print("ready", flush=True)
        round_ = 0
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            starts.append(anyio.Event())
            ends.append(anyio.Event())
            stopping[0] = line.strip() != "go"
            counts["finished"] = 0
            starts[round_].set()
            if stopping[0]:
                return
            await ends[round_ + 1].wait()
            print("done", flush=True)
            round_ += 1

    async with anyio.create_task_group() as group:
        group.start_soon(conduct)
        for _ in range(clients):
            group.start_soon(one_client, url, work)


def _read_line(stream: IO[str] | None) -> str:
    assert stream is not None
    return stream.readline().strip()


def throughput(
    url: str, clients: int, calls: int, rounds: int, procs: int, server_pid: int
) -> dict[str, Any]:
    """Rounds of ``clients x calls`` calls over ``procs`` client processes; medians per round."""
    shares = [clients // procs + (i < clients % procs) for i in range(procs)]
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", url, str(share), str(calls)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for share in shares
    ]
    per_s, server_us, client_us = [], [], []
    try:
        for proc in workers:
            assert _read_line(proc.stdout) == "ready"
        total = clients * calls
        for _ in range(rounds):
            start = (time.perf_counter(), cpu_s(server_pid), sum(cpu_s(w.pid) for w in workers))
            for proc in workers:
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            for proc in workers:
                assert _read_line(proc.stdout) == "done"
            end = (time.perf_counter(), cpu_s(server_pid), sum(cpu_s(w.pid) for w in workers))
            per_s.append(total / (end[0] - start[0]))
            server_us.append((end[1] - start[1]) / total * 1e6)
            client_us.append((end[2] - start[2]) / total * 1e6)
    finally:
        for proc in workers:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=120)
    server, client = statistics.median(server_us), statistics.median(client_us)
    return {
        "per_s": statistics.median(per_s),
        "per_s_rounds": per_s,
        "server_cpu_us": server,
        "client_cpu_us": client,
        "free_2core_per_s": min(1e6 / server, 2e6 / (server + client)),
    }


async def sequential(url: str) -> float:
    async def timed(client: Client) -> float:
        return await median_us(lambda: client.call_tool(TOOL, ARGS), 100)

    result: float = await one_client(url, timed)
    return result


def load_average() -> float:
    """The 1-minute load average (how busy the machine was)."""
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--calls", type=int, default=10, help="calls per client and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--client-procs", type=int, default=2, help="client processes")
    parser.add_argument("--episodes", type=int, default=1000, help="open, for the memory figure")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        url, clients, calls = options.worker
        anyio.run(worker, url, int(clients), int(calls))
        return
    load_before = load_average()
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
            http_us = anyio.run(sequential, url)
            load = throughput(
                url, options.clients, options.calls, options.rounds, options.client_procs, proc.pid
            )
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        load["kb_per_episode"] = memory_per_episode(project, options.episodes)
    report(options, direct, memory, http_us, load, (load_before + load_average()) / 2)


def report(
    options: argparse.Namespace,
    direct: float,
    memory: float,
    http_us: float,
    load: dict[str, Any],
    load_avg: float,
) -> None:
    clients = f"HTTP, {options.clients} clients in {options.client_procs} processes"
    rounds = ", ".join(f"{r:,.0f}" for r in load["per_s_rounds"])
    rows = [
        ("Episode.call_tool", f"{direct:.1f} µs", ""),
        ("MCP in memory", f"{memory:.1f} µs", f"{memory / direct:.1f} x episode (target <= 10)"),
        ("MCP over HTTP, 1 client", f"{http_us:.0f} µs", ""),
        (clients, f"{load['per_s']:,.0f} calls/s", f"target >= 1,000 (rounds: {rounds})"),
        ("  server CPU per call", f"{load['server_cpu_us']:.0f} µs", ""),
        ("  clients' CPU per call", f"{load['client_cpu_us']:.0f} µs", "(the mcp client, httpx2)"),
        ("  on 2 free cores", f"{load['free_2core_per_s']:,.0f} calls/s", "(implied by CPU)"),
        (
            f"Memory per open episode ({options.episodes:,})",
            f"{load['kb_per_episode']:.0f} KB",
            "(server VmRSS growth / episodes)",
        ),
    ]
    for label, figure, note in rows:
        print(f"{label:<42}{figure:>16}  {note}")
    print(f"(load average {load_avg:.1f} on {os.cpu_count()} cores)")
    print(
        json.dumps(
            {
                "episode_call_us": round(direct, 2),
                "mcp_memory_call_us": round(memory, 2),
                "mcp_http_call_us": round(http_us, 1),
                "http_calls_per_s": round(load["per_s"], 1),
                "server_cpu_us_per_call": round(load["server_cpu_us"], 1),
                "client_cpu_us_per_call": round(load["client_cpu_us"], 1),
                "free_2core_calls_per_s": round(load["free_2core_per_s"], 1),
                "kb_per_open_episode": round(load["kb_per_episode"], 1),
                "open_episodes": options.episodes,
                "clients": options.clients,
                "client_procs": options.client_procs,
                "calls_per_client": options.calls,
                "rounds": options.rounds,
                "load_average": round(load_avg, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
