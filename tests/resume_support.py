"""Killing an eval on purpose, deterministically, and comparing what its resume leaves behind.

A kill is a plan, not a timer: :func:`drive` runs ``silo-async ARGS`` in a child process with a
trigger armed, and the child signals itself (``SIGKILL`` or ``SIGINT``) at the moment the
trigger names: the N-th tool call of any rollout, or the N-th file ``os.replace`` puts in place
(the eval's plan, a run directory's ``result.json``/``state-diff.json``/``run.json``, the
index rewritten at a resume, the summary files; ``name`` counts only files of that name, and
``remove`` removes a file or directory there instead of signalling). Children are forked from a
forkserver that has imported silo_async once and loaded the test project's environment once
(so its tool schemas are compiled in every child already): a kill costs a fraction of a
second, not an interpreter start and an environment's first load.

:func:`same_eval` compares two eval directories file by file, timings and ids aside.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import shutil
import signal
from pathlib import Path
from typing import Any

#: Fields that are timings or ids: they differ between any two evals of the same plan.
VARYING = frozenset(
    {
        "startedAt",
        "finishedAt",
        "wallMs",
        "executorStartMs",
        "evalId",
        "durationMs",
        "meanDurationMs",
        "runId",
        "runDir",
        "outDir",
    }
)

_context: Any = None
#: The project whose environment the forkserver loads once, for its children to inherit.
WARM = "SILO_RESUME_TEST_PROJECT"


def _warm() -> None:
    project = os.environ.get(WARM)
    if project is None:
        return
    from silo_async.project import load_environment

    with contextlib.suppress(Exception):  # only a head start: a child loads it anyway
        load_environment("crm", project)


def _forkserver(project: Path) -> Any:
    global _context
    if _context is None:
        os.environ[WARM] = str(project)  # the forkserver starts with this environment
        methods = multiprocessing.get_all_start_methods()
        if "forkserver" in methods:
            _context = multiprocessing.get_context("forkserver")
            multiprocessing.set_forkserver_preload(
                ["silo_async.cli._app", "silo_async.eval", "openai", "tests.resume_support"]
            )
        else:  # pragma: no cover - not Linux
            _context = multiprocessing.get_context("spawn")
    return _context


def _arm(trigger: dict[str, Any] | None) -> None:
    """Make this process signal itself when ``trigger`` happens."""
    if not trigger:
        return
    sig = signal.SIGKILL if trigger.get("signal", "KILL") == "KILL" else signal.SIGINT
    count = {"n": 0}
    target = int(trigger["n"])

    def hit() -> bool:
        count["n"] += 1
        return count["n"] == target

    if trigger["at"] == "replace":
        real = os.replace
        after = trigger.get("after", False)
        name = trigger.get("name")  # only files of this name count

        def act() -> None:
            if "remove" in trigger:  # a hand removing a file or directory, at that very moment
                if os.path.isdir(trigger["remove"]):
                    shutil.rmtree(trigger["remove"], ignore_errors=True)
                else:
                    os.unlink(trigger["remove"])
            else:
                os.kill(os.getpid(), sig)

        def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            fire = (name is None or os.path.basename(os.fspath(dst)) == name) and hit()
            if fire and not after:
                act()
            real(src, dst, *args, **kwargs)
            if fire and after:
                act()

        os.replace = replace
    elif trigger["at"] == "call":
        from silo_async._context import AgentContext

        real_call = AgentContext.call_tool

        async def call_tool(self: AgentContext, name: str, input: Any = None) -> Any:
            if hit():
                os.kill(os.getpid(), sig)
            return await real_call(self, name, input)

        AgentContext.call_tool = call_tool  # type: ignore[method-assign]
    else:  # pragma: no cover - a test's mistake
        raise ValueError(f"unknown trigger {trigger!r}")


def _child(project: str, args: list[str], trigger: dict[str, Any] | None, log: str) -> None:
    os.chdir(project)
    _arm(trigger)
    from silo_async.cli._app import app

    with open(log, "a") as sink:  # what the command says, for a failing test to show
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
    app.main(args, prog_name="silo-async", standalone_mode=True)


def start(project: Path, args: list[str], trigger: dict[str, Any] | None = None) -> Any:
    """Start ``silo-async ARGS`` in ``project`` in a child process (see the module docstring).

    Its output goes to ``project/child.log``.
    """
    log = str(project / "child.log")
    process = _forkserver(project).Process(target=_child, args=(str(project), args, trigger, log))
    process.start()
    return process


def drive(
    project: Path, args: list[str], trigger: dict[str, Any] | None = None, timeout: float = 60
) -> int:
    """Run ``silo-async ARGS`` to its end (or its trigger); the exit code (-9: killed)."""
    process = start(project, args, trigger)
    process.join(timeout)
    if process.exitcode is None:
        process.kill()
        process.join()
        raise AssertionError(f"silo-async {' '.join(args)} did not finish in {timeout} s")
    return int(process.exitcode)


def scrub(value: Any) -> Any:
    """``value`` without its timing and id fields (:data:`VARYING`), at any depth."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def _index(eval_dir: Path) -> list[dict[str, Any]]:
    text = (eval_dir / "runs" / "index.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _executor_free(summary: dict[str, Any]) -> dict[str, Any]:
    config = {k: v for k, v in summary["config"].items() if k not in EXECUTOR_KEYS}
    return {**summary, "config": config, "infraRetries": 0}


#: What ``summary.json`` says of the executor (a resumed eval may run on another).
EXECUTOR_KEYS = frozenset({"executor", "workers", "workerConcurrency"})


def same_eval(expected: Path, actual: Path, *, any_executor: bool = False) -> None:
    """Assert two evals of one plan wrote the same files, timings and ids aside.

    ``any_executor``: the evals may have run on different executors (and Ray may have run
    some rollouts again after a worker died).
    """
    want = json.loads((expected / "summary.json").read_text())
    got = json.loads((actual / "summary.json").read_text())
    if any_executor:
        want, got = _executor_free(want), _executor_free(got)
    assert scrub(got) == scrub(want)
    index, want_index = _index(actual), _index(expected)
    assert [scrub(r) for r in index] == [scrub(r) for r in want_index]
    slots = [(r["task"], r["agent"], r["run"], r.get("baseline", False)) for r in index]
    planned = got["planned"] * (2 if got["config"].get("baseline") else 1)  # and its baseline
    assert len(set(slots)) == len(slots) == planned  # each rollout recorded once
    for line, want_line in zip(index, want_index, strict=True):
        for name in ("result.json", "state-diff.json"):
            mine = (actual / line["runDir"] / name).read_bytes()
            assert mine == (expected / want_line["runDir"] / name).read_bytes(), (line, name)
    on_disk = {p.name for p in (actual / "runs").iterdir() if p.is_dir()}
    assert on_disk == {r["runId"] for r in index}  # nothing torn or doubled is left behind
    assert not (actual / ".resume").exists()


def interrupted(eval_dir: Path) -> int:
    """Rollouts a kill left interrupted: torn or cut-short directories, parked recordings."""
    count = 0
    for parent in (eval_dir / "runs", eval_dir / ".resume"):
        if not parent.is_dir():
            continue
        for run_dir in parent.iterdir():
            if not run_dir.is_dir():
                continue
            run = run_dir / "run.json"
            whole = run.is_file() and parent.name == "runs"
            cut = whole and json.loads(run.read_text()).get("terminationReason") == "cancelled"
            count += not whole or cut
    return count


_warm()  # in the forkserver (see WARM); nothing in a process that has not set it
