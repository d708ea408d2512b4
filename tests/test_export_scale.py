"""An export streams: 10,000 rollouts in the memory of a few, whatever the file's size."""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from pathlib import Path

import pytest

import silo_async as silo
from silo_async.export import export_runs

from .worlds import ENV, blocker

pytestmark = pytest.mark.anyio

ROLLOUTS = 10_000


async def synthesize_eval(tmp_path: Path, rollouts: int) -> Path:
    """An eval directory of ``rollouts`` copies of one real rollout (files hard-linked)."""
    model = await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=tmp_path / "model")
    assert model.run_dir is not None
    run = json.loads((model.run_dir / "run.json").read_text())
    runs = tmp_path / "ev" / "runs"
    runs.mkdir(parents=True)
    index = []
    for n in range(rollouts):
        run_id = f"run_{n:06d}"
        run_dir = runs / run_id
        run_dir.mkdir()
        (run_dir / "run.json").write_text(json.dumps({**run, "runId": run_id}))
        for name in ("result.json", "trace.jsonl"):
            os.link(model.run_dir / name, run_dir / name)
        index.append(json.dumps({"runId": run_id, "runDir": f"runs/{run_id}"}) + "\n")
    (runs / "index.jsonl").write_text("".join(index))
    return tmp_path / "ev"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_ten_thousand_rollouts_export_in_bounded_memory(tmp_path: Path) -> None:
    started = time.perf_counter()
    eval_dir = await synthesize_eval(tmp_path, ROLLOUTS)
    made = time.perf_counter()
    out = tmp_path / "train.jsonl"
    tracemalloc.start()
    try:
        stats = export_runs(eval_id=str(eval_dir), out=out, environment=ENV, cwd=tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    done = time.perf_counter()
    size = out.stat().st_size
    print(
        f"\n{ROLLOUTS} rollouts: synthesized in {made - started:.1f} s, exported in "
        f"{done - made:.1f} s (traced), file {size / 1e6:.1f} MB, peak {peak / 1e6:.2f} MB"
    )
    assert stats.written == ROLLOUTS and stats.skipped_total == 0
    with out.open() as lines:
        ids = [json.loads(line)["runId"] for line in lines]
    assert ids == [f"run_{n:06d}" for n in range(ROLLOUTS)]  # plan order
    # Streaming: the peak is that of a rollout or two, a small fraction of what was written.
    assert peak < 1_000_000 and peak < size / 10
