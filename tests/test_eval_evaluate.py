"""evaluate(): comparison of scripted agents, eval directory, faults, progress, cancellation."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import silo_async as silo
from silo_async.eval import EvalProgress, evaluate, read_index, read_summary

from .test_eval_support import bad_agent, faulty_agent, good_agent, make_env, slow_agent

pytestmark = pytest.mark.anyio


async def test_good_agent_beats_bad_agent(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    summary = await evaluate(
        make_env(),
        None,
        {"bad": bad_agent, "good": good_agent},
        runs=3,
        concurrency=4,
        out_dir=out,
    )
    assert summary.complete and not summary.cancelled
    assert summary.planned == summary.finished == 12
    assert summary.ranking == ["good", "bad"]
    assert [row.best for row in summary.comparison.rows] == ["good", "good"]
    good = summary.agent("good")
    assert (good.passes, good.runs, good.pass_at_k[3], good.pass_hat_k[3]) == (6, 6, 1.0, 1.0)
    bad = summary.agent("bad")
    assert (bad.passes, bad.failures, bad.faults, bad.mean_tool_errors) == (0, 6, 0, 1.0)
    # records come back in plan order: task, agent (as given), run
    order = [(r.task_id, r.agent, r.run) for r in summary.records]
    assert order[:4] == [
        ("T-1", "bad", 1),
        ("T-1", "bad", 2),
        ("T-1", "bad", 3),
        ("T-1", "good", 1),
    ]

    data = read_summary(out)
    assert (data["format"], data["version"]) == ("silo_async.eval", 1)
    assert data["ranking"] == ["good", "bad"] and data["best"] == "good"
    assert data["tasks"][0]["best"] == "good"
    assert data["tasks"][0]["agents"]["good"]["passAtK"] == {"1": 1.0, "2": 1.0, "3": 1.0}
    assert data["complete"] is True and data["finished"] == 12
    index = read_index(out)
    assert [r.run_id for r in index] == [r.run_id for r in summary.records]
    for r in index:
        assert r.run_dir is not None and (out / r.run_dir / "result.json").is_file()
        assert r.run_dir.startswith("runs/")
        run_json = json.loads((out / r.run_dir / "run.json").read_text())
        place = (run_json["taskId"], run_json["agent"], run_json["run"])
        assert place == (r.task_id, r.agent, r.run)
    line = json.loads((out / "runs" / "index.jsonl").read_text().splitlines()[0])
    assert set(line) >= {
        "task",
        "agent",
        "run",
        "runId",
        "runDir",
        "passed",
        "reward",
        "terminationReason",
        "toolCalls",
    }
    md = (out / "summary.md").read_text()
    assert "| 1 | good |" in md and "**3/3 · 1.00**" in md
    assert (out / "report.html").stat().st_size > 0
    run_json = json.loads((out / index[0].run_dir / "run.json").read_text())  # type: ignore[operator]
    assert run_json["agent"] == "bad"


async def test_environment_faults_are_counted_apart(tmp_path: Path) -> None:
    summary = await evaluate(
        make_env(broken_verifier=True), ["T-1", "T-2"], {"f": faulty_agent}, runs=2
    )
    t1 = summary.cell("T-1", "f")
    t2 = summary.cell("T-2", "f")
    assert t1 is not None and t2 is not None
    # T-1: broken verifier (plus the tool fault); T-2 passes despite a tool fault: every
    # faulted rollout is invalid, counted apart and never in a rate (DESIGN section 14)
    assert (t1.passes, t1.failures, t1.faults, t1.verifier_errors) == (0, 0, 2, 2)
    assert (t2.passes, t2.failures, t2.faults, t2.tool_faults) == (0, 0, 2, 2)
    assert (t1.invalid, t2.invalid) == (2, 2) and t1.pass_rate is t2.pass_rate is None
    assert t2.invalid_reasons["environment_fault"] == 2
    assert summary.out_dir is None  # nothing written without out_dir


async def test_progress_is_reported_per_rollout() -> None:
    seen: list[EvalProgress] = []
    await evaluate(make_env(), ["T-1"], {"g": good_agent}, runs=5, on_progress=seen.append)
    assert [p.done for p in seen] == [1, 2, 3, 4, 5]
    assert seen[-1].total == 5 and seen[-1].passes == 5 and seen[-1].faults == 0
    assert seen[-1].rate >= 0


async def test_eval_ids(tmp_path: Path) -> None:
    fresh = await evaluate(make_env(), "T-1", {"g": good_agent})
    assert fresh.config["tasks"] == ["T-1"]
    assert re.fullmatch(r"eval_\d{8}T\d{6}_[0-9a-f]{6}", fresh.eval_id)
    named = await evaluate(
        make_env(), ["T-1"], {"g": good_agent}, out_dir=tmp_path / "e", eval_id="mine"
    )
    assert named.eval_id == "mine" and read_summary(tmp_path / "e")["evalId"] == "mine"


async def test_cancellation_keeps_finished_rollouts(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    reached = False
    with anyio.CancelScope() as scope:

        def progress(p: EvalProgress) -> None:
            if p.done == 3:
                scope.cancel()

        await evaluate(
            make_env(),
            None,
            {"a": slow_agent, "b": slow_agent},
            runs=5,
            concurrency=2,
            out_dir=out,
            on_progress=progress,
        )
        reached = True
    assert scope.cancelled_caught and not reached  # the cancellation propagated
    data = read_summary(out)
    assert data["cancelled"] is True and data["complete"] is False
    assert 3 <= data["finished"] < data["planned"] == 20
    index = read_index(out)
    assert len(index) == data["finished"] + data["interrupted"]
    finished = [r for r in index if r.termination_reason != "cancelled"]
    assert len(finished) == data["finished"] and all(r.passed for r in finished)
    assert sum(a["runs"] for a in data["agents"]) == data["compared"]["rollouts"]
    # rollouts in flight wrote their own artifacts (recorded as cancelled) and are indexed
    run_dirs = {p.name for p in (out / "runs").iterdir() if p.is_dir()}
    assert {r.run_id for r in index} == run_dirs
    assert "cancelled" in (out / "report.html").read_text()


async def test_cancel_after_the_last_rollout_still_writes_everything(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    with anyio.CancelScope() as scope:

        def progress(p: EvalProgress) -> None:
            if p.done == p.total:
                scope.cancel()

        await evaluate(
            make_env(), None, {"g": good_agent}, runs=2, out_dir=out, on_progress=progress
        )
        await anyio.lowlevel.checkpoint()  # where the caller sees the cancellation
    assert scope.cancelled_caught
    data = read_summary(out)
    assert data["complete"] is True and data["finished"] == 4
    assert (out / "report.html").is_file()


async def test_invalid_arguments() -> None:
    env = make_env()
    with pytest.raises(silo.SiloError) as info:
        await evaluate(env, ["T-9"], {"g": good_agent})
    assert info.value.code == "task_not_found"
    with pytest.raises(ValueError, match="runs"):
        await evaluate(env, None, {"g": good_agent}, runs=0)
    with pytest.raises(ValueError, match="agent"):
        await evaluate(env, None, {})
    with pytest.raises(ValueError, match="once"):
        await evaluate(env, ["T-1", "T-1"], {"g": good_agent})


async def test_refuses_a_non_empty_out_dir(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        await evaluate(make_env(), None, {"g": good_agent}, out_dir=tmp_path)
    assert os.listdir(tmp_path) == ["keep.txt"]


async def test_concurrency_limit_is_exact_over_all_agents() -> None:
    in_flight = peak = 0

    async def tracked(ctx: silo.AgentContext) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        in_flight -= 1
        return "ok"

    summary = await evaluate(make_env(), None, {"a": tracked, "b": tracked}, runs=5, concurrency=3)
    assert summary.finished == 20 and peak == 3


async def test_limits_are_applied_per_rollout() -> None:
    async def chatty(ctx: silo.AgentContext) -> Any:
        for _ in range(10):
            await ctx.call_tool("get_item", {"itemId": "A"})
        return "done"

    summary = await evaluate(make_env(), ["T-1"], {"c": chatty}, runs=2, max_tool_calls=3)
    stats = summary.agent("c")
    assert stats.termination_reasons == {"max_tool_calls": 2}
    assert stats.mean_tool_calls == 3
    assert summary.config["maxToolCalls"] == 3
