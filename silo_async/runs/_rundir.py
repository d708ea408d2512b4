"""RunDir: one rollout's directory on disk, written and read through one value."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import SiloError
from .._jsonutil import parse_json
from ._events import TraceEvents, read_events
from ._format import RESULT, RUN, STATE_DIFF, TRACE, check_format_version
from ._writer import create_run_dir, write_run

if TYPE_CHECKING:
    from .._result import RunResult

__all__ = ["RunDir"]


class RunDir:
    """One rollout's directory: its four files (the format: :mod:`silo_async.runs`).

    A cheap value (it holds the path as a string; nothing is read until asked): make one per
    directory, read what you need. Readers raise ``FileNotFoundError`` for a file that is not
    there (a rollout killed before it was written), and ``SiloError`` for one that is there but
    cannot be read: ``run_invalid`` (does not parse, not a JSON object) or
    ``run_format_unsupported`` (``run.json`` of a newer format). :meth:`read_run` checks the
    version; read it first when the other files' fields matter.

    Args:
        path: the directory (``<runs_dir>/<run_id>``).
    """

    __slots__ = ("_path",)

    #: File names, defined once (see :mod:`silo_async.runs`).
    TRACE = TRACE
    RESULT = RESULT
    STATE_DIFF = STATE_DIFF
    RUN = RUN

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # A str, not a Path: pathlib interns every part it parses, which would grow the
        # interpreter's intern table with the run ids of a 100,000-rollout eval.
        self._path = os.fspath(path)

    def __repr__(self) -> str:
        return f"RunDir({self._path!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunDir) and other._path == self._path

    def __hash__(self) -> int:
        return hash(self._path)

    def __fspath__(self) -> str:
        return self._path

    @property
    def path(self) -> Path:
        """The directory."""
        return Path(self._path)

    @property
    def name(self) -> str:
        """The directory's name: the run id, for a directory silo_async made."""
        return os.path.basename(self._path.rstrip(os.sep))

    def file(self, name: str) -> str:
        """The path of the file ``name`` (one of :attr:`TRACE`, :attr:`RESULT`, ...) inside."""
        return os.path.join(self._path, name)

    # -- what is there -----------------------------------------------------------------------

    def exists(self) -> bool:
        """The directory exists."""
        return os.path.isdir(self._path)

    def is_finished(self) -> bool:
        """``run.json`` is there: the rollout finished writing (cheap: one ``stat``)."""
        return os.path.isfile(self.file(RUN))

    def has_trace(self) -> bool:
        """``trace.jsonl`` is there: the rollout started (finished or not)."""
        return os.path.isfile(self.file(TRACE))

    def is_complete(self) -> bool:
        """The rollout finished writing: a readable ``run.json`` beside its other files.

        Readable means a JSON object of a format version this silo_async reads; the other files
        are ``result.json`` and ``state-diff.json``. ``False`` is a torn directory: the
        rollout was killed before it finished writing (or its files were damaged since), which
        an eval that resumes removes and runs again.

        Raises:
            SiloError: ``run_format_unsupported``: whole or not, the run was written by a newer
                silo_async, which is not a reason to call it torn.
        """
        try:
            self.read_run()
        except OSError:
            return False
        except SiloError as exc:
            if exc.code == "run_format_unsupported":
                raise
            return False
        return os.path.isfile(self.file(RESULT)) and os.path.isfile(self.file(STATE_DIFF))

    # -- reading -----------------------------------------------------------------------------

    def read_text(self, name: str) -> str:
        """One file's text exactly as on disk.

        Raises:
            FileNotFoundError: the file is not there.
            SiloError: ``run_invalid``: it is not UTF-8 text.
        """
        path = self.file(name)
        with open(path, "rb") as file:
            data = file.read()
        try:
            return data.decode()
        except UnicodeDecodeError as exc:
            raise SiloError(
                "run_invalid", f"{path} is not UTF-8 text: {exc}", {"path": path, "file": name}
            ) from None

    def read_json(self, name: str) -> dict[str, Any]:
        """One of the JSON documents, parsed; it must be a JSON object.

        Raises:
            FileNotFoundError: the file is not there.
            SiloError: ``run_invalid``: it does not parse or is not an object.
        """
        return self.parse(name, self.read_text(name))

    def parse(self, name: str, text: str) -> dict[str, Any]:
        """``text`` (the file ``name``, read with :meth:`read_text`) as a JSON object.

        Raises:
            SiloError: ``run_invalid``: it does not parse or is not an object.
        """
        try:
            data = parse_json(text)
        except ValueError as exc:
            why = f"is not valid JSON: {exc}"
        else:
            if isinstance(data, dict):
                return data
            why = "is not a JSON object"
        path = self.file(name)
        details = {"path": path, "file": name, "reason": why}
        raise SiloError("run_invalid", f"{path} {why}", details)

    def read_run(self) -> dict[str, Any]:
        """``run.json``, once its format version is one this silo_async reads.

        Raises:
            FileNotFoundError: no ``run.json`` (the rollout did not finish writing).
            SiloError: ``run_invalid`` (damaged) or ``run_format_unsupported`` (a newer major
                format version; the message names both versions and says to upgrade).
        """
        run = self.read_json(RUN)
        check_format_version(run, self.file(RUN))
        return run

    def read_result(self) -> dict[str, Any]:
        """``result.json`` (see :meth:`read_json` for what it raises)."""
        return self.read_json(RESULT)

    def read_state_diff(self) -> dict[str, Any]:
        """``state-diff.json`` (see :meth:`read_json` for what it raises)."""
        return self.read_json(STATE_DIFF)

    def events(self, *, strict: bool) -> TraceEvents:
        """The events of ``trace.jsonl``.

        Args:
            strict: what a line that does not parse (cut short by a kill, or damaged) does:
                ``True`` refuses the trace with ``SiloError("run_invalid")`` naming the file and
                the line; ``False`` skips it and lists its number in ``skipped``.

        Raises:
            FileNotFoundError: there is no trace.
            SiloError: ``run_invalid``, only when ``strict``.
        """
        return read_events(self.file(TRACE), strict=strict)

    # -- writing (the rollout core) ----------------------------------------------------------

    async def create(self) -> int:
        """Make the directory (and its parents) and open ``trace.jsonl`` for appending.

        Returns:
            The trace's file descriptor, for the trace recorder to append to.
        """
        return await create_run_dir(self._path)

    async def write(self, result: RunResult) -> None:
        """Write ``result.json``, ``state-diff.json`` and ``run.json`` of ``result``.

        Each file is whole or absent whenever the process is killed, ``run.json`` written last.
        """
        await write_run(self._path, result)
