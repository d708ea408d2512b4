"""OpenTelemetry on vs off: CPU per rollout, spans exported over OTLP to a real receiver.

Two workloads, each run in alternating rounds with telemetry off and on (``RunOptions(otel=
True)``: one ``invoke_agent`` span, one ``execute_tool`` span per call, the evaluation event):

* ``bench`` — the benchmark world's scripted agent making 10 tool calls, in memory (no run
  directory), concurrency 64: the cheapest rollout there is, so the worst case for telemetry;
* ``crm`` — the crm template's scripted solver on every task, each rollout writing its run
  directory (on /dev/shm when it exists), concurrency 64: a rollout as an eval runs one;
* ``model`` — ``agents.openai_chat`` on the benchmark world against ``silo-async
  scripted-model`` (in a process of its own): two responses, two tool calls per rollout, a
  tenth of ``--rollouts``, concurrency 16: the rollout the GenAI spans describe.

CPU is the process's (``time.process_time``: every thread, the SDK's batch exporter's
included) divided by the rollouts of the round; the receiver (an OTLP/HTTP endpoint answering
200 to each export) runs in a process of its own, so its decoding is not counted. Medians over
the rounds, and the median of the on/off ratios of the pairs. Prints a table, then one JSON line.
Target: on costs at most 10 % more CPU per rollout.

Run: ``.venv/bin/python benchmarks/bench_otel.py [--rounds 7] [--rollouts 2000]
[--workload bench|crm|model|all]`` (needs the ``otel`` and ``openai`` extras).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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

import silo_async as silo
from silo_async import _telemetry
from silo_async.agents._load import load_agent
from silo_async.project import Project

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from _world import ENV, ten_calls  # noqa: E402

#: The receiver: reads each export and answers 200 with an empty response (a valid one).
SINK = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""

#: The model of the ``model`` workload: read the account, note it, then say so.
MODEL_SCRIPT = """
from silo_async.testing import Reply, ToolCall

def play(request):
    if request.turn == 0:
        return Reply(
            text="Reading ACC-001, then noting it.",
            tool_calls=[
                ToolCall("get_account", {"accountId": "ACC-001"}),
                ToolCall("add_note", {"accountId": "ACC-001", "text": "Called back."}),
            ],
            input_tokens=200,
            output_tokens=40,
        )
    return Reply(text="Noted ACC-001.", input_tokens=320, output_tokens=8)
"""

Batch = Callable[[bool], Awaitable[int]]


@contextmanager
def receiver() -> Iterator[str]:
    """An OTLP/HTTP endpoint in a process of its own; its URL."""
    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        assert sink.stdout is not None
        yield f"http://127.0.0.1:{sink.stdout.readline().strip()}"
    finally:
        sink.terminate()
        sink.wait()


def bench_world(rollouts: int) -> Batch:
    async def batch(otel: bool) -> int:
        how = silo.RunOptions(otel=otel)
        results = await silo.run_many(
            ENV, ["TASK-001"], ten_calls, runs=rollouts, concurrency=64, options=how
        )
        assert all(r.passed for r in results)
        return len(results)

    return batch


@contextmanager
def model_server(scratch: Path) -> Iterator[str]:
    """``silo-async scripted-model`` playing :data:`MODEL_SCRIPT`, in a process of its own."""
    script = scratch / "bench_model.py"
    script.write_text(MODEL_SCRIPT)
    command = [sys.executable, "-m", "silo_async", "scripted-model", f"{script}:play"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait()


def model_agent(rollouts: int, base_url: str) -> Batch:
    from silo_async import agents

    agent = agents.openai_chat("scripted", base_url=base_url)

    async def batch(otel: bool) -> int:
        how = silo.RunOptions(otel=otel)
        count = max(1, rollouts // 10)
        results = await silo.run_many(
            ENV, ["TASK-001"], agent, runs=count, concurrency=16, options=how
        )
        assert all(r.passed for r in results), results[0].error
        return len(results)

    return batch


async def crm_world(rollouts: int, scratch: Path) -> Batch:
    (scratch / "project").mkdir()
    project = await Project.open(scratch / "project")
    env = await (await project.environments.create("crm", template="crm")).load()
    solver = load_agent(str(ROOT / "examples" / "agents" / "crm_solver.py"), ROOT).fn
    tasks = [t.id for t in env.tasks]
    runs = max(1, rollouts // len(tasks))
    rounds = iter(range(1_000_000))

    async def batch(otel: bool) -> int:
        runs_dir = scratch / "runs" / str(next(rounds))
        results = await silo.run_many(
            env,
            tasks,
            solver,
            runs=runs,
            concurrency=64,
            runs_dir=runs_dir,
            options=silo.RunOptions(otel=otel),
        )
        assert all(r.passed for r in results)
        shutil.rmtree(runs_dir)
        return len(results)

    return batch


async def measure(batch: Batch, rounds: int) -> dict[str, Any]:
    """CPU µs per rollout off and on, alternating rounds (the first pair warms up, unkept)."""
    off: list[float] = []
    on: list[float] = []
    for number in range(rounds + 1):
        pair = []
        for otel in (False, True) if number % 2 else (True, False):
            started = time.process_time()
            count = await batch(otel)
            if otel:  # every span sent: the exporter's work belongs to the round
                await anyio.to_thread.run_sync(_telemetry.flush)
            pair.append((otel, (time.process_time() - started) / count * 1e6))
        if number:
            off += [us for otel, us in pair if not otel]
            on += [us for otel, us in pair if otel]
    ratios = [b / a for a, b in zip(off, on, strict=True)]
    return {
        "off_us": round(statistics.median(off), 1),
        "on_us": round(statistics.median(on), 1),
        "overhead_pct": round((statistics.median(ratios) - 1) * 100, 1),
        "overhead_range_pct": [round((r - 1) * 100, 1) for r in (min(ratios), max(ratios))],
    }


async def main(args: argparse.Namespace) -> None:
    found: dict[str, Any] = {}
    with receiver() as endpoint, tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        workloads = ["bench", "crm", "model"] if args.workload == "all" else [args.workload]
        for name in workloads:
            if name == "bench":
                found[name] = await measure(bench_world(args.rollouts), args.rounds)
            elif name == "crm":
                batch = await crm_world(args.rollouts, Path(scratch))
                found[name] = await measure(batch, args.rounds)
            else:
                with model_server(Path(scratch)) as base_url:
                    found[name] = await measure(model_agent(args.rollouts, base_url), args.rounds)
        _telemetry.shutdown()
    print(f"{'workload':<10}{'off µs':>10}{'on µs':>10}{'overhead':>10}  range")
    for name, row in found.items():
        low, high = row["overhead_range_pct"]
        print(
            f"{name:<10}{row['off_us']:>10}{row['on_us']:>10}{row['overhead_pct']:>9}%"
            f"  {low}..{high} %"
        )
    print(json.dumps({"rounds": args.rounds, "rollouts": args.rollouts, **found}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rollouts", type=int, default=2000)
    parser.add_argument("--workload", choices=["bench", "crm", "model", "all"], default="all")
    parser.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    anyio.run(main, parser.parse_args())
