"""One writer per eval directory: an OS lock a killed process gives up.

Real processes (``silo-async eval`` children, forked from the resume tests' forkserver) hold
the lock while an agent of theirs waits for a file named ``go``: a second process meets it
at a known moment, never by timing. SIGKILL shows that a killed holder leaves no lock behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async import SiloError
from silo_async.runs import EvalDir
from silo_async.runs._lock import EvalLock

from .cli_support import cli
from .resume_support import drive, start
from .test_eval_support import good_agent, make_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks and signals")

#: An agent that says it started (a file named after its process) and waits for ``go``.
WAITING = """
import os

import anyio


async def agent(ctx):
    with open(f"started-{os.getpid()}", "a") as started:
        started.write("+")  # one per rollout
    while not os.path.exists("go"):
        await anyio.sleep(0.005)
    return None
"""
PLAN = ["eval", "--env", "crm", "--task", "TASK-001", "--runs", "2", "--agent", "waiting.py"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    (tmp_path / "waiting.py").write_text(WAITING)
    yield tmp_path
    (tmp_path / "go").touch()  # no child waits forever, whatever a failed test left


def _wait_for(what: Any, project: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        log = project / "child.log"
        assert time.monotonic() < deadline, log.read_text() if log.exists() else "no log"
        time.sleep(0.005)


def _started(project: Path, pid: int, rollouts: int = 1) -> bool:
    """``rollouts`` rollouts of process ``pid`` started (their agents wait for ``go``)."""
    path = project / f"started-{pid}"
    return path.exists() and len(path.read_text()) >= rollouts


def _exit_code(process: Any, project: Path) -> int:
    process.join(60)
    assert process.exitcode is not None, (project / "child.log").read_text()
    return int(process.exitcode)


def _files(directory: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
    }


def _whole(eval_dir: Path, planned: int) -> None:
    """Every planned rollout recorded once; no directory beside them."""
    index = [
        json.loads(line) for line in (eval_dir / "runs" / "index.jsonl").read_text().splitlines()
    ]
    assert len(index) == len({(r["task"], r["run"]) for r in index}) == planned
    on_disk = {p.name for p in (eval_dir / "runs").iterdir() if p.is_dir()}
    assert on_disk == {r["runId"] for r in index}
    assert not (eval_dir / EvalDir.LOCK).exists()


def test_a_running_eval_refuses_a_resume_and_a_second_eval_and_nothing_is_written(
    project: Path,
) -> None:
    running = start(project, [*PLAN, "--out", "ev"])
    _wait_for(lambda: _started(project, running.pid, 2), project)  # nothing more to write
    before = _files(project / "ev")
    for args in (
        ["eval", "--resume", "ev"],
        ["eval", "--env", "crm", "--task", "TASK-002", "--agent", "waiting.py", "--out", "ev"],
    ):
        refused = cli(*args)
        assert refused.exit_code == 1, refused.output
        assert refused.stderr.startswith("error: eval_locked: "), refused.stderr
        assert f"by process {running.pid} " in refused.stderr
        assert len(refused.stderr.splitlines()) == 1
    assert _files(project / "ev") == before
    (project / "go").touch()
    assert _exit_code(running, project) == 0
    _whole(project / "ev", 2)
    done = cli("eval", "--resume", "ev")
    assert done.exit_code == 0 and done.stdout.startswith("Nothing to resume")


def test_a_killed_holder_leaves_a_lock_file_but_no_lock(project: Path) -> None:
    killed = start(project, [*PLAN, "--out", "ev"])
    _wait_for(lambda: _started(project, killed.pid), project)
    os.kill(killed.pid, signal.SIGKILL)
    assert _exit_code(killed, project) == -signal.SIGKILL
    lock = project / "ev" / EvalDir.LOCK
    assert int(lock.read_text()) == killed.pid  # stale: its holder is dead
    (project / "go").touch()
    resumed = cli("eval", "--resume", "ev", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] == {"kept": 0, "rerun": 2}
    _whole(project / "ev", 2)


def test_two_resumes_at_once_one_waits_its_turn(project: Path) -> None:
    killed = start(project, [*PLAN, "--out", "ev"])
    _wait_for(lambda: _started(project, killed.pid), project)
    os.kill(killed.pid, signal.SIGKILL)
    _exit_code(killed, project)
    first = start(project, ["eval", "--resume", "ev"])
    _wait_for(lambda: _started(project, first.pid), project)
    second = start(project, ["eval", "--resume", "ev"])
    assert _exit_code(second, project) == 1
    log = (project / "child.log").read_text()
    assert (
        f'error: eval_locked: Eval directory "ev" is being written by process {first.pid} ' in log
    )
    (project / "go").touch()
    assert _exit_code(first, project) == 0
    _whole(project / "ev", 2)


def test_two_evals_into_one_new_out_one_runs_one_is_refused(project: Path) -> None:
    both = [start(project, [*PLAN, "--out", "ev"]) for _ in range(2)]
    _wait_for(lambda: any(_started(project, p.pid) for p in both), project)
    winner = next(p for p in both if _started(project, p.pid))
    loser = next(p for p in both if p is not winner)
    assert _exit_code(loser, project) == 1
    assert "error: eval_locked: " in (project / "child.log").read_text()
    assert not _started(project, loser.pid)
    (project / "go").touch()
    assert _exit_code(winner, project) == 0
    _whole(project / "ev", 2)


def test_the_lock_of_a_directory_nobody_can_write_is_not_needed(tmp_path: Path) -> None:
    lock = EvalLock(str(tmp_path))
    lock.acquire()
    assert lock.held and lock.still_there()
    other = EvalLock(str(tmp_path))
    with pytest.raises(SiloError) as refused:
        other.acquire()  # another open of the same file: flock keeps them apart in one process
    assert refused.value.code == "eval_locked" and refused.value.details["pid"] == os.getpid()
    with pytest.raises(SiloError):
        other.check_free()
    lock.release()
    assert not (tmp_path / EvalDir.LOCK).exists()
    assert [lock.held, other.held] == [False, False]
    other.check_free()
    tmp_path.chmod(0o500)
    try:
        if os.access(tmp_path, os.W_OK):
            pytest.skip("running as root: a read-only directory is writable")
        readonly = EvalLock(str(tmp_path))
        readonly.acquire()  # nothing can be written here: no lock, and no refusal
        assert not readonly.held
    finally:
        tmp_path.chmod(0o700)


@pytest.mark.parametrize("removed", ["ev", "ev/runs", "ev/runs/"])
def test_an_eval_whose_directory_is_removed_stops_with_a_coded_line(
    project: Path, removed: str
) -> None:
    running = start(project, [*PLAN, "--out", "ev"])
    _wait_for(lambda: _started(project, running.pid, 2), project)
    shutil.rmtree(project / removed)
    if removed.endswith("/"):  # made again, as a rollout starting after the removal makes it
        (project / removed).mkdir()
    removed = removed.rstrip("/")
    (project / "go").touch()
    assert _exit_code(running, project) == 1
    log = (project / "child.log").read_text()
    [line] = [line for line in log.splitlines() if line.startswith("error: ")]
    assert line.startswith('error: eval_not_found: The eval directory "ev" lost '), log
    assert "while the eval ran" in line and "internal_error" not in log
    if removed == "ev":  # nothing to resume: no plan was left
        assert "run the eval again" in line and not (project / "ev" / "eval.json").exists()
        return
    assert "resume it (silo-async eval --resume ev, or silo.resume)" in line
    (project / "go").touch()
    resumed = cli("eval", "--resume", "ev", "--json")
    assert resumed.exit_code == 0, resumed.output
    _whole(project / "ev", 2)


def test_a_stale_lock_alone_is_an_empty_directory(project: Path) -> None:
    # What an eval killed between taking the lock and writing its plan leaves behind; and a
    # taker's own file, which lives beside the lock while another process takes it.
    (project / "ev").mkdir()
    (project / "ev" / EvalDir.LOCK).write_text(f"{2**22 + 7:>20}\n")
    (project / "ev" / f"{EvalDir.LOCK}.{2**22 + 9}").write_text(f"{2**22 + 9:>20}\n")
    (project / "go").touch()
    ran = cli(*PLAN, "--out", "ev")
    assert ran.exit_code == 0, ran.output
    _whole(project / "ev", 2)
    taken = cli(*PLAN, "--out", "ev")
    assert taken.exit_code == 1 and taken.stderr.startswith("error: out_dir_not_empty: ")


@pytest.mark.anyio
async def test_a_takers_file_beside_the_lock_is_nothing_to_evaluate(tmp_path: Path) -> None:
    # Two evals into one new --out: the one holding the lock may look while the other's file,
    # on its way to becoming the lock, is there; that is no eval's file, so it runs.
    out = tmp_path / "ev"
    out.mkdir()
    (out / f"{EvalDir.LOCK}.{2**22 + 9}").write_text(f"{2**22 + 9:>20}\n")
    summary = await silo.evaluate(make_env(), None, {"good": good_agent}, out_dir=out)
    assert summary.complete and (out / "eval.json").is_file()
    (out / "stray.txt").write_text("an earlier eval's")
    with pytest.raises(FileExistsError):
        await silo.evaluate(make_env(), None, {"good": good_agent}, out_dir=tmp_path / "ev")


def test_runs_removed_while_the_summary_is_written_is_said_not_passed_over(project: Path) -> None:
    (project / "go").touch()
    removal = {"at": "replace", "n": 1, "name": "summary.md", "remove": "ev/runs"}
    assert drive(project, [*PLAN, "--out", "ev"], removal) == 1  # it said the eval was complete
    log = (project / "child.log").read_text()
    [line] = [line for line in log.splitlines() if line.startswith("error: ")]
    assert line.startswith('error: eval_not_found: The eval directory "ev" lost '), log
    assert "resume it (silo-async eval --resume ev, or silo.resume)" in line
    resumed = cli("eval", "--resume", "ev", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] == {"kept": 0, "rerun": 2}
    _whole(project / "ev", 2)


def test_a_run_directory_removed_under_its_rollout_stops_with_a_coded_line(project: Path) -> None:
    running = start(project, [*PLAN, "--out", "ev"])
    _wait_for(lambda: _started(project, running.pid, 2), project)
    [first, _] = sorted(p for p in (project / "ev" / "runs").iterdir() if p.is_dir())
    shutil.rmtree(first)  # the rest of the directory left as it was
    (project / "go").touch()
    assert _exit_code(running, project) == 1
    log = (project / "child.log").read_text()
    [line] = [line for line in log.splitlines() if line.startswith("error: ")]
    assert line.startswith(
        f'error: eval_not_found: The eval directory "ev" lost runs/{first.name}/ (a run '
        "directory, removed while its rollout ran) while the eval ran"
    ), log  # it was internal_error: FileNotFoundError
    assert "resume it (silo-async eval --resume ev, or silo.resume)" in line
    resumed = cli("eval", "--resume", "ev", "--json")
    assert resumed.exit_code == 0, resumed.output
    _whole(project / "ev", 2)


@pytest.mark.anyio
async def test_in_python_a_resume_of_a_running_eval_is_eval_locked(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    started, go = anyio.Event(), anyio.Event()

    async def waiting(ctx: silo.AgentContext) -> None:
        started.set()
        await go.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: silo.evaluate(make_env(), ["T-1"], {"w": waiting}, out_dir=out))
        await started.wait()
        before = _files(out)
        for attempt in (
            lambda: silo.resume(out, env=make_env(), agents={"w": waiting}),
            lambda: silo.evaluate(make_env(), ["T-1"], {"w": waiting}, resume=out),
        ):
            with pytest.raises(SiloError) as refused:
                await attempt()
            assert refused.value.code == "eval_locked"
            assert refused.value.details["pid"] == os.getpid()  # this process: another eval
        assert _files(out) == before  # nothing written
        go.set()
    _whole(out, 1)


@pytest.mark.parametrize("kind", ["dangling link", "link to a file", "directory", "fifo"])
def test_a_lock_file_silo_did_not_make_is_refused_never_followed(tmp_path: Path, kind: str) -> None:
    lock = tmp_path / EvalDir.LOCK
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not to be written\n")
    if kind == "dangling link":
        lock.symlink_to(tmp_path / "nowhere" / "x")  # a resume spun on it forever
    elif kind == "link to a file":
        lock.symlink_to(elsewhere)  # the pid was written into the file it points at
    elif kind == "directory":
        lock.mkdir()
    else:
        os.mkfifo(lock)
    with pytest.raises(SiloError) as refused:
        EvalLock(str(tmp_path)).acquire()
    assert refused.value.code == "not_writable"
    assert refused.value.message.startswith(f'"{lock}" is not a lock file of silo_async')
    assert elsewhere.read_text() == "not to be written\n"
    EvalLock(str(tmp_path)).check_free()  # a probe neither refuses nor waits on it
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "elsewhere.txt"]


def test_an_index_removed_under_the_eval_is_named_alone(project: Path) -> None:
    (project / "go").touch()
    # The second rollout's run.json: the first one's index line is written by then.
    removal = {"at": "replace", "n": 2, "name": "run.json", "remove": "ev/runs/index.jsonl"}
    one_at_a_time = [*PLAN, "--concurrency", "1", "--out", "ev"]
    assert drive(project, one_at_a_time, removal) == 1
    log = (project / "child.log").read_text()
    [line] = [line for line in log.splitlines() if line.startswith("error: ")]
    assert line.startswith(
        'error: eval_not_found: The eval directory "ev" lost runs/index.jsonl while the eval '
        "ran, so the eval stopped; resume it"
    ), log  # it said "(and the runs/ holding it)", which was there all along
    resumed = cli("eval", "--resume", "ev", "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] == {"kept": 2, "rerun": 0}
    _whole(project / "ev", 2)
