"""bench_audit audits what it says: every task it times is audited and its rollouts written."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_audit.py"

pytestmark = pytest.mark.anyio


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_audit", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_benchmark_audits_hand_written_tasks_and_instances() -> None:
    bench = _bench()
    figures = await bench.main(1, 2, tasks=2)
    assert figures["handwritten"]["tasks"] == 2 and figures["instances"]["tasks"] == 2
    for phase in figures.values():
        assert phase["rollouts"] >= 5 * phase["tasks"]  # a solver and four probes, at least
        assert phase["tasks_per_s"] > 0 and phase["cpu_ms_per_task"] > 0
    assert "handwritten" in bench.report(figures)
