"""EvalDir: an eval's directory, read and written through one value (as RunDir owns a run's).

```
<eval dir>/
  eval.json           the plan: everything needed to run the eval again, written first
  summary.json        the versioned summary (docs/eval-summary.md), written at the end, last
  summary.md          the same, for people
  report.html         one self-contained page
  runs/index.jsonl    one line per finished rollout, appended as each one finishes, rewritten
                      in plan order with the summary; each points at runs/<run_id>/
  runs/<run_id>/      a run directory (RunDir)
  .resume/<run_id>/   while an eval resumes: a model agent's interrupted attempt, whose
                      recorded responses its rerun replays (removed once the rerun finishes)
  .lock               while an eval or a resume writes the directory: the writer's pid
```

:class:`EvalDir` reads and writes the plan and the summary as JSON documents (their meaning
is the eval's: ``silo_async.eval``), the index line by line, and holds the directory's lock.

**The index's one rule.** ``index.jsonl`` is appended to while rollouts finish, a whole line per
``write``, and a kill can stop a ``write`` part-way (the kernel copies it page by page). So a
line counts only once its newline is on disk: a last line without one was cut short and is
skipped by every reader, whatever its length. Only the last line can lack it: one process
appends (the directory's lock keeps any other out), and a resume rewrites the index whole
before it appends again. Blank lines are skipped (an earlier silo_async padded lines to page
boundaries with spaces). A whole line that is not a JSON object is damaged — not a kill, a
hand or a disk — and each reader says what that means to it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from .._errors import SiloError
from .._jsonutil import parse_json, pretty_json, utf8
from ._appender import LineAppender
from ._atomic import write_atomic
from ._lock import LOCK, EvalLock, is_lock_file
from ._rundir import RunDir

__all__ = ["PLAN_FORMAT", "PLAN_VERSION", "SUMMARY_FORMAT", "EvalDir", "IndexLine"]

#: ``eval.json``'s ``format`` marker, and the newest version of it this silo_async reads.
PLAN_FORMAT = "silo_async.eval-plan"
PLAN_VERSION = 1
#: ``summary.json``'s ``format`` marker (its version is 1).
SUMMARY_FORMAT = "silo_async.eval"


class IndexLine(NamedTuple):
    """One whole line of ``runs/index.jsonl``.

    Attributes:
        number: its line number in the file (from 1).
        data: the JSON object it holds, or None for a damaged line (not a JSON object).
    """

    number: int
    data: dict[str, Any] | None


class EvalDir:
    """An eval directory: its files, its run directories, its lock.

    A cheap value, like :class:`RunDir`: nothing is read until asked.

    Args:
        path: the eval directory (``.silo/evals/<eval_id>`` or an ``eval --out`` directory).
    """

    __slots__ = ("_lock", "_path", "_runs_fd")

    #: The plan, written before the first rollout starts.
    EVAL = "eval.json"
    #: The summary, for programs.
    SUMMARY = "summary.json"
    #: The summary, for people.
    SUMMARY_MD = "summary.md"
    #: The report page.
    REPORT = "report.html"
    #: The directory holding the run directories.
    RUNS = "runs"
    #: The rollout index, relative to the eval directory (as ``summary.json`` names it).
    INDEX = "runs/index.jsonl"
    #: Interrupted attempts kept for their recorded model responses while the eval resumes.
    RESUME = ".resume"
    #: The lock file of the process writing the directory.
    LOCK = LOCK

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        self._lock: EvalLock | None = None
        self._runs_fd: int | None = None

    def __repr__(self) -> str:
        return f"EvalDir({self._path!r})"

    def __fspath__(self) -> str:
        return self._path

    @property
    def path(self) -> Path:
        """The directory."""
        return Path(self._path)

    def file(self, name: str) -> str:
        """The path of ``name`` (one of :attr:`SUMMARY`, :attr:`INDEX`, ...) inside."""
        return os.path.join(self._path, name)

    # -- run directories ---------------------------------------------------------------------

    @property
    def runs(self) -> str:
        """The directory of the run directories (``runs/``)."""
        return self.file(self.RUNS)

    def run(self, relative: str) -> RunDir:
        """The run directory ``relative`` to the eval directory (an index line's ``runDir``)."""
        return RunDir(self.file(relative))

    def run_dirs(self) -> Iterator[RunDir]:
        """Every directory under ``runs/``, in name (start) order, finished or not.

        Symbolic links are left out: silo_async never makes one, and following one would
        count a run twice or reach outside the eval.
        """
        return _dirs(self.runs)

    @property
    def resume(self) -> str:
        """The directory of interrupted attempts kept for a resume (``.resume/``)."""
        return self.file(self.RESUME)

    def resume_dirs(self) -> Iterator[RunDir]:
        """Every run directory under ``.resume/``, in name order."""
        return _dirs(self.resume)

    # -- the plan ----------------------------------------------------------------------------

    def read_plan(self) -> dict[str, Any]:
        """``eval.json``, once it is an eval plan of a version this silo_async reads.

        Raises:
            SiloError: ``eval_not_found`` (no such directory, no ``eval.json`` in it, or one
                that is not an eval plan) or ``run_format_unsupported`` (a newer version).
        """
        if not os.path.isdir(self._path):
            raise self._not_found("there is no such directory.")
        path = self.file(self.EVAL)
        try:
            with open(path, "rb") as file:
                data = parse_json(file.read())
        except FileNotFoundError:
            raise self._not_found(
                f"it has no {self.EVAL}. An eval directory starts with one (written before the "
                "first rollout), so this is not an eval directory, or its eval was stopped "
                "before it started: run the eval again."
            ) from None
        except (OSError, ValueError) as exc:
            raise self._not_found(f"{path} cannot be read ({exc}).") from None
        if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
            raise self._not_found(f"{path} is not a silo_async eval plan.")
        found = data.get("formatVersion")
        if type(found) is not int or not 1 <= found <= PLAN_VERSION:
            raise SiloError(
                "run_format_unsupported",
                f"{path} has eval format version {found!r}; this silo_async reads version "
                f"{PLAN_VERSION}. Upgrade silo_async (git pull in its clone, or pip install -U "
                "silo_async) to resume it.",
                {"path": path, "found": found, "supported": PLAN_VERSION},
            )
        return data

    def write_plan(self, plan: dict[str, Any]) -> None:
        """Write ``eval.json`` whole and sync it to disk (blocking; once per eval).

        Synced, unlike the rollouts' files: without its plan an eval cannot be resumed, and one
        ``fsync`` per eval costs nothing measurable.
        """
        path = self.file(self.EVAL)
        write_atomic(path, utf8(pretty_json(plan)))
        _sync(path)
        _sync(self._path)

    def _not_found(self, why: str) -> SiloError:
        return SiloError(
            "eval_not_found",
            f'No eval to resume in "{self._path}": {why}',
            {"evalDir": self._path},
        )

    # -- the index ---------------------------------------------------------------------------

    def index(self) -> Iterator[IndexLine]:
        """The whole lines of ``runs/index.jsonl``, one at a time (the rule: the module's).

        Nothing when there is no index (an eval killed before its first rollout finished).
        """
        return _lines(self.file(self.INDEX))

    def index_appender(self) -> LineAppender:
        """An appender of whole lines to ``runs/index.jsonl`` (as rollouts finish)."""
        return LineAppender(self.file(self.INDEX))

    def write_index(self, lines: Iterable[str]) -> None:
        """Replace ``runs/index.jsonl`` with ``lines`` (compact JSON, no newline), whole."""
        os.makedirs(self.runs, exist_ok=True)
        write_atomic(self.file(self.INDEX), utf8("".join(line + "\n" for line in lines)))

    # -- the summary -------------------------------------------------------------------------

    def read_summary(self) -> dict[str, Any]:
        """``summary.json``, once it is a version-1 eval summary.

        Raises:
            FileNotFoundError: there is none (the eval has not finished writing).
            ValueError: it does not parse, or is not a silo_async eval summary of version 1.
        """
        with open(self.file(self.SUMMARY), "rb") as file:
            data = parse_json(file.read())
        if not isinstance(data, dict) or data.get("format") != SUMMARY_FORMAT:
            raise ValueError(f"{self._path}/{self.SUMMARY} is not a silo_async eval summary.")
        if data.get("version") != 1:
            raise ValueError(
                f"{self._path}/{self.SUMMARY} has unsupported version {data.get('version')}."
            )
        return data

    def write_summary(
        self, summary: dict[str, Any], markdown: str, report: str | None, index: Iterable[str]
    ) -> None:
        """Write the index (in plan order), ``summary.md``, ``report.html``, then ``summary.json``.

        ``summary.json`` last: an eval whose ``summary.json`` says it is complete wrote
        everything. Each file whole or absent (blocking: call it off the event loop).
        """
        self.write_index(index)
        write_atomic(self.file(self.SUMMARY_MD), utf8(markdown))
        if report is not None:
            write_atomic(self.file(self.REPORT), utf8(report))
        write_atomic(self.file(self.SUMMARY), utf8(pretty_json(summary)))

    # -- the lock ----------------------------------------------------------------------------

    def lock(self) -> None:
        """Hold the directory's lock from now until :meth:`unlock` (blocking; see ``_lock``).

        Raises:
            SiloError: ``eval_locked``, naming the pid of the process that holds it.
        """
        if self._lock is None:
            self._lock = EvalLock(self._path)
        self._lock.acquire()

    def check_unlocked(self) -> None:
        """Refuse when another process writes the directory (a probe: nothing is written).

        Raises:
            SiloError: ``eval_locked``, naming the pid of the process that holds the lock.
        """
        EvalLock(self._path).check_free()

    def holds_nothing(self) -> bool:
        """The directory holds no file but the lock's (False: it is missing or holds others).

        What an eval killed before it wrote its plan leaves, and what another process taking
        the lock leaves for an instant: an empty directory for a new eval.
        """
        try:
            with os.scandir(self._path) as entries:
                return all(is_lock_file(entry.name) for entry in entries)
        except OSError:
            return False

    def unlock(self) -> None:
        """Let the lock go, and ``runs/`` (idempotent)."""
        self._unpin()
        if self._lock is not None:
            self._lock.release()

    def _unpin(self) -> None:
        fd, self._runs_fd = self._runs_fd, None
        if fd is not None:
            os.close(fd)

    def pin_runs(self) -> None:
        """Hold ``runs/`` open until :meth:`unlock`, for :meth:`intact` (blocking: one open).

        A rollout starting after ``runs/`` was removed makes it again, empty of the runs
        before, and the file system may give it the very inode number the old one had: only
        a directory held open keeps its number, so only that tells the two apart.
        """
        self._unpin()
        with contextlib.suppress(OSError):
            self._runs_fd = os.open(self.runs, os.O_RDONLY | os.O_CLOEXEC)

    def intact(self) -> bool:
        """``eval.json`` and ``runs/`` are there, and the lock this value holds still is.

        False once the directory (or its ``runs/``) was removed while the eval ran: a
        directory made again by a rollout has no plan, and no lock file of ours; a ``runs/``
        made again is not the one :meth:`pin_runs` holds.
        """
        lock = self._lock
        if lock is not None and lock.held and not lock.still_there():
            return False
        if self._runs_fd is not None and not _names(self._runs_fd, self.runs):
            return False
        return os.path.isfile(self.file(self.EVAL)) and os.path.isdir(self.runs)

    def locked_here(self) -> bool:
        """This value holds the lock, and its file is still in the directory.

        False once the directory (or its lock file) was removed while the eval ran.
        """
        return self._lock is not None and self._lock.held and self._lock.still_there()


def _lines(path: str) -> Iterator[IndexLine]:
    try:
        file = open(path, "rb")  # noqa: SIM115 - closed below, when the reader is done
    except FileNotFoundError:
        return
    with file:
        for number, raw in enumerate(file, start=1):
            if not raw.endswith(b"\n"):
                return  # cut short by a kill (only ever the last line): not a line yet
            if raw.isspace():
                continue
            try:
                data = parse_json(raw)
            except ValueError:
                data = None
            yield IndexLine(number, data if isinstance(data, dict) else None)


def _names(fd: int, path: str) -> bool:
    """``path`` names the file or directory open as ``fd``."""
    try:
        named = os.stat(path)
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _sync(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a platform without directory descriptors: the rename is all we have
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _dirs(parent: str) -> Iterator[RunDir]:
    if not os.path.isdir(parent):
        return iter(())
    names = sorted(
        entry.name for entry in os.scandir(parent) if entry.is_dir(follow_symlinks=False)
    )
    return (RunDir(os.path.join(parent, name)) for name in names)
