"""One writer per eval directory: an OS lock that a killed process gives up.

An eval, or a resume, holds ``<eval dir>/.lock`` while it writes the directory. The lock is
``flock``'s: the kernel releases it when the holder's descriptor closes, so also when the
holder is killed (``SIGKILL``, the OOM killer) — a stale file is never a stale lock. The file
holds the holder's pid, for the refusal to name (``flock`` itself cannot say who holds it).

A name that must carry a pid from its first byte, and that several processes create, take and
remove, needs care in three places:

* **created whole**: the pid is written to a private file, which is locked, then linked to
  ``.lock`` (``link`` fails when the name exists), so ``.lock`` never exists empty or free;
* **taken, not just opened**: ``flock(LOCK_EX | LOCK_NB)`` decides; opening it proves nothing;
* **removed while held**: the holder unlinks ``.lock`` before it lets go, and a taker checks,
  once it holds an inode, that the name still points at that inode (else someone removed it
  meanwhile and may be creating another): it starts again.

A stale ``.lock`` (its holder was killed) is taken over in place: the new holder writes its pid
over the old one, padded to a fixed width so that one ``pwrite`` replaces it whole.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat

from .._errors import SiloError

__all__ = ["LOCK", "EvalLock", "is_lock_file"]

#: The lock file's name in the eval directory.
LOCK = ".lock"
#: The pid's width in the file: every pid of any system fits, so one write replaces another.
_WIDTH = 20
#: How often a taker looks again when the file went away between two of its steps.
_TRIES = 1000
#: Errors of a directory nobody can write: no lock is needed where nothing can be written.
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def is_lock_file(name: str) -> bool:
    """``name`` is the lock file, or a taker's private file on its way to becoming it.

    A taker's ``.lock.<pid>`` lives a few system calls (longer when its taker was killed in
    between): a directory holding only these holds nothing of an eval.
    """
    return name == LOCK or (name.startswith(f"{LOCK}.") and name[len(LOCK) + 1 :].isdigit())


class EvalLock:
    """The lock of one eval directory, held by this process from :meth:`acquire` to :meth:`release`.

    Args:
        directory: the eval directory (it must exist).
    """

    __slots__ = ("_directory", "_fd", "_path")

    def __init__(self, directory: str) -> None:
        self._directory = directory
        self._path = os.path.join(directory, LOCK)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """This process holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock, or refuse at once (blocking: a few system calls).

        A directory this process cannot write (read-only, not ours) is not locked: nothing
        can be written there, so nothing needs keeping apart, and reading it (a resume finding
        the eval finished) goes on.

        Raises:
            SiloError: ``eval_locked`` naming the holder's pid: another process writes the
                directory (an eval, or a resume, still running); ``not_writable``: ``.lock``
                is not a file silo_async made (a symbolic link, never followed: the pid
                would be written wherever it points; a directory; a fifo).
            OSError: the directory is missing.
        """
        for _ in range(_TRIES):
            if self._fd is not None:
                return
            try:
                fd = self._open()
            except OSError as exc:
                if exc.errno in _READ_ONLY:
                    return
                if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                    raise self._not_a_lock() from None
                raise
            if fd is None:
                continue  # the file went away between two steps: look again
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # a fifo, a device: not ours
                os.close(fd)
                raise self._not_a_lock()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _read_pid(fd)
                os.close(fd)
                raise _locked(self._directory, pid) from None
            if not _same_file(fd, self._path):  # removed (and perhaps made again) meanwhile
                os.close(fd)
                continue
            os.pwrite(fd, _pid_bytes(), 0)  # a stale lock taken over: our pid over the old one
            self._fd = fd
        if self._fd is None:  # takers racing without end: never seen, but never spin forever
            raise _locked(self._directory, None)

    def _not_a_lock(self) -> SiloError:
        return SiloError(
            "not_writable",
            f'"{self._path}" is not a lock file of silo_async\'s (a symbolic link, a directory '
            "or another special file), and an eval or a resume locks the directory there: "
            "remove it, then run again.",
            {"path": self._path},
        )

    def release(self) -> None:
        """Let the lock go and remove its file (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if _same_file(fd, self._path):
                with contextlib.suppress(OSError):  # the directory went: nothing to remove
                    os.unlink(self._path)
        finally:
            os.close(fd)  # the lock goes with the last descriptor

    def still_there(self) -> bool:
        """The lock file is still where it was taken (False: the directory was removed)."""
        return self._fd is None or _same_file(self._fd, self._path)

    def check_free(self) -> None:
        """Refuse when another process holds the lock; change nothing (blocking, read-only).

        Raises:
            SiloError: ``eval_locked``, naming the holder's pid.
        """
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return  # no lock file (or not one of ours): nobody writes the directory
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # a probe: taken and let go at once
        except BlockingIOError:
            raise _locked(self._directory, _read_pid(fd)) from None
        finally:
            os.close(fd)

    def _open(self) -> int | None:
        """A descriptor of ``.lock``, made whole with our pid if there was none (None: retry)."""
        try:  # never through a link: the pid would be written wherever it points
            return os.open(self._path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            pass
        private = os.path.join(self._directory, f"{LOCK}.{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):  # left by an earlier process of our pid
            os.unlink(private)
        fd = os.open(private, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, _pid_bytes())
            fcntl.flock(fd, fcntl.LOCK_EX)  # born locked: nobody takes it before we do
            try:
                os.link(private, self._path)
            except FileExistsError:
                os.close(fd)
                return None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(private)
        return fd


def _pid_bytes() -> bytes:
    return f"{os.getpid():>{_WIDTH}}\n".encode()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, _WIDTH + 1, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _same_file(fd: int, path: str) -> bool:
    try:
        named = os.lstat(path)  # the name itself: a link to our file is not our file
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _locked(directory: str, pid: int | None) -> SiloError:
    holder = f"process {pid}" if pid is not None else "another process"
    return SiloError(
        "eval_locked",
        f'Eval directory "{directory}" is being written by {holder} (an eval or a resume of '
        "it, still running): one process at a time writes an eval. Wait for it to finish (or "
        "stop it), then resume the eval; or give another --out.",
        {"evalDir": directory, "pid": pid},
    )
