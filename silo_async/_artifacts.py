"""Artifact files of a run directory: result.json, state-diff.json, run.json.

``trace.jsonl`` is appended by the trace recorder while the run happens; the other three are
written once, after grading. ``result.json`` and ``state-diff.json`` carry no timestamps and no run
ids, so they are byte-comparable regression oracles.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ._jsonutil import pretty_json

if TYPE_CHECKING:
    from ._result import RunResult

__all__ = ["write_artifacts"]


def _write(path: Path, text: str) -> None:
    # Write beside, then rename: a reader never sees half a file.
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


async def write_artifacts(result: RunResult) -> None:
    """Write the three summary files of ``result`` into ``result.run_dir``."""
    run_dir = result.run_dir
    if run_dir is None:
        return
    _write(run_dir / "result.json", pretty_json(result.result_dict()))
    _write(run_dir / "state-diff.json", pretty_json(result.state_diff))
    _write(run_dir / "run.json", pretty_json(result.run_dict()))
