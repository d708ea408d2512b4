"""Writing a run directory: created before the agent starts, completed after grading.

``trace.jsonl`` is opened when the directory is made and appended by the trace recorder while
the run happens; ``result.json``, ``state-diff.json`` and ``run.json`` are written once, after
grading, each whole or not at all (:func:`write_atomic`), ``run.json`` last: a process killed at
any moment leaves a directory with a ``run.json`` only for a finished run.

Both steps use bare ``os`` calls and run on the event loop itself while the disk answers
quickly: handing them to a worker thread costs more than the calls (the thread and the loop
trade the GIL after every system call; measured with 10,000 concurrent rollouts on tmpfs: 7.6-8.3 s
with threads, 5.6 s inline). A step that takes longer than :data:`SLOW_IO_S` (a busy or
network disk: creating a file can then cost milliseconds) sends the steps of the next
:data:`SLOW_SPELL_S` seconds to worker threads of silo_async's own, so a slow disk never holds
the loop for more than one step at a time.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.to_thread
from anyio.lowlevel import RunVar

from .._jsonutil import pretty_json, utf8
from .._trace import open_trace_file
from ._atomic import write_atomic
from ._format import FORMAT_VERSION, FORMAT_VERSION_KEY, RESULT, RUN, STATE_DIFF, TRACE

if TYPE_CHECKING:
    from .._result import RunResult

__all__ = ["IO_THREADS", "SLOW_IO_S", "SLOW_SPELL_S", "create_run_dir", "run_document", "write_run"]

_T = TypeVar("_T")
_R = TypeVar("_R")

#: Worker threads writing run directories while the disk is slow, per event loop. A few
#: threads keep a slow disk busy; dozens would only take turns at the GIL with the event loop.
#: A dedicated limiter also leaves anyio's default one to the agents.
IO_THREADS = 2
#: A step (one run directory created, or its three files written) slower than this on the loop
#: moves the following steps to the worker threads...
SLOW_IO_S = 0.002
#: ...for this long; then the loop tries again.
SLOW_SPELL_S = 1.0


class _Writer:
    """Runs a run directory's file steps inline while the disk is quick, on threads while slow."""

    __slots__ = ("limiter", "threads_until")

    def __init__(self) -> None:
        self.limiter = anyio.CapacityLimiter(IO_THREADS)
        self.threads_until = 0.0

    async def run(self, step: Callable[[_T], _R], arg: _T) -> _R:
        started = time.monotonic()
        if started < self.threads_until:
            return await anyio.to_thread.run_sync(step, arg, limiter=self.limiter)
        try:
            return step(arg)
        finally:
            ended = time.monotonic()
            if ended - started > SLOW_IO_S:
                self.threads_until = ended + SLOW_SPELL_S


_writers: RunVar[_Writer] = RunVar("silo_async_writer")


def _writer() -> _Writer:
    try:
        return _writers.get()
    except LookupError:
        writer = _Writer()
        _writers.set(writer)
        return writer


def _create_run_dir(run_dir: str) -> int:
    try:
        os.mkdir(run_dir)
    except FileNotFoundError:  # the first run in a new runs_dir
        os.makedirs(run_dir)
    return open_trace_file(os.path.join(run_dir, TRACE))


async def create_run_dir(run_dir: str) -> int:
    """Make ``run_dir`` (and its parents) and open its ``trace.jsonl``; returns the descriptor."""
    return await _writer().run(_create_run_dir, run_dir)


def _write_all(files: list[tuple[str, bytes]]) -> None:
    for path, data in files:
        write_atomic(path, data)


def run_document(result: RunResult) -> dict[str, Any]:
    """``run.json`` of ``result``: the format version first, then the result's own fields."""
    return {FORMAT_VERSION_KEY: FORMAT_VERSION, **result.run_dict()}


async def write_run(run_dir: str, result: RunResult) -> None:
    """Write the three summary files of ``result`` into ``run_dir``, ``run.json`` last.

    The documents are serialised on the event loop (cheap, and the result is immutable), then
    written as :class:`_Writer` decides.
    """
    documents = (
        (RESULT, result.result_dict()),
        (STATE_DIFF, result.state_diff),
        (RUN, run_document(result)),
    )
    files = [(os.path.join(run_dir, name), utf8(pretty_json(doc))) for name, doc in documents]
    await _writer().run(_write_all, files)
