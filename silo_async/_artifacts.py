"""A run directory on disk: created before the agent starts, completed after grading.

``trace.jsonl`` is opened when the directory is made and appended by the trace recorder while
the run happens; ``result.json``, ``state-diff.json`` and ``run.json`` are written once, after
grading. ``result.json`` and ``state-diff.json`` carry no timestamps and no run ids, so they are
byte-comparable regression oracles.

Each of the three is written beside its name and renamed into place, ``run.json`` last: a
process killed at any moment leaves each file whole or absent (never empty or cut short), and a
directory with a ``run.json`` is a finished run (that is what ``runs list`` lists). No fsync:
this survives a killed process, not a power cut, and costs the disk nothing per rollout.

Both steps use bare ``os`` calls and run on the event loop itself while the disk answers
quickly: handing them to a worker thread costs more than the calls (the thread and the loop
trade the GIL after every system call; measured with 10,000 concurrent rollouts on tmpfs: 7.6-8.3 s
with threads, 5.6 s inline). A step that takes longer than :data:`SLOW_IO_S` (a busy or
network disk: creating a file can then cost milliseconds) sends the steps of the next
:data:`SLOW_SPELL_S` seconds to worker threads of silo_async's own, so a slow disk never holds
the loop for more than one step at a time.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread
from anyio.lowlevel import RunVar

from ._jsonutil import pretty_json, utf8
from ._trace import open_trace_file

if TYPE_CHECKING:
    from ._result import RunResult

__all__ = ["create_run_dir", "write_artifacts", "write_atomic"]

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
    return open_trace_file(os.path.join(run_dir, "trace.jsonl"))


async def create_run_dir(run_dir: Path) -> int:
    """Make ``run_dir`` (and its parents) and open its ``trace.jsonl``; returns the descriptor."""
    return await _writer().run(_create_run_dir, os.fspath(run_dir))


def _write_all(files: list[tuple[str, bytes]]) -> None:
    for path, data in files:
        write_atomic(path, data)


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and one rename (blocking).

    Where the OS allows it (Linux), the data is written to an unnamed file that only gets its
    temporary name once complete: a writer killed at any point leaves no partial file at all,
    not even a partial temporary one.

    Raises:
        OSError: the write failed (the temporary file is removed); it names ``path``, also for
            a failure such as a full disk that the OS reports without a file name.
    """
    head, name = os.path.split(path)
    tmp = os.path.join(head, f".{name}.tmp")
    try:
        if not _stage_unnamed(head or ".", tmp, data):
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                _write_fd(fd, data)
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # never created, or its directory is gone
            os.unlink(tmp)
        raise OSError(exc.errno, exc.strerror, path) from None


def _write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


#: ``O_TMPFILE`` (an unnamed file in a directory) and the ``/proc`` link that names it.
_O_TMPFILE = getattr(os, "O_TMPFILE", 0) if os.path.isdir("/proc/self/fd") else 0
_NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOTSUP)


def _stage_unnamed(head: str, tmp: str, data: bytes) -> bool:
    """Write ``data`` to an unnamed file in ``head`` and name it ``tmp``; False if unsupported."""
    if not _O_TMPFILE:
        return False
    try:
        fd = os.open(head, _O_TMPFILE | os.O_WRONLY, 0o644)
    except OSError as exc:
        if exc.errno in _NO_TMPFILE:  # a file system without unnamed files (NFS, some FUSE)
            return False
        raise
    try:
        _write_fd(fd, data)
        source = f"/proc/self/fd/{fd}"
        try:
            os.link(source, tmp, src_dir_fd=fd, follow_symlinks=True)
        except FileExistsError:  # left by a writer killed between naming and renaming
            os.unlink(tmp)
            os.link(source, tmp, src_dir_fd=fd, follow_symlinks=True)
    finally:
        os.close(fd)
    return True


async def write_artifacts(result: RunResult) -> None:
    """Write the three summary files of ``result`` into ``result.run_dir``.

    The documents are serialised on the event loop (cheap, and the result is immutable), then
    written as :class:`_Writer` decides.
    """
    run_dir = result.run_dir
    if run_dir is None:
        return
    documents = {
        "result.json": result.result_dict(),
        "state-diff.json": result.state_diff,
        "run.json": result.run_dict(),
    }
    files = [(os.path.join(run_dir, n), utf8(pretty_json(doc))) for n, doc in documents.items()]
    await _writer().run(_write_all, files)
