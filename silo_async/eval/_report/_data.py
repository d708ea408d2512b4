"""The data report.html carries: a metadata block, the rollout index and the rollout details.

* **Details are stored once.** Every rollout's compact details (see :mod:`._details`) are
  interned as compact JSON text as the eval runs (:class:`DetailStore`): identical rollouts (a
  scripted agent run 10,000 times) share one entry, and each index row points at its entry.
  The store holds at most :data:`STORE_CHARS` characters of distinct details, so its memory is
  bounded whatever the eval's size.
* **The page stays small.** At write time, details are packed (gzip) within
  :data:`DETAILS_BUDGET` compressed bytes, failed, faulted and cut-short rollouts first; a
  rollout left out still has its row (and its run directory), and the page says so when it is
  opened. The index is gzip-packed as well.
* Every blob is base64url text (no ``/``), so nothing in the page can form a URL or close a tag.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from ..._jsonutil import compact_json, utf8
from ..._result import INVALID_REASONS, TERMINATION_REASONS
from ._compare import equal_work
from ._details import truncate
from ._records import RolloutRecord
from ._summary import EvalSummary

__all__ = ["DETAILS_BUDGET", "STORE_CHARS", "DetailStore", "index_rows", "pack", "pack_details"]

#: Characters of distinct details an eval keeps in memory for its report.
STORE_CHARS = 48_000_000
#: Compressed bytes of details a report embeds (base64 makes it 4/3 of that in the page).
DETAILS_BUDGET = 4_500_000
#: Uncompressed bytes between two measurements of the packed size.
FLUSH_EVERY = 64 * 1024
#: Index row columns (the page's script reads them by position; docs/eval-summary.md).
COLUMNS = (
    "task", "agent", "run", "passed", "reward", "reason", "toolCalls", "toolErrors",
    "toolFaults", "verifierError", "runId", "runDir", "durationMs", "error", "compared",
    "inputTokens", "outputTokens", "modelSteps", "cost", "details", "rewardValid",
    "invalidReason", "injectedFaults", "recoveredFaults", "baseline",
)  # fmt: skip


class DetailStore:
    """Distinct compact details, each kept once, within :data:`STORE_CHARS` characters."""

    def __init__(self, budget: int = STORE_CHARS) -> None:
        self.budget = budget
        self.texts: list[str] = []
        self._ids: dict[str, int] = {}
        self.chars = 0
        self.dropped = 0

    def add(self, details: dict[str, Any] | None) -> int:
        """Intern ``details``; its id, or -1 (none, or the store is full)."""
        if details is None:
            return -1
        text = compact_json(details)
        found = self._ids.get(text)
        if found is not None:
            return found
        if self.chars + len(text) > self.budget:
            self.dropped += 1
            return -1
        self._ids[text] = len(self.texts)
        self.texts.append(text)
        self.chars += len(text)
        return len(self.texts) - 1


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii")


def pack(value: Any) -> str:
    """``value`` as gzip-compressed, base64url-encoded compact JSON (the same bytes each time)."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip stream, no timestamp
    return _b64(compressor.compress(utf8(compact_json(value))) + compressor.flush())


def _priority(rows: Sequence[RolloutRecord], refs: Sequence[int]) -> list[int]:
    """Detail ids in the order they earn a place: rollouts that went wrong first."""
    seen: set[int] = set()
    order = []
    for wrong in (True, False):
        for record, ref in zip(rows, refs, strict=True):
            went_wrong = (
                not record.passed
                or not record.reward_valid
                or record.env_fault
                or record.termination_reason != "completed"
            )
            if ref >= 0 and went_wrong == wrong and ref not in seen:
                seen.add(ref)
                order.append(ref)
    return order


def pack_details(
    texts: Sequence[str],
    rows: Sequence[RolloutRecord],
    refs: Sequence[int],
    budget: int = DETAILS_BUDGET,
) -> tuple[str, list[int]]:
    """Pack the details ``refs`` point at within ``budget`` compressed bytes.

    Returns:
        The packed JSON array of the kept details, and each row's position in it (-1: not
        embedded).
    """
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    chunks = [compressor.compress(b"[")]
    size, pending, kept = 0, 0, dict[int, int]()
    for ref in _priority(rows, refs):
        raw = utf8(("," if kept else "") + texts[ref])  # any str: a lone surrogate escaped
        chunks.append(compressor.compress(raw))
        kept[ref] = len(kept)
        pending += len(raw)
        if pending >= FLUSH_EVERY:  # a sync point now and then: the size so far is exact
            chunks.append(compressor.flush(zlib.Z_SYNC_FLUSH))
            size, pending = sum(len(c) for c in chunks), 0
        if size > budget:  # this one still goes in; the rest stay in their run directories
            break
    chunks.append(compressor.compress(b"]"))
    chunks.append(compressor.flush())
    return _b64(b"".join(chunks)), [kept.get(ref, -1) for ref in refs]


def _row(r: RolloutRecord, pos: dict[str, dict[str, int]], compared: bool, det: int) -> list[Any]:
    run_dir = None if r.run_dir in (None, f"runs/{r.run_id}") else r.run_dir
    invalid = -1 if r.invalid_reason is None else pos["invalid"].get(r.invalid_reason, -1)
    return [
        pos["tasks"][r.task_id], pos["agents"][r.agent], r.run, 1 if r.passed else 0, r.reward,
        pos["reasons"][r.termination_reason], r.tool_calls, r.tool_errors, r.tool_faults,
        1 if r.verifier_error else 0, r.run_id, run_dir, round(r.duration_ms, 1),
        None if r.error is None else truncate(r.error, 300), 1 if compared else 0,
        r.input_tokens, r.output_tokens, r.model_steps,
        None if r.cost is None else round(r.cost, 6), det, 1 if r.reward_valid else 0,
        invalid, r.injected_faults, r.recovered_faults, 1 if r.baseline else 0,
    ]  # fmt: skip


def reasons(records: Iterable[RolloutRecord]) -> list[str]:
    """Every termination reason, the known ones first (the index names them by position)."""
    known = list(TERMINATION_REASONS)
    return known + sorted({r.termination_reason for r in records} - set(known))


def index_rows(
    summary: EvalSummary, rows: Sequence[RolloutRecord], positions: Sequence[int]
) -> list[list[Any]]:
    """One short array per rollout of ``rows`` (see :data:`COLUMNS`)."""
    fair, _ = equal_work(summary.records, [t.id for t in summary.tasks], summary.agents)
    kept = {id(r) for r in fair}
    pos = {
        "tasks": {t.id: i for i, t in enumerate(summary.tasks)},
        "agents": {a: i for i, a in enumerate(summary.agents)},
        "reasons": {r: i for i, r in enumerate(reasons(rows))},
        "invalid": {r: i for i, r in enumerate(INVALID_REASONS)},
    }
    return [_row(r, pos, id(r) in kept, p) for r, p in zip(rows, positions, strict=True)]
