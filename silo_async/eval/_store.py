"""The eval directory's summary files written at the end, and its index and summary read back.

The files, their names and how they are read and written are
:class:`silo_async.runs.EvalDir`'s: ``summary.json`` (versioned, docs/eval-summary.md),
``summary.md``, ``report.html`` (one self-contained page, no network) and
``runs/index.jsonl`` (one line per rollout, finished or cut short by a cancellation, pointing at
its run directory ``runs/<run_id>/``). This module turns an :class:`EvalSummary` into those
files and the index back into records.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .._jsonutil import compact_json
from ..runs import EvalDir
from ._report._html import render_report
from ._report._records import RolloutRecord
from ._report._summary import EvalSummary

__all__ = ["INDEX", "ReportDetails", "read_index", "read_summary", "write_eval_dir"]

#: The report's details: the distinct compact details (JSON text) and, per record, the id of
#: its details (-1: none).
ReportDetails = tuple[Sequence[str], Sequence[int]]

#: The rollout index, relative to the eval directory.
INDEX = EvalDir.INDEX


def write_eval_dir(summary: EvalSummary, report: ReportDetails | None) -> None:
    """Write the summary files of ``summary`` into ``summary.out_dir`` (blocking; call off-loop).

    Args:
        summary: the eval's summary (its ``out_dir`` must be set).
        report: the details for ``report.html``; ``None`` skips the report.
    """
    if summary.out_dir is None:
        return
    EvalDir(summary.out_dir).write_summary(
        summary.to_dict(),
        summary.markdown(),
        None if report is None else render_report(summary, *report),
        (compact_json(r.to_dict()) for r in summary.indexed()),
    )


def read_index(eval_dir: str | os.PathLike[str]) -> list[RolloutRecord]:
    """The rollouts listed in ``<eval_dir>/runs/index.jsonl``, in its order.

    A last line cut short (an eval killed mid-write) and blank lines are skipped
    (:class:`~silo_async.runs.EvalDir` says why).

    Raises:
        FileNotFoundError: there is no index.
        ValueError: a whole line is not an index line (the file was damaged).
    """
    base = EvalDir(eval_dir)
    if not os.path.isfile(base.file(EvalDir.INDEX)):
        raise FileNotFoundError(2, "No such file or directory", base.file(EvalDir.INDEX))
    records = []
    for line in base.index():
        try:
            if line.data is None:
                raise ValueError
            records.append(RolloutRecord.from_dict(line.data))
        except (ValueError, KeyError, TypeError):
            raise ValueError(
                f"{os.fspath(eval_dir)}/{EvalDir.INDEX} line {line.number} is not an index line."
            ) from None
    return records


def read_summary(eval_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """``<eval_dir>/summary.json`` as a dict (checked to be a version-1 eval summary).

    Raises:
        FileNotFoundError: there is none.
        ValueError: the file is not a silo_async eval summary of a version this code reads.
    """
    return EvalDir(eval_dir).read_summary()
