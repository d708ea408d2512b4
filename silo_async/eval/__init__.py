"""Evaluating agents at scale: evaluate(), statistics, reports, recorded runs and replay.

Public names (re-exported from ``silo_async``): :func:`evaluate`, :func:`resume`,
:class:`EvalSummary`,
:class:`EvalProgress`, :func:`pass_at_k`, :func:`pass_hat_k`, :func:`replay`,
:class:`ReplayReport`, :func:`list_runs`, :func:`find_run`, :func:`load_run`,
:class:`RayExecutor`.
"""

from __future__ import annotations

from ._books import EvalProgress
from ._evaluate import evaluate, new_eval_id
from ._recorded._replay import CallComparison, ReplayReport, replay
from ._recorded._runs import RecordedRun, RunInfo, RunNotFoundError, find_run, list_runs, load_run
from ._report._compare import Comparison, ComparisonRow
from ._report._prices import Prices, PricesError, read_prices
from ._report._records import RolloutRecord
from ._report._stats import (
    GroupStats,
    Interval,
    mean_interval,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)
from ._report._summary import EvalSummary
from ._resuming import resume
from ._store import read_index, read_summary
from .ray import RayExecutor

__all__ = [
    "CallComparison",
    "Comparison",
    "ComparisonRow",
    "EvalProgress",
    "EvalSummary",
    "GroupStats",
    "Interval",
    "Prices",
    "PricesError",
    "RayExecutor",
    "RecordedRun",
    "ReplayReport",
    "RolloutRecord",
    "RunInfo",
    "RunNotFoundError",
    "evaluate",
    "find_run",
    "list_runs",
    "load_run",
    "mean_interval",
    "new_eval_id",
    "pass_at_k",
    "pass_hat_k",
    "read_index",
    "read_prices",
    "read_summary",
    "replay",
    "resume",
    "wilson_interval",
]
