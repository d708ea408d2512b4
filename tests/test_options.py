"""silo.RunOptions: how a rollout runs, one value through every entry point, keywords as sugar."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

import silo_async as silo
from silo_async._episode import open_episode
from silo_async._options import resolve_options

from .worlds import ENV

pytestmark = pytest.mark.anyio

LOOKUP = {"customerId": "CUS-001"}
#: Every option at once: a limit the agent meets, a fault every call meets.
OPTIONS = silo.RunOptions(limits=silo.Limits(max_tool_calls=2, timeout=30), faults="unavailable@1")


async def _three_calls(ctx: silo.AgentContext) -> str:
    for _ in range(3):  # the third is beyond the limit
        await ctx.call_tool("get_customer", LOOKUP)
    return "3"


def _how_it_ran(result: silo.RunResult) -> tuple[Any, ...]:
    return (
        result.termination_reason,
        result.tool_calls,
        result.config,
        result.injected_faults,
        result.recovered_faults,
    )


def test_options_are_a_checked_frozen_value_with_the_defaults_of_run() -> None:
    assert silo.RunOptions() == silo.RunOptions(limits=silo.Limits(), faults=None, user=None)
    assert OPTIONS.faults == silo.Faults.parse("unavailable@1")  # a SPEC is read, seed 0
    with pytest.raises(TypeError, match=r"silo\.Limits"):
        silo.RunOptions(limits={"max_tool_calls": 3})  # type: ignore[arg-type]
    with pytest.raises(silo.SiloError) as bad:
        silo.RunOptions(faults="nonsense@@")
    assert bad.value.code == "faults_invalid"
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        OPTIONS.faults = None  # type: ignore[misc]


def test_options_or_keywords_but_not_both() -> None:
    assert resolve_options(None, max_tool_calls=2, timeout=30, faults="unavailable@1") == OPTIONS
    assert resolve_options(OPTIONS) is OPTIONS
    assert resolve_options(OPTIONS, max_tool_calls=100, timeout=120.0) is OPTIONS  # defaults
    with pytest.raises(TypeError, match=r"not both \(got options= and limits=, faults=\)"):
        resolve_options(OPTIONS, timeout=5, faults="unavailable@1")
    with pytest.raises(TypeError, match=r"got options= and user="):
        resolve_options(OPTIONS, user=lambda task: silo.ScriptedUser.from_task(task))
    with pytest.raises(TypeError, match=r"silo\.RunOptions"):
        resolve_options({"limits": silo.Limits()})  # type: ignore[arg-type]


async def test_run_and_run_many_take_options_as_the_keywords_would_be() -> None:
    by_keywords = await silo.run(
        ENV, "TASK-BLOCK", _three_calls, max_tool_calls=2, timeout=30, faults="unavailable@1"
    )
    by_options = await silo.run(ENV, "TASK-BLOCK", _three_calls, options=OPTIONS)
    assert _how_it_ran(by_options) == _how_it_ran(by_keywords)
    assert _how_it_ran(by_options) == (
        "max_tool_calls",
        2,
        {"maxToolCalls": 2, "timeoutMs": 30000, "tokenLimit": None},
        2,
        0,
    )
    many = await silo.run_many(ENV, ["TASK-BLOCK"], _three_calls, runs=2, options=OPTIONS)
    assert [_how_it_ran(r) for r in many] == [_how_it_ran(by_options)] * 2
    with pytest.raises(TypeError, match="not both"):
        await silo.run(ENV, "TASK-BLOCK", _three_calls, options=OPTIONS, max_tool_calls=5)


async def test_a_served_episode_runs_as_its_options_say() -> None:
    # silo.episode keeps its own keywords; the servers open theirs from one RunOptions
    async with open_episode(ENV, "TASK-BLOCK", OPTIONS) as ep:
        first = await ep.call_tool("get_customer", LOOKUP)  # the fault answers instead
        second = await ep.call_tool("get_customer", LOOKUP)
        beyond = await ep.call_tool("get_customer", LOOKUP)
    assert first.output["code"] == second.output["code"] == "unavailable"
    assert beyond.output["code"] == "limit_exceeded"
    assert ep.result is not None and ep.result.injected_faults == 2


async def test_an_eval_and_its_baseline_run_as_the_options_say(tmp_path: Path) -> None:
    summary = await silo.evaluate(
        ENV,
        ["TASK-BLOCK"],
        {"three": _three_calls},
        runs=1,
        options=OPTIONS,
        baseline=True,
        out_dir=tmp_path / "eval",
        report=False,
    )
    lines = (tmp_path / "eval" / "runs" / "index.jsonl").read_text().splitlines()
    runs = {bool(json.loads(line).get("baseline")): json.loads(line) for line in lines}
    assert set(runs) == {False, True}
    for baseline, row in runs.items():
        result = json.loads((tmp_path / "eval" / row["runDir"] / "result.json").read_text())
        assert result["terminationReason"] == "max_tool_calls" and result["toolCalls"] == 2
        assert result["injectedFaults"] == (0 if baseline else 2)
    plan = json.loads((tmp_path / "eval" / "eval.json").read_text())
    assert plan["limits"]["maxToolCalls"] == 2 and summary.fault_plan is not None
