"""A cancelled eval compares only equal work, says so, and indexes what it cut short."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

import silo_async as silo
from silo_async.eval import evaluate, read_index, read_summary
from silo_async.eval._interrupted import recover_interrupted
from silo_async.eval._report._compare import equal_work

from .test_eval_stats import rec
from .test_eval_support import good_agent, make_env

pytestmark = pytest.mark.anyio


async def cancelled_eval(out: Path) -> None:
    """a: solves both tasks; b: solves T-1, hangs on T-2. Cancelled once 2 rollouts hang.

    Two workers, plan order: when both hang (T-2 "b" runs 1 and 2), the 9 slots before them
    are done and the last slot never started.
    """
    hanging = 0
    with anyio.CancelScope() as scope:

        async def hangs_on_t2(ctx: silo.AgentContext) -> str:
            nonlocal hanging
            if ctx.task.endswith("B."):
                hanging += 1
                if hanging == 2:
                    scope.cancel()
                await anyio.sleep_forever()
            return await good_agent(ctx)

        await evaluate(
            make_env(),
            None,
            {"a": good_agent, "b": hangs_on_t2},
            runs=3,
            concurrency=2,
            out_dir=out,
        )
    assert scope.cancelled_caught


async def test_a_cancelled_eval_compares_only_equal_work(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    await cancelled_eval(out)
    data = read_summary(out)
    assert data["partial"] is True and data["cancelled"] is True
    assert data["finished"] == 9 and data["planned"] == 12
    # T-2 has no finished rollout of "b": it is not compared, so "a" wins nothing there
    assert data["compared"] == {"tasks": ["T-1"], "runs": {"T-1": 3}, "rollouts": 6, "leftOut": 3}
    t1, t2 = data["tasks"]
    assert t1["compared"] is True and t2["compared"] is False and t2["best"] is None
    agents = {a["agent"]: a for a in data["agents"]}
    assert agents["a"]["runs"] == agents["b"]["runs"] == 3
    assert agents["a"]["passHatK"].keys() == agents["b"]["passHatK"].keys() == {"1", "2", "3"}
    assert data["best"] is None and data["ranking"] == ["a", "b"]  # a tie on equal work
    note = data["note"]
    assert note.startswith("Partial eval (cancelled): 9 of 12 rollouts finished; 2 rollouts cut")
    assert "each agent's first 3 runs of 1 task (6 rollouts); 3 finished rollouts left out" in note
    md = (out / "summary.md").read_text()
    assert note in md and "| T-2 * |" in md and "not compared" in md
    html = (out / "report.html").read_text()
    assert 'id="partial"' in html and "Comparisons use only the work" in html


async def test_rollouts_cut_short_are_indexed_never_half_listed(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    await cancelled_eval(out)
    data = read_summary(out)
    index = read_index(out)
    assert data["interrupted"] == 2 and len(index) == data["finished"] + 2
    cut = [r for r in index if r.termination_reason == "cancelled"]
    assert [(r.task_id, r.agent, r.run) for r in cut] == [("T-2", "b", 1), ("T-2", "b", 2)]
    assert index[-2:] == cut  # plan order: T-2 "b" comes last
    on_disk = {p.name for p in (out / "runs").iterdir() if p.is_dir()}
    assert on_disk == {r.run_id for r in index}  # every run directory is indexed
    for r in cut:
        result = json.loads((out / str(r.run_dir) / "result.json").read_text())
        assert result["terminationReason"] == "cancelled"


def test_half_written_run_directories_are_removed(tmp_path: Path) -> None:
    torn = tmp_path / "runs" / "run_torn"
    torn.mkdir(parents=True)
    (torn / "trace.jsonl").write_text('{"type":"run_start"}\n')
    assert recover_interrupted(tmp_path, [("T-1", "a", 1, False)], set()) == []
    assert not torn.exists()


def test_equal_work_keeps_the_lowest_runs_of_every_agent() -> None:
    records = [
        *(rec("T1", "a", True, 1.0, run=n) for n in (1, 2, 3, 4)),
        *(rec("T1", "b", False, 0.0, run=n) for n in (2, 1)),
        rec("T2", "a", True, 1.0),
    ]
    kept, runs = equal_work(records, ["T1", "T2"], ["a", "b"])
    assert runs == {"T1": 2}
    assert sorted((r.agent, r.run) for r in kept) == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    complete, all_runs = equal_work(records[:4], ["T1"], ["a"])
    assert len(complete) == 4 and all_runs == {"T1": 4}
