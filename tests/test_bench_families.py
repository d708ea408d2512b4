"""bench_families runs a crm eval of family instances with the gold agent: every one passes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import anyio

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_families.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_families", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_small_family_eval_passes_and_reports_its_figures(tmp_path: Path) -> None:
    bench = _bench()
    figures = anyio.run(bench.main, 12, 4, "any", tmp_path)
    assert figures["instances"] == 12 and figures["pass_rate"] == 1.0
    assert figures["cpu_us_per_rollout"] > 0 and figures["plan_cpu_us_per_instance"] > 0
    assert bench.checkpoint_us(rounds=1, calls=100) > 0
    assert sys.modules.get("_bench_families") is None
