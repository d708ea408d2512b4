"""Compare artifacts byte for byte with the committed baselines, or re-record them."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ._artifacts import Artifact

__all__ = ["Comparison", "compare_baselines", "drift_excerpt"]

#: Most diff lines shown under a DRIFT line: enough to see what moved, not a wall of JSON.
_EXCERPT_LINES = 12


@dataclass
class Comparison:
    """How each artifact stands against its baseline file.

    Attributes:
        status: ``{file_name: "ok" | "drift" | "missing" | "updated" | "created"}``.
        stale: baseline files that belong to no current artifact (removed when updating).
        excerpts: for drifted files, a short unified diff (baseline -> now).
    """

    status: dict[str, str] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    excerpts: dict[str, list[str]] = field(default_factory=dict)


def drift_excerpt(old: bytes, new: bytes, name: str) -> list[str]:
    """The first lines of a unified diff from ``old`` (baseline) to ``new`` (this run)."""
    diff = difflib.unified_diff(
        old.decode("utf-8", "replace").splitlines(),
        new.decode("utf-8", "replace").splitlines(),
        f"baseline/{name}",
        f"now/{name}",
        n=1,
        lineterm="",
    )
    lines = list(diff)
    if len(lines) > _EXCERPT_LINES:
        lines = [*lines[:_EXCERPT_LINES], f"... ({len(lines) - _EXCERPT_LINES} more diff lines)"]
    return lines


def _judge(artifact: Artifact, path: Path, update: bool, out: Comparison) -> None:
    name = artifact.file_name
    old = path.read_bytes() if path.is_file() else None
    if old == artifact.data:
        out.status[name] = "ok"
    elif update:
        path.write_bytes(artifact.data)
        out.status[name] = "created" if old is None else "updated"
    elif old is None:
        out.status[name] = "missing"
    else:
        out.status[name] = "drift"
        out.excerpts[name] = drift_excerpt(old, artifact.data, name)


def compare_baselines(
    artifacts: Iterable[Artifact], baseline_dir: Path, *, update: bool
) -> Comparison:
    """Compare (or with ``update``, write) every artifact against ``baseline_dir/<file_name>``.

    Baseline files no current artifact accounts for are stale: a task was removed or renamed.
    They are reported, and deleted when updating, so the baseline directory always mirrors the
    template exactly.
    """
    out = Comparison()
    if update:
        baseline_dir.mkdir(parents=True, exist_ok=True)
    for artifact in artifacts:
        _judge(artifact, baseline_dir / artifact.file_name, update, out)
    if baseline_dir.is_dir():
        for path in sorted(baseline_dir.glob("*.json")):
            if path.name not in out.status:
                out.stale.append(path.name)
                if update:
                    path.unlink()
    return out
