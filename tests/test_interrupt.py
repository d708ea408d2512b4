"""A second Ctrl-C stops faster and never hangs, on both backends (subprocesses, real SIGINT).

Whatever the moment of the second SIGINT, the command exits 130 without a traceback or
"Aborted!", and either leaves a valid summary of what finished or says plainly that it could
not (and where the finished runs are).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner

from silo_async.cli._app import app
from silo_async.cli._interrupt import STOP_WAIT_S

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

ROOT = Path(__file__).resolve().parent.parent

QUICK = """
import anyio

async def agent(ctx):
    await ctx.call_tool("get_current_time", {})
    await anyio.sleep(0.01)
    return "done"
"""

#: An agent that shields itself from cancellation: the first Ctrl-C cannot stop it for 30 s.
#: It says so with a file in ``shielded/`` (a run directory on disk does not yet mean that its
#: agent is past its last checkpoint and inside the shield).
STUBBORN = """
import os

import anyio

async def agent(ctx):
    await ctx.call_tool("get_current_time", {})
    with anyio.CancelScope(shield=True):
        os.makedirs("shielded", exist_ok=True)
        open(os.path.join("shielded", str(id(ctx))), "w").close()
        await anyio.sleep(30)
    return "done"
"""

NOISE = ("Traceback", "KeyboardInterrupt", "Aborted!", "internal_error")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(app, ["init", "crm", "--template", "crm"]).exit_code == 0
    (tmp_path / "quick.py").write_text(QUICK)
    (tmp_path / "stubborn.py").write_text(STUBBORN)
    return tmp_path


def interrupt_twice(
    project: Path, backend: str, args: list[str], watch: Path, gap: float
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Start the command, Ctrl-C once work is on disk, again ``gap`` s later; wait for the end."""
    command = [sys.executable, "-m", "silo_async", "--backend", backend, *args]
    proc = subprocess.Popen(
        command,
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (watch.is_dir() and len(os.listdir(watch)) >= 3):
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    time.sleep(gap)
    proc.send_signal(signal.SIGINT)
    second = time.monotonic()
    out, err = proc.communicate(timeout=60)  # never hangs: a hang fails here
    done = subprocess.CompletedProcess(command, proc.returncode, out, err)
    return done, time.monotonic() - second


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("gap", [0.02, 0.1])
def test_a_second_ctrl_c_on_eval_exits_130_with_a_summary_or_a_plain_word(
    project: Path, backend: str, gap: float
) -> None:
    args = ["eval", "--env", "crm", "--agent", "quick.py", "--runs", "100", "--out", "ev"]
    done, _ = interrupt_twice(
        project, backend, [*args, "--concurrency", "4"], project / "ev" / "runs", gap
    )
    assert done.returncode == 130, done.stderr
    assert not any(word in done.stderr for word in NOISE), done.stderr
    summary = project / "ev" / "summary.json"
    if summary.exists():
        data = json.loads(summary.read_text())
        assert data["cancelled"] is True and data["finished"] < data["planned"]
        assert "summary of those in ev/summary.json" in done.stderr
    else:
        assert "stopped at once, before the summary was written" in done.stderr


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_second_ctrl_c_stops_an_eval_whose_rollouts_will_not_stop(
    project: Path, backend: str
) -> None:
    args = ["eval", "--env", "crm", "--agent", "stubborn.py", "--runs", "20", "--out", "ev"]
    done, took = interrupt_twice(project, backend, args, project / "shielded", 0.05)
    assert done.returncode == 130, done.stderr
    assert took < STOP_WAIT_S + 8, took  # not the agents' 30 s
    assert not any(word in done.stderr for word in NOISE), done.stderr
    assert "Press Ctrl-C again to stop at once." in done.stderr
    assert done.stderr.rstrip().endswith(
        "error: cancelled: stopped at once, before the summary was written; the runs that "
        "finished are in ev/runs."
    )


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_second_ctrl_c_on_run_exits_130_without_a_traceback(project: Path, backend: str) -> None:
    args = ["run", "--env", "crm", "--task", "TASK-001", "--agent", "quick.py", "--runs", "400"]
    done, _ = interrupt_twice(project, backend, args, project / ".silo" / "runs", 0.05)
    assert done.returncode == 130, done.stderr
    assert not any(word in done.stderr for word in NOISE), done.stderr
    assert "error: cancelled: " in done.stderr and ".silo/runs" in done.stderr


@pytest.mark.anyio
async def test_a_ctrl_c_before_the_watcher_first_runs_counts_as_the_first() -> None:
    """The work may run before the watcher task (trio orders new tasks at random)."""
    from silo_async.cli._interrupt import Interrupts

    async def work() -> str:
        os.kill(os.getpid(), signal.SIGINT)  # handled before this task's first checkpoint
        await anyio.sleep(5)
        return "finished"

    previous = signal.getsignal(signal.SIGINT)
    try:
        with Interrupts("Stopping.", lambda: "never said") as interrupts:
            with anyio.fail_after(3):
                result = await interrupts.run(work)  # no KeyboardInterrupt in the loop
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result is None and interrupts.count == 1


#: A command interrupted once, whose work has ended: a Ctrl-C now comes before its own report.
_AFTER_THE_WORK = """
import os, signal, time
from silo_async.cli._interrupt import Interrupts

with Interrupts("Stopping.", lambda: "summary of those in ev/summary.json") as interrupts:
    interrupts.count = 1  # the first Ctrl-C, handled while the work ran
os.kill(os.getpid(), signal.SIGINT)  # the second, before the command reports anything
time.sleep(5)
print("reported")
"""


def test_a_ctrl_c_between_the_work_and_the_report_still_says_what_is_on_disk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _AFTER_THE_WORK],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 130
    assert done.stderr == "summary of those in ev/summary.json\n"
    assert done.stdout == ""
