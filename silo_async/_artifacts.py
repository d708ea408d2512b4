"""Artifact files of a run directory: result.json, state-diff.json, run.json.

``trace.jsonl`` is appended by the trace recorder while the run happens; the other three are
written once, after grading. ``result.json`` and ``state-diff.json`` carry no timestamps and no run
ids, so they are byte-comparable regression oracles.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from ._jsonutil import pretty_json

if TYPE_CHECKING:
    from ._result import RunResult

__all__ = ["write_artifacts"]


def _write_all(files: dict[Path, str]) -> None:
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")


async def write_artifacts(result: RunResult) -> None:
    """Write the three summary files of ``result`` into ``result.run_dir``.

    The documents are serialised on the event loop (cheap, and the result is immutable), then
    written by a worker thread: creating files costs far more than encoding them, and must not
    stall the other rollouts sharing the loop.
    """
    run_dir = result.run_dir
    if run_dir is None:
        return
    files = {
        run_dir / "result.json": pretty_json(result.result_dict()),
        run_dir / "state-diff.json": pretty_json(result.state_diff),
        run_dir / "run.json": pretty_json(result.run_dict()),
    }
    await anyio.to_thread.run_sync(_write_all, files)
