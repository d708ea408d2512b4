"""Which run directories an export reads, in which order, and reading one back.

Runs come from the ids given (in that order), from an eval (``runs/index.jsonl``: plan order,
read a line at a time), or from ``.silo/runs/`` (start order). A run directory that cannot give a
whole rollout — killed before ``result.json``/``run.json`` were written, a trace without its end,
a file that does not parse — raises :class:`Unrebuildable` with the reason, for the export to
count and skip.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..eval._runs import RunNotFoundError, find_run

__all__ = [
    "SKIP_DAMAGED",
    "SKIP_INCOMPLETE",
    "SKIP_TRACE_CUT",
    "EvalNotFoundError",
    "Unrebuildable",
    "eval_dir",
    "eval_run_dirs",
    "project_run_dirs",
    "read_events",
    "read_json",
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


class Unrebuildable(Exception):
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
    if (as_path / "trace.jsonl").is_file():
        return as_path
    silo = _silo(root)
    if os.sep in run_id or run_id in (".", ".."):
        return None
    candidates = [silo / "runs" / run_id, *sorted(silo.glob(f"evals/*/runs/{run_id}"))]
    return next((c for c in candidates if c.is_dir()), None)


def resolve_runs(run_ids: Sequence[str], root: Path) -> list[str]:
    """The run directories of ``run_ids``, in the order given (all resolved before any is read).

    A directory without ``run.json`` (a run killed mid-way) is still found: the export skips it
    and counts it rather than calling it unknown.

    Raises:
        RunNotFoundError: an id names no run directory.
    """
    dirs = []
    for run_id in run_ids:
        try:
            dirs.append(os.fspath(find_run(run_id, root)))
        except RunNotFoundError:
            found = _any_run_dir(run_id, root)
            if found is None:
                raise
            dirs.append(os.fspath(found))
    return dirs


def eval_dir(eval_id: str, root: Path) -> Path:
    """``.silo/evals/<eval_id>/``, or ``eval_id`` itself when it is a path to an eval directory.

    Raises:
        EvalNotFoundError: neither exists.
    """
    found = _silo(root) / "evals" / eval_id
    if os.sep not in eval_id and eval_id not in (".", "..") and found.is_dir():
        return found
    elsewhere = root / eval_id  # an absolute eval_id stays as it is
    if (elsewhere / "runs").is_dir():
        return elsewhere  # an eval written elsewhere (`eval --out DIR`)
    raise EvalNotFoundError(f'Eval "{eval_id}" was not found in {_silo(root) / "evals"}.')


def eval_run_dirs(eval_id: str, root: Path) -> Iterator[str | None]:
    """The run directories of an eval in plan order (``None``: a rollout kept no directory).

    Reads ``runs/index.jsonl`` one line at a time; an eval killed before writing its index is
    read from its ``runs/`` directory, in start order.

    Raises:
        EvalNotFoundError: no such eval (at the call, before anything is read).
    """
    base = eval_dir(eval_id, root)
    index = base / "runs" / "index.jsonl"
    if not index.is_file():
        return _sorted_dirs(base / "runs")
    return _indexed_dirs(base, index)


def _indexed_dirs(base: Path, index: Path) -> Iterator[str | None]:
    # Plain strings, not Paths: pathlib interns every part of every path it parses, which
    # grows the interpreter's intern table with the run ids of a 100,000-rollout eval.
    prefix = os.fspath(base)
    with index.open(encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                run_dir = json.loads(line).get("runDir")
            except (ValueError, AttributeError):
                yield None  # a damaged index line: counted, not fatal
                continue
            yield os.path.join(prefix, run_dir) if isinstance(run_dir, str) else None


def project_run_dirs(root: Path) -> Iterator[str]:
    """The run directories of ``.silo/runs/``, in start order (run ids sort by time)."""
    return _sorted_dirs(_silo(root) / "runs")


def _sorted_dirs(base: Path) -> Iterator[str]:
    if not base.is_dir():
        return iter(())
    prefix = os.fspath(base)
    names = sorted(e.name for e in os.scandir(prefix) if e.is_dir())
    return (os.path.join(prefix, name) for name in names)


def read_json(path: str) -> dict[str, Any]:
    """A run's JSON document.

    Raises:
        Unrebuildable: missing (``incomplete``) or not a JSON object (``damaged``).
    """
    try:
        with open(path, encoding="utf-8") as file:
            data = json.loads(file.read())
    except FileNotFoundError:
        raise Unrebuildable(SKIP_INCOMPLETE, f"{path} is missing") from None
    except (OSError, ValueError) as exc:
        raise Unrebuildable(SKIP_DAMAGED, f"{path} does not parse: {exc}") from None
    if not isinstance(data, dict):
        raise Unrebuildable(SKIP_DAMAGED, f"{path} is not a JSON object")
    return data


def read_events(run_dir: str) -> list[dict[str, Any]]:
    """The events of ``trace.jsonl``, which must be whole and end the run.

    Raises:
        Unrebuildable: ``trace_cut`` when the file is missing, a line is torn or there is no
            ``run_end`` event.
    """
    path = os.path.join(run_dir, "trace.jsonl")
    events: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                event = json.loads(line)
                if not isinstance(event, dict):
                    raise ValueError("not an event")
                events.append(event)
    except FileNotFoundError:
        raise Unrebuildable(SKIP_TRACE_CUT, f"{path} is missing") from None
    except (OSError, ValueError) as exc:
        raise Unrebuildable(SKIP_TRACE_CUT, f"{path} is cut short ({exc})") from None
    if not any(e.get("type") == "run_end" for e in reversed(events)):
        raise Unrebuildable(SKIP_TRACE_CUT, f"{path} has no run_end event")
    return events
