"""Export throughput and memory: ``runs export`` of an eval of real crm rollouts.

An eval of the crm template (the scripted solver and the no-op agent from ``examples/agents``,
every task, enough runs for ``--rollouts``) is written to a scratch directory, then exported
with ``silo_async.export.export_runs`` to a file beside it: wall time (best of ``--rounds``),
rollouts/s and MB/s of JSON lines; then once more under ``tracemalloc`` for the peak of Python
memory the export allocates (it streams: the figure must not grow with the number of rollouts),
and the process's RSS growth across the untraced exports. Prints a table, then one JSON line.

Run: ``.venv/bin/python benchmarks/bench_export.py [--rollouts 10000] [--rounds 3]
[--dir /dev/shm]``. Scratch files go to /dev/shm when it exists (RAM), so the numbers measure the
export rather than the disk.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio

from silo_async.agents._load import load_agent
from silo_async.eval import evaluate
from silo_async.export import export_runs
from silo_async.project import Project

ROOT = Path(__file__).resolve().parent.parent
AGENTS = {"solver": "examples/agents/crm_solver.py", "noop": "examples/agents/noop.py"}


async def record_eval(root: Path, rollouts: int) -> tuple[Path, int]:
    """An eval of the crm template with at least ``rollouts`` rollouts; its dir and size."""
    project = await Project.open(root)
    env = await (await project.environments.create("crm", template="crm")).load()
    agents = {label: load_agent(str(ROOT / spec), ROOT).fn for label, spec in AGENTS.items()}
    runs = math.ceil(rollouts / (len(env.tasks) * len(agents)))
    out = root / ".silo" / "evals" / "bench"
    summary = await evaluate(env, None, agents, runs=runs, concurrency=1_000, out_dir=out)
    return out, summary.finished


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def traced_peak(*args: Any, **kwargs: Any) -> int:
    """The peak of Python memory allocated during one export (environment loading included)."""
    tracemalloc.start()
    try:
        export_runs(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(root: Path, eval_dir: Path, rounds: int) -> dict[str, Any]:
    out = root / "train.jsonl"
    times = []
    rss_before = rss_mb()
    for _ in range(rounds):
        started = time.perf_counter()
        stats = export_runs(eval_id=str(eval_dir), out=out, cwd=root)
        times.append(time.perf_counter() - started)
    rss_growth = rss_mb() - rss_before
    peak = traced_peak(eval_id=str(eval_dir), out=out, cwd=root)
    # A tenth of the rollouts, named one by one: the same peak if the export streams.
    index = (eval_dir / "runs" / "index.jsonl").read_text().splitlines()
    tenth = [str(eval_dir / json.loads(line)["runDir"]) for line in index[: len(index) // 10]]
    peak_tenth = traced_peak(tenth, out=root / "tenth.jsonl", cwd=root)
    best = min(times)
    size_mb = out.stat().st_size / 1e6
    return {
        "written": stats.written,
        "skipped": stats.skipped_total,
        "wall_s": round(best, 3),
        "rollouts_per_s": round(stats.written / best, 1),
        "mb_per_s": round(size_mb / best, 1),
        "file_mb": round(size_mb, 1),
        "kb_per_line": round(size_mb * 1000 / stats.written, 1),
        "traced_peak_mb": round(peak / 1e6, 2),
        "traced_peak_tenth_mb": round(peak_tenth / 1e6, 2),
        "rss_growth_mb": round(rss_growth, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="untraced exports (best kept)")
    parser.add_argument("--dir", default=None, help="scratch directory (default: /dev/shm)")
    args = parser.parse_args()
    scratch = args.dir or ("/dev/shm" if Path("/dev/shm").is_dir() else None)
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        root = Path(tmp)
        eval_dir, total = anyio.run(record_eval, root, args.rollouts)
        result = {
            "rollouts": total,
            "scratch": str(root.parent),
            **measure(root, eval_dir, args.rounds),
        }
    rows = [
        ("rollouts", f"{result['rollouts']} (crm: solver + noop, every task)"),
        ("scratch dir", str(result["scratch"])),
        ("export", f"{result['wall_s']:.2f} s (best of {args.rounds})"),
        ("throughput", f"{result['rollouts_per_s']:.0f} rollouts/s, {result['mb_per_s']:.0f} MB/s"),
        ("file", f"{result['file_mb']:.0f} MB ({result['kb_per_line']:.1f} KB per line)"),
        (
            "traced peak",
            f"{result['traced_peak_mb']:.2f} MB for all, {result['traced_peak_tenth_mb']:.2f} MB "
            "for a tenth (Python allocations of one export, environment loading included)",
        ),
        ("RSS growth", f"{result['rss_growth_mb']:.1f} MB over the untraced exports"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key.ljust(width)}  {value}")
    keys = ("rollouts", "wall_s", "rollouts_per_s", "mb_per_s", "traced_peak_mb", "rss_growth_mb")
    print(json.dumps({k: result[k] for k in keys}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
