"""Appending whole lines to a file that a kill may interrupt at any instant (``index.jsonl``).

A line is appended with one ``write`` to a file opened ``O_APPEND``, after the thing it
points at is complete: a process killed before the call leaves no line, after it a whole one.
One subtlety remains. Linux copies a write into the page cache page by page, and a kill
(``SIGKILL``, the OOM killer) landing between two pages ends the write after the first: a
line that straddles a 4 KiB page boundary could be cut in two. So a line that would straddle
one starts on the next page instead: the rest of the current page is first filled with spaces
(written on their own), which JSON readers skip as the whitespace before a value. A kill can
then leave at most a run of spaces at the end of the file, never part of a line. (A line
longer than a page cannot be placed that way; index lines are a few hundred bytes.)

No ``fsync``: the page cache outlives a killed process, and a reader that must survive a power
cut checks what a line points at (an eval that resumes re-checks every run directory).
"""

from __future__ import annotations

import os

__all__ = ["PAGE", "LineAppender"]

#: The unit the kernel copies a write in (and the smallest page of any Linux file system).
PAGE = 4096


class LineAppender:
    """Appends lines to one file, each whole or not at all when the process is killed.

    Blocking, but each line is one small ``write`` to the page cache (microseconds): callers
    append on the event loop. Not thread-safe; one appender per file and process.

    Args:
        path: the file (created on the first append; appended to if it exists).
    """

    __slots__ = ("_fd", "_path", "_size")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        self._fd: int | None = None
        self._size = 0

    @property
    def path(self) -> str:
        """The file appended to."""
        return self._path

    def append(self, line: str) -> None:
        """Append ``line`` (one line of text, without its newline) and its newline.

        Raises:
            OSError: the write failed (naming the file).
        """
        data = (line + "\n").encode("utf-8", "backslashreplace")
        try:
            fd = self._open()
            room = PAGE - self._size % PAGE
            if room < len(data) <= PAGE:
                self._write(fd, b" " * room)
            self._write(fd, data)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, self._path) from None

    def close(self) -> None:
        """Close the file (idempotent); a later append opens it again."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _open(self) -> int:
        if self._fd is None:
            self._fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
        return self._fd

    def _write(self, fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            self._size += written
            view = view[written:]
