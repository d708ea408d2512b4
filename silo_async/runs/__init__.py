"""The run-directory format and its one owner, :class:`RunDir` (docs/artifacts.md).

A rollout given a ``runs_dir`` writes ``<runs_dir>/<run_id>/``::

    trace.jsonl       every event as it happens (one JSON object per line, appended)
    result.json       the grading summary: no timestamps, no ids (a byte-exact oracle)
    state-diff.json   what the rollout changed: no timestamps
    run.json          {"formatVersion": 1, "runId", "environment", "taskId", "task",
                       "family", "seed", "split",
                       "verifierId", "agent", "run", "config", timings, counts, outcome}

``run.json`` is written last, so a directory with a readable ``run.json`` is a finished run
(:meth:`RunDir.is_complete`); anything else is torn (the rollout was killed while writing).
``formatVersion`` (:data:`FORMAT_VERSION`) is the version of the whole directory: a reader
refuses a newer major version with ``SiloError("run_format_unsupported")``; a ``run.json``
without it predates versions and reads as version 1.

Reading a run from Python::

    from silo_async.runs import RunDir

    run_dir = RunDir(".silo/runs/run_20261130T012730123_000042_a1b2c3d4e5")
    run = run_dir.read_run()                # version-checked run.json
    result = run_dir.read_result()
    trace = run_dir.events(strict=False)    # skips (and lists) a line cut short by a kill
    print(run["taskId"], result["reward"], len(trace), trace.skipped)

Every reader in silo_async (``runs list|show|export``, replay, eval's recovery, Ray) goes
through :class:`RunDir`; an eval directory (its plan, its index, its summary, its lock) is
read and written through :class:`EvalDir`, beside it.
"""

from __future__ import annotations

from ._atomic import write_atomic
from ._evaldir import EvalDir, IndexLine
from ._events import TraceEvents
from ._format import FORMAT_VERSION
from ._known import KnownEvals
from ._rundir import RunDir

__all__ = [
    "FORMAT_VERSION",
    "EvalDir",
    "IndexLine",
    "KnownEvals",
    "RunDir",
    "TraceEvents",
    "write_atomic",
]
