"""An eval says when its numbers rest on too little evidence, and tells no small lies.

Rates count valid rollouts only, so a task whose every rollout was invalid shows no failure:
a line above the table (terminal, ``summary.md``, ``report.html``, ``summary.json``) says so,
and so it does when invalid rollouts exceed a share. A lone agent is better than no one, so no
cell is marked; counts take their singular; a partial eval says plainly what it compared.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

import silo_async as silo
from silo_async.cli._eval_text import summary_text
from silo_async.eval import evaluate, read_summary

from .test_eval_support import good_agent, make_env

pytestmark = pytest.mark.anyio


async def breaks_b(ctx: silo.AgentContext) -> str:
    """Solves T-1; on T-2 meets the broken tool first, so every T-2 rollout is invalid."""
    if ctx.task.endswith("B."):
        await ctx.call_tool("explode", {})
    return await good_agent(ctx)


def _breaks_first() -> silo.Agent:
    """Solves everything; only its very first rollout meets the broken tool (1 of 8)."""
    calls = 0

    async def agent(ctx: silo.AgentContext) -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await ctx.call_tool("explode", {})
        return await good_agent(ctx)

    return agent


async def test_a_task_without_a_valid_rollout_is_named_above_every_table(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    summary = await evaluate(
        make_env(), None, {"solver": breaks_b, "good": good_agent}, runs=3, out_dir=out
    )
    solver = summary.agent("solver")
    assert (solver.passes, solver.valid, solver.pass_rate) == (3, 3, 1.0)  # looks perfect
    (warning,) = summary.warnings()
    assert warning == (
        "Warning: solver has no valid rollout on 1 of 2 tasks (T-2): its numbers cover only the "
        "other 1; 3 of 6 rollouts (50%) are invalid (3 environment_fault) and in none of its "
        "numbers."
    )
    text = summary_text(summary, tmp_path)
    assert text.index(warning) < text.index("rank  agent")
    assert f"> **{warning}**" in (out / "summary.md").read_text()
    assert warning in (out / "report.html").read_text()
    assert read_summary(out)["warnings"] == [warning]


async def test_invalid_rollouts_above_a_share_are_a_warning(tmp_path: Path) -> None:
    summary = await evaluate(make_env(), None, {"a": _breaks_first()}, runs=4, concurrency=1)
    assert summary.warnings() == [
        "Warning: a: 1 of 8 rollouts (12%) are invalid (1 environment_fault) and in none of its "
        "numbers."
    ]
    clean = await evaluate(make_env(), None, {"a": good_agent}, runs=4)
    assert clean.warnings() == [] and clean.to_dict()["warnings"] == []


async def test_an_agent_with_no_valid_rollout_at_all_has_no_score(tmp_path: Path) -> None:
    async def always_breaks(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("explode", {})
        return "done"

    summary = await evaluate(make_env(), None, {"x": always_breaks, "y": good_agent}, runs=2)
    assert summary.warnings() == [
        "Warning: x has no valid rollout on any task: 4 of 4 rollouts (100%) are invalid "
        "(4 environment_fault) and in none of its numbers; it has no score."
    ]


async def test_a_lone_agent_is_better_than_no_one(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    env = make_env()
    summary = await evaluate(env, "T-1", {"solo": good_agent}, runs=1, out_dir=out)
    assert [row.best for row in summary.comparison.rows] == [None]
    assert summary.comparison.overall_best is None
    text = summary_text(summary, tmp_path)
    assert " *" not in text and "better agent" not in text
    md = (out / "summary.md").read_text()
    assert "1 task · 1 agent · 1 run each" in md and "**" not in md.split("## Side by side")[1]
    assert "best in bold" not in md
    html = (out / "report.html").read_text()
    assert "1 task · 1 agent · 1 run each" in html


async def test_two_agents_are_still_compared(tmp_path: Path) -> None:
    async def half(ctx: silo.AgentContext) -> str:
        return "nothing"

    summary = await evaluate(make_env(), None, {"a": good_agent, "b": half}, runs=1)
    assert summary.comparison.overall_best == "a"
    assert "* = better agent" in summary_text(summary, Path.cwd())


async def test_a_partial_eval_says_plainly_what_it_compared(tmp_path: Path) -> None:
    summary = await evaluate(make_env(), None, {"a": good_agent, "b": good_agent}, runs=3)
    partial = attrs.evolve(summary, complete=False, cancelled=True, compared={"T-1": 3, "T-2": 1})
    note = partial.partial_note() or ""
    assert "each agent's first 1 to 3 runs (varying by task) of 2 tasks (8 rollouts)" in note
    one = attrs.evolve(partial, compared={"T-1": 2})
    assert "each agent's first 2 runs of 1 task (4 rollouts)" in (one.partial_note() or "")
    none = attrs.evolve(partial, compared={})
    assert "no task (no task has a finished rollout of every agent)" in (none.partial_note() or "")
