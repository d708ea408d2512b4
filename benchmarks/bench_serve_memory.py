"""A long life stays small: a server's memory after 1,000 and after 100,000 items.

Three servers, each in its own process on 127.0.0.1, each driven by one keep-alive client that
plays its items one after the other; the server's resident memory (``VmRSS``) is read after
the first ``--baseline`` items and again after ``--items``:

* ``mcp``: ``serve_http`` (the server of ``serve --transport http``); an item is an episode,
  opened (``POST /episodes``) and finished (``POST /episodes/<id>/finish``);
* ``nemo_gym``: ``serve_nemo_gym``; an item is a session, seeded and verified;
* ``scripted_model``: ``silo-async scripted-model`` (its own command, no request history); an
  item is one Chat Completions request.

The episodes play a one-tool world with no run directory (``runs_dir=None``: 100,000 of them
would be gigabytes of disk, which is not what is measured) and ``--keep-finished`` at its
default (1,000). The contract: memory after 100,000 within 20 MB of memory after 1,000.

Prints a table, then one JSON line. Run: ``.venv/bin/python benchmarks/bench_serve_memory.py``
(``--items N``, ``--baseline N``, ``--only mcp|nemo_gym|scripted_model``). 100,000 episodes
take several minutes on a busy 2-core machine; ``tests/test_serve_long_life.py`` runs the same
code with fewer items.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2

#: The contract: growth from the baseline to 100,000 items, at most (MiB).
LIMIT_MIB = 20

#: A one-tool world served with no run directory; argv[1] names the protocol, argv[2] the
#: JSON keywords of the serve function.
SERVER = """
import json, sys
import anyio
import silo_async as silo
from silo_async.serve import serve_http
from silo_async.serve._nemo_gym import serve_nemo_gym

@silo.tool(name="count", description="Count one more.", input_schema={"type": "object"})
def count(state, args):
    state["n"] += 1
    return state["n"]

@silo.verifier(id="VER-1", task_id="TASK-1")
def counted(final, initial, ctx):
    return [silo.check("counted", final["n"] > 0)]

ENV = silo.Environment(
    name="counter", create_state=lambda: {"n": 0}, tools=[count], verifiers=[counted],
    tasks=[silo.Task("TASK-1", "Count", "Count once, then answer.", "VER-1")],
)
options = json.loads(sys.argv[2])
ready = lambda info: print(json.dumps(info), flush=True)
if sys.argv[1] == "mcp":
    serve = lambda: serve_http(ENV, "TASK-1", port=0, on_ready=ready, runs_dir=None, **options)
else:
    serve = lambda: serve_nemo_gym(ENV, port=0, on_ready=ready, runs_dir=None, **options)
anyio.run(serve)
"""

SCRIPT = """from silo_async.testing import Reply


def script(request):
    return Reply(text="ok")
"""


def rss_kib(pid: int) -> int:
    """The resident memory of process ``pid``, in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


@contextmanager
def _process(command: list[str], cwd: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    with subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line, f"{command[:4]} did not start"
            info = json.loads(line)
            yield proc, str(info["url"])
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def server(kind: str, cwd: Path, **options: Any) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The server of ``kind`` in its own process, and its URL."""
    if kind == "scripted_model":
        (cwd / "model.py").write_text(SCRIPT, encoding="utf-8")
        command = [sys.executable, "-m", "silo_async", "scripted-model", "model.py", "--json"]
    else:
        protocol = "mcp" if kind == "mcp" else "nemo-gym"
        command = [sys.executable, "-c", SERVER, protocol, json.dumps(options)]
    with _process(command, cwd) as started:
        yield started


def _episode(http: httpx2.Client) -> None:
    opened = http.post("/episodes", json={})
    assert opened.status_code == 201, opened.text
    finished = http.post(f"/episodes/{opened.json()['id']}/finish", json={"answer": "1"})
    assert finished.status_code == 200, finished.text


def _session(http: httpx2.Client) -> None:
    http.cookies.clear()
    assert http.post("/seed_session", json={"task": "TASK-1"}).status_code == 200
    assert http.post("/count", json={}).status_code == 200
    verified = http.post("/verify", json={"task": "TASK-1", "response": {"output": []}})
    assert verified.status_code == 200, verified.text


def _request(http: httpx2.Client) -> None:
    body = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}]}
    assert http.post("/v1/chat/completions", json=body).status_code == 200


#: What one item is, for each server.
PLAY: dict[str, Callable[[httpx2.Client], None]] = {
    "mcp": _episode,
    "nemo_gym": _session,
    "scripted_model": _request,
}


def measure(kind: str, baseline: int, items: int, **options: Any) -> dict[str, float]:
    """RSS (KiB) after ``baseline`` items and after ``items``, and the seconds they took."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        server(kind, Path(tmp), **options) as (proc, url),
        httpx2.Client(base_url=url, timeout=120) as http,
    ):
        started = time.monotonic()
        play = PLAY[kind]
        for _ in range(baseline):
            play(http)
        before = rss_kib(proc.pid)
        for _ in range(items - baseline):
            play(http)
        after = rss_kib(proc.pid)
        seconds = time.monotonic() - started
    return {"baseline_kib": before, "after_kib": after, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--baseline", type=int, default=1_000)
    parser.add_argument("--only", choices=sorted(PLAY), default=None)
    args = parser.parse_args()
    figures: dict[str, float] = {}
    print(f"{'server':<16}{'after ' + str(args.baseline):>14}{'after ' + str(args.items):>16}"
          f"{'growth':>12}{'per item':>12}{'items/s':>10}")  # fmt: skip
    for kind in [args.only] if args.only else sorted(PLAY):
        got = measure(kind, args.baseline, args.items)
        growth = got["after_kib"] - got["baseline_kib"]
        per_item = growth * 1024 / max(args.items - args.baseline, 1)
        rate = args.items / got["seconds"]
        print(
            f"{kind:<16}{got['baseline_kib'] / 1024:>11.1f} MB{got['after_kib'] / 1024:>13.1f} MB"
            f"{growth / 1024:>9.1f} MB{per_item:>10.0f} B{rate:>10.0f}"
        )
        figures[f"{kind}_baseline_mib"] = got["baseline_kib"] / 1024
        figures[f"{kind}_growth_mib"] = growth / 1024
        figures[f"{kind}_bytes_per_item"] = per_item
    print(json.dumps({"items": args.items, **{k: round(v, 2) for k, v in figures.items()}}))


if __name__ == "__main__":
    main()
