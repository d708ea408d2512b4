"""Which run directories an export reads, in which order, and reading one back.

Runs come from the ids given (in that order), from an eval (``runs/index.jsonl``: plan order,
read a line at a time), or from ``.silo/runs/`` (start order). Every file is read through
:class:`~silo_async.runs.RunDir`. A run directory that cannot give a whole rollout — killed
before ``result.json``/``run.json`` were written, a trace cut short or without its end (read
strictly: a torn line is never skipped into a training line), a file that does not parse —
raises :class:`UnrebuildableError` with the reason, for the export to count and skip. A run written
by a newer silo_async is not skipped: ``run_format_unsupported`` stops the export.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .._errors import SiloError
from ..eval._recorded._runs import RunNotFoundError, find_run
from ..runs import EvalDir, RunDir

__all__ = [
    "SKIP_DAMAGED",
    "SKIP_INCOMPLETE",
    "SKIP_TRACE_CUT",
    "EvalNotFoundError",
    "UnrebuildableError",
    "eval_dir",
    "eval_run_dirs",
    "project_run_dirs",
    "read_document",
    "read_events",
    "resolve_runs",
]

#: ``result.json`` or ``run.json`` is missing: the rollout never finished writing (``kill -9``).
SKIP_INCOMPLETE = "incomplete"
#: ``trace.jsonl`` is missing, has a torn line, or lacks its ``run_end``.
SKIP_TRACE_CUT = "trace_cut"
#: A file of the run does not parse, or lacks what every run records.
SKIP_DAMAGED = "damaged"


class EvalNotFoundError(LookupError):
    """No eval with that id (``str()`` says where we looked)."""


class UnrebuildableError(RuntimeError):
    """A run directory that does not hold a whole rollout.

    Attributes:
        reason: one of ``SKIP_INCOMPLETE``, ``SKIP_TRACE_CUT``, ``SKIP_DAMAGED``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _silo(root: Path) -> Path:
    return root / ".silo"


def _any_run_dir(run_id: str, root: Path) -> Path | None:
    """A directory of a run named ``run_id`` (or at that path), finished or not."""
    as_path = root / run_id  # an absolute path stays as it is
    if RunDir(as_path).has_trace():
        return as_path
    silo = _silo(root)
    if os.sep in run_id or run_id in (".", ".."):
        return None
    candidates = [silo / "runs" / run_id, *sorted(silo.glob(f"evals/*/runs/{run_id}"))]
    return next((c for c in candidates if c.is_dir()), None)


def resolve_runs(run_ids: Sequence[str], root: Path) -> list[str]:
    """The run directories of ``run_ids``, in the order given (all resolved before any is read).

    A directory named twice (an id and its path, a link to it) is listed once, where it was
    first named.

    A directory without ``run.json`` (a run killed mid-way) is still found: the export skips it
    and counts it rather than calling it unknown.

    Raises:
        RunNotFoundError: an id names no run directory.
    """
    dirs: list[str] = []
    for run_id in run_ids:
        try:
            dirs.append(os.fspath(find_run(run_id, root)))
        except RunNotFoundError:
            found = _any_run_dir(run_id, root)
            if found is None:
                raise
            dirs.append(os.fspath(found))
    # The same directory named twice (an id and its path, a link to it) is one rollout.
    seen: set[str] = set()
    unique = []
    for run_dir in dirs:
        real = os.path.realpath(run_dir)
        if real not in seen:
            seen.add(real)
            unique.append(run_dir)
    return unique


def eval_dir(eval_id: str, root: Path) -> Path:
    """``.silo/evals/<eval_id>/``, or ``eval_id`` itself when it is a path to an eval directory.

    Raises:
        EvalNotFoundError: neither exists.
    """
    found = _silo(root) / "evals" / eval_id
    if os.sep not in eval_id and eval_id not in (".", "..") and found.is_dir():
        return found
    elsewhere = root / eval_id  # an absolute eval_id stays as it is
    if os.path.isdir(EvalDir(elsewhere).runs):
        return elsewhere  # an eval written elsewhere (`eval --out DIR`)
    raise EvalNotFoundError(f'Eval "{eval_id}" was not found in {_silo(root) / "evals"}.')


def eval_run_dirs(eval_id: str, root: Path) -> Iterator[RunDir | None]:
    """The run directories of an eval in plan order (``None``: a rollout kept no directory).

    Reads ``runs/index.jsonl`` one line at a time (:meth:`EvalDir.index`: a last line cut short
    is skipped, a damaged one gives ``None``, counted and not fatal); an eval killed before
    writing its index is read from its ``runs/`` directory, in start order.

    Raises:
        EvalNotFoundError: no such eval (at the call, before anything is read).
    """
    base = EvalDir(eval_dir(eval_id, root))
    if not os.path.isfile(base.file(EvalDir.INDEX)):
        return base.run_dirs()
    return _indexed_dirs(base)


def _indexed_dirs(base: EvalDir) -> Iterator[RunDir | None]:
    # Plain strings, not Paths: pathlib interns every part of every path it parses, which
    # grows the interpreter's intern table with the run ids of a 100,000-rollout eval.
    for line in base.index():
        run_dir = None if line.data is None else line.data.get("runDir")
        yield base.run(run_dir) if isinstance(run_dir, str) else None


def project_run_dirs(root: Path) -> Iterator[RunDir]:
    """The run directories of ``.silo/runs/``, in start order (run ids sort by time)."""
    runs = os.fspath(_silo(root) / "runs")
    if not os.path.isdir(runs):
        return iter(())
    here = os.path.realpath(runs)
    names = sorted(
        entry.name
        for entry in os.scandir(runs)
        if entry.is_dir() and not (entry.is_symlink() and _points_into(entry.path, here))
    )
    return (RunDir(os.path.join(runs, name)) for name in names)


def _points_into(link: str, directory: str) -> bool:
    """The symbolic link ``link`` names a directory of ``directory``.

    That is a second name of a run listed there anyway: exporting it would give that rollout
    twice.
    """
    return os.path.dirname(os.path.realpath(link)) == directory


def read_document(read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A run's JSON document, read by ``read`` (``RunDir.read_run``, ``RunDir.read_result``).

    Raises:
        UnrebuildableError: missing (``incomplete``) or damaged (``damaged``).
        SiloError: ``run_format_unsupported``: the run was written by a newer silo_async.
    """
    try:
        return read()
    except FileNotFoundError as exc:
        raise UnrebuildableError(SKIP_INCOMPLETE, f"{exc.filename} is missing") from None
    except SiloError as exc:
        if exc.code == "run_format_unsupported":
            raise
        raise UnrebuildableError(SKIP_DAMAGED, exc.message) from None
    except OSError as exc:
        raise UnrebuildableError(SKIP_DAMAGED, f"{exc.filename} cannot be read: {exc}") from None


def read_events(run_dir: RunDir) -> list[dict[str, Any]]:
    """The events of the run's trace, which must be whole (read strictly) and end the run.

    Raises:
        UnrebuildableError: ``trace_cut`` when the trace is missing, a line is torn or there is no
            ``run_end`` event.
    """
    try:
        trace = run_dir.events(strict=True)
    except FileNotFoundError as exc:
        raise UnrebuildableError(SKIP_TRACE_CUT, f"{exc.filename} is missing") from None
    except (OSError, SiloError) as exc:
        raise UnrebuildableError(SKIP_TRACE_CUT, str(exc)) from None
    if not trace.ended:
        raise UnrebuildableError(SKIP_TRACE_CUT, f"{trace.path} has no run_end event")
    return trace.events
