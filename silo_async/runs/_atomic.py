"""Whole files or none: every file of a run or eval directory is written through here."""

from __future__ import annotations

import contextlib
import errno
import os

__all__ = ["write_atomic"]


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and one rename (blocking).

    Where the OS allows it (Linux), the data is written to an unnamed file that only gets its
    temporary name once complete: a writer killed at any point leaves no partial file at all,
    not even a partial temporary one. No fsync: this survives a killed process, not a power cut.

    Args:
        path: the file to (re)place.
        data: its whole content.

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
