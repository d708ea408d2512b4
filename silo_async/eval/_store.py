"""The eval directory on disk: its summary files written at the end, its index read back.

The files and their names are :class:`silo_async.runs.EvalDir`'s: ``summary.json`` (versioned,
docs/eval-summary.md), ``summary.md``, ``report.html`` (one self-contained page, no network) and
``runs/index.jsonl`` (one line per rollout, finished or cut short by a cancellation, pointing at
its run directory ``runs/<run_id>/``). While the eval runs, the index grows by one line per
rollout that finishes (:class:`silo_async.runs._appender.LineAppender`); with the summary it is
rewritten in plan order. ``summary.json`` is written last: an eval whose ``summary.json`` says
it is complete wrote everything.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._jsonutil import compact_json, pretty_json, utf8
from ..runs import EvalDir, write_atomic
from ._report._html import render_report
from ._report._records import RolloutRecord
from ._report._summary import EvalSummary

__all__ = ["INDEX", "ReportDetails", "read_index", "read_summary", "write_eval_dir"]

#: The report's details: the distinct compact details (JSON text) and, per record, the id of
#: its details (-1: none).
ReportDetails = tuple[Sequence[str], Sequence[int]]

#: The rollout index, relative to the eval directory.
INDEX = EvalDir.INDEX


def _write_text(path: str, text: str) -> None:
    # Beside, then rename: a reader (or a kill) never sees half a file. utf8(): any str, a
    # lone surrogate written as its escape.
    write_atomic(path, utf8(text))


def write_eval_dir(summary: EvalSummary, report: ReportDetails | None) -> None:
    """Write the summary files of ``summary`` into ``summary.out_dir`` (blocking; call off-loop).

    Args:
        summary: the eval's summary (its ``out_dir`` must be set).
        report: the details for ``report.html``; ``None`` skips the report.
    """
    if summary.out_dir is None:
        return
    out = EvalDir(summary.out_dir)
    os.makedirs(out.runs, exist_ok=True)
    lines = [compact_json(r.to_dict()) for r in summary.indexed()]
    _write_text(out.file(EvalDir.INDEX), "".join(line + "\n" for line in lines))
    _write_text(out.file(EvalDir.SUMMARY_MD), summary.markdown())
    if report is not None:
        _write_text(out.file(EvalDir.REPORT), render_report(summary, *report))
    _write_text(out.file(EvalDir.SUMMARY), pretty_json(summary.to_dict()))  # last: all is there


def read_index(eval_dir: str | os.PathLike[str]) -> list[RolloutRecord]:
    """The finished rollouts listed in ``<eval_dir>/runs/index.jsonl``.

    Blank lines are skipped, and so is a last line cut short (an eval killed mid-write).

    Raises:
        ValueError: a line (other than a last one cut short) is not an index line.
    """
    text = Path(EvalDir(eval_dir).file(EvalDir.INDEX)).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    torn = bool(lines) and not text.endswith("\n")
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(RolloutRecord.from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError):
            if torn and number == len(lines):
                break
            raise ValueError(
                f"{eval_dir}/{EvalDir.INDEX} line {number} is not an index line."
            ) from None
    return records


def read_summary(eval_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """``<eval_dir>/summary.json`` as a dict (checked to be a version-1 eval summary).

    Raises:
        ValueError: the file is not a silo_async eval summary of a version this code reads.
    """
    data = json.loads(Path(EvalDir(eval_dir).file(EvalDir.SUMMARY)).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != "silo_async.eval":
        raise ValueError(f"{eval_dir}/summary.json is not a silo_async eval summary.")
    if data.get("version") != 1:
        raise ValueError(f"{eval_dir}/summary.json has unsupported version {data.get('version')}.")
    return data
