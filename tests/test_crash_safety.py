"""SIGKILL of a writer at random points leaves only whole files, and the finished runs listed.

A process rewriting a run's three summary files in a loop is killed at random points: each file
is then absent or one whole version. An eval of rollouts with large answers (so ``result.json``
and the trace take a while to write) is killed with SIGKILL at several points while its two
writer threads are busy. Afterwards
every file under the eval directory must be whole (strict JSON) and ``runs list --eval ID`` must
list exactly the runs that have a ``run.json``. The trace is append-only: a kill may cut its
last line short (a multi-megabyte ``write`` is not atomic against SIGKILL), never another line,
and readers skip that line.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from silo_async.cli._app import app

from .test_hostile_input import strict_load

ROOT = Path(__file__).resolve().parent.parent

HEAVY = """
async def agent(ctx):
    await ctx.call_tool("get_current_time", {})
    return "x" * 300_000  # a big answer: every file of a rollout takes a while to write
"""

#: Seconds after the first result file appears (in place or as a temporary file) at which the
#: writer is killed: the first files are still being written then. Fixed seed: the same points
#: on every machine.
KILL_POINTS = sorted(random.Random(15).uniform(0.0, 0.2) for _ in range(3))


WRITER = """
import sys
from silo_async.runs._writer import _write_all

run_dir = sys.argv[1]
versions = [(b'{"v": %d, "pad": "%s"}' % (i, b"x" * 300_000)) for i in range(2)]
print("ready", flush=True)
names = ("result.json", "state-diff.json", "run.json")
for n in range(1_000_000):
    _write_all([(f"{run_dir}/{name}", versions[n % 2]) for name in names])
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_writer_killed_at_random_points_leaves_each_file_whole_or_absent(tmp_path: Path) -> None:
    rng = random.Random(6)
    for attempt in range(12):
        run_dir = tmp_path / f"run{attempt}"
        run_dir.mkdir()
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(run_dir)],
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0.0, 0.05))
        proc.kill()
        proc.communicate(timeout=30)
        for path in run_dir.iterdir():
            data = strict_load(path.read_bytes())  # never empty, never cut short
            assert data["v"] in (0, 1), path


def _files_are_whole(run_dir: Path) -> bool:
    """Every file of a run directory parses; True when the run finished (it has run.json)."""
    for path in run_dir.iterdir():
        raw = path.read_bytes()
        if path.name == "trace.jsonl":
            lines = raw.split(b"\n")
            for line in lines[:-1]:  # every line that ends is whole
                strict_load(line)
        else:
            assert path.name in {"result.json", "state-diff.json", "run.json"} or (
                path.name.startswith(".") and path.name.endswith(".json.tmp")
            ), path
            assert raw, f"{path} is empty"
            strict_load(raw)  # a temporary file is only ever named once whole
    return (run_dir / "run.json").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("delay", KILL_POINTS, ids=lambda d: f"{d * 1000:.0f}ms")
def test_sigkill_leaves_whole_files_and_runs_list_shows_the_finished_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, delay: float
) -> None:
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["init", "crm", "--template", "crm"]).exit_code == 0
    (tmp_path / "heavy.py").write_text(HEAVY)
    command = [sys.executable, "-m", "silo_async", "eval", "--env", "crm", "--agent", "heavy.py"]
    proc = subprocess.Popen(
        [*command, "--task", "TASK-001", "--runs", "24", "--concurrency", "8", "--json"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    evals = tmp_path / ".silo" / "evals"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(evals.glob("*/runs/*/*result.json*")):
        time.sleep(0.0002)
    time.sleep(delay)
    proc.kill()
    proc.wait(timeout=30)
    (eval_dir,) = evals.iterdir()
    run_dirs = [p for p in (eval_dir / "runs").iterdir() if p.is_dir()]
    finished = {p.name for p in run_dirs if _files_are_whole(p)}
    listed = CliRunner().invoke(app, ["runs", "list", "--eval", eval_dir.name, "--json"])
    assert listed.exit_code == 0, listed.output
    assert {r["runId"] for r in json.loads(listed.stdout)} == finished
