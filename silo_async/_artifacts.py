"""A run directory on disk: created before the agent starts, completed after grading.

``trace.jsonl`` is opened when the directory is made and appended by the trace recorder while
the run happens; ``result.json``, ``state-diff.json`` and ``run.json`` are written once, after
grading. ``result.json`` and ``state-diff.json`` carry no timestamps and no run ids, so they are
byte-comparable regression oracles.

Both steps run in a worker thread (creating files can cost a millisecond on a busy disk) and use
bare ``os`` calls: every bytecode a worker runs holds the GIL, which the event loop needs back
after each trace line it writes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread
from anyio.lowlevel import RunVar

from ._jsonutil import pretty_json
from ._trace import open_trace_file

if TYPE_CHECKING:
    from ._result import RunResult

__all__ = ["create_run_dir", "write_artifacts"]

#: Worker threads writing run directories, per event loop. A few threads keep a slow disk busy;
#: dozens would only take turns at the GIL with the event loop, which needs it back after every
#: trace line it writes (measured on tmpfs: about 25% more rollouts per second than with anyio's
#: default 40 threads). A dedicated limiter also leaves the default one to the agents.
IO_THREADS = 2
_io_limiter: RunVar[anyio.CapacityLimiter] = RunVar("silo_async_io_limiter")


def _limiter() -> anyio.CapacityLimiter:
    try:
        return _io_limiter.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(IO_THREADS)
        _io_limiter.set(limiter)
        return limiter


def _create_run_dir(run_dir: str) -> int:
    try:
        os.mkdir(run_dir)
    except FileNotFoundError:  # the first run in a new runs_dir
        os.makedirs(run_dir)
    return open_trace_file(os.path.join(run_dir, "trace.jsonl"))


async def create_run_dir(run_dir: Path) -> int:
    """Make ``run_dir`` (and its parents) and open its ``trace.jsonl``; returns the descriptor."""
    return await anyio.to_thread.run_sync(_create_run_dir, os.fspath(run_dir), limiter=_limiter())


def _write_all(files: list[tuple[str, bytes]]) -> None:
    for path, data in files:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


async def write_artifacts(result: RunResult) -> None:
    """Write the three summary files of ``result`` into ``result.run_dir``.

    The documents are serialised on the event loop (cheap, and the result is immutable), then
    written by a worker thread.
    """
    run_dir = result.run_dir
    if run_dir is None:
        return
    documents = {
        "result.json": result.result_dict(),
        "state-diff.json": result.state_diff,
        "run.json": result.run_dict(),
    }
    files = [
        (os.path.join(run_dir, name), pretty_json(doc).encode()) for name, doc in documents.items()
    ]
    await anyio.to_thread.run_sync(_write_all, files, limiter=_limiter())
