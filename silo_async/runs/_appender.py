"""Appending whole lines to a file that a kill may interrupt at any instant (``index.jsonl``).

A line is appended with one ``write`` to a file opened ``O_APPEND``, after the thing it points
at is complete: a process killed before the call leaves no line. A kill *during* the call can
leave part of it: Linux copies a write into the page cache page by page, and a kill landing
between two pages ends the write after the first. So a line counts only once its newline is on
disk, and every reader skips a last line without one (the rule is ``EvalDir``'s, in
:mod:`silo_async.runs._evaldir`). That holds for a line of any length. (An earlier version
padded short lines to start on a fresh 4 KiB page instead, which could not place a line longer
than a page; the newline rule needs no padding.) Only the last line can be cut: one process
appends, in order, and a resume rewrites the file whole before it appends again.

Each append also checks that the file is still there (one ``fstat``): a directory removed while
the eval runs would otherwise swallow every later line into a file nobody can open.

No ``fsync``: the page cache outlives a killed process, and a reader that must survive a power
cut checks what a line points at (an eval that resumes re-checks every run directory).
"""

from __future__ import annotations

import errno
import os

__all__ = ["LineAppender"]


class LineAppender:
    """Appends lines to one file, each whole or not at all when the process is killed.

    Blocking, but each line is one small ``write`` to the page cache (microseconds): callers
    append on the event loop. Not thread-safe; one appender per file and process.

    Args:
        path: the file (created on the first append; appended to if it exists).
    """

    __slots__ = ("_fd", "_path")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        self._fd: int | None = None

    @property
    def path(self) -> str:
        """The file appended to."""
        return self._path

    def append(self, line: str) -> None:
        """Append ``line`` (one line of text, without its newline) and its newline.

        Raises:
            FileNotFoundError: the file was removed since it was opened (nothing is written).
            OSError: the write failed (naming the file).
        """
        data = (line + "\n").encode("utf-8", "backslashreplace")
        try:
            fd = self._open()
            if os.fstat(fd).st_nlink == 0:
                raise FileNotFoundError(errno.ENOENT, "removed while it was appended to")
            self._write(fd, data)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, self._path) from None

    def removed(self) -> bool:
        """The file was removed (or its directory) since this appender opened it."""
        return self._fd is not None and os.fstat(self._fd).st_nlink == 0

    def close(self) -> None:
        """Close the file (idempotent); a later append opens it again."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _open(self) -> int:
        if self._fd is None:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            self._fd = os.open(self._path, flags, 0o644)
        return self._fd

    def _write(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
