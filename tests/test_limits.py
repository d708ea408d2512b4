"""silo.Limits: one value for a rollout's budgets, and how limits= meets the keyword form."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import silo_async as silo
from silo_async._limits import resolve_limits
from silo_async.integrations.trl import environment_factory, reward
from silo_async.testing import ScriptedAgent, check_environment

from .worlds import ENV

#: The environment restricted to its one task a lone block_customer call solves.
ENV_BLOCK = silo.Environment(
    name=ENV.name,
    create_state=ENV.create_state,
    tools=ENV.tools,
    verifiers=[v for v in ENV.verifiers if v.task_id == "TASK-BLOCK"],
    tasks=[ENV.task("TASK-BLOCK")],
)


def test_limits_is_a_checked_frozen_value() -> None:
    limits = silo.Limits(max_tool_calls=7, timeout=2.5, token_limit=100)
    assert limits.config() == {"maxToolCalls": 7, "timeoutMs": 2500, "tokenLimit": 100}
    assert silo.Limits(timeout=None).seconds == math.inf
    with pytest.raises(ValueError, match="max_tool_calls"):
        silo.Limits(max_tool_calls=-1)
    with pytest.raises(ValueError, match="timeout"):
        silo.Limits(timeout=0)
    with pytest.raises(AttributeError):
        limits.timeout = 3  # type: ignore[misc]


def test_limits_or_keywords_but_not_both() -> None:
    assert resolve_limits(None, 5, None, 9) == silo.Limits(5, None, 9)
    given = silo.Limits(3)
    assert resolve_limits(given) is given
    with pytest.raises(TypeError, match=r"not both \(got limits= and max_tool_calls=, timeout=\)"):
        resolve_limits(given, 5, 10.0)
    with pytest.raises(TypeError, match=r"silo\.Limits"):
        resolve_limits({"max_tool_calls": 3})  # type: ignore[arg-type]


# -- limits= on every signature that takes the keywords --------------------------------------

ONE_CALL = silo.Limits(max_tool_calls=1, timeout=30, token_limit=7)
LOOKUP = {"customerId": "CUS-001"}


async def _two_calls(ctx: silo.AgentContext) -> str:
    await ctx.call_tool("get_customer", LOOKUP)
    await ctx.call_tool("get_customer", LOOKUP)  # beyond the limit
    return "2"


@pytest.mark.anyio
async def test_run_run_many_and_evaluate_take_limits() -> None:
    one = await silo.run(ENV, "TASK-ANSWER", _two_calls, limits=ONE_CALL)
    assert (one.termination_reason, one.tool_calls) == ("max_tool_calls", 1)
    assert one.config == {"maxToolCalls": 1, "timeoutMs": 30000, "tokenLimit": 7}
    many = await silo.run_many(ENV, "TASK-ANSWER", _two_calls, runs=2, limits=ONE_CALL)
    assert [r.termination_reason for r in many] == ["max_tool_calls"] * 2
    assert all(r.config == one.config for r in many)
    summary = await silo.evaluate(ENV, ["TASK-ANSWER"], {"a": _two_calls}, limits=ONE_CALL)
    assert summary.records[0].termination_reason == "max_tool_calls"
    assert {k: summary.config[k] for k in one.config} == one.config


@pytest.mark.anyio
async def test_episode_takes_limits() -> None:
    async with silo.episode(ENV, "TASK-ANSWER", limits=ONE_CALL) as ep:
        await ep.call_tool("get_customer", LOOKUP)
        refused = await ep.call_tool("get_customer", LOOKUP)
    assert refused.output["code"] == "limit_exceeded"
    assert ep.result is not None and ep.result.config == ONE_CALL.config()


@pytest.mark.anyio
async def test_check_environment_gives_the_solver_the_limits() -> None:
    solver = ScriptedAgent([("block_customer", LOOKUP)])
    assert (await check_environment(ENV_BLOCK, solver=solver)).ok
    report = await check_environment(ENV_BLOCK, solver=solver, limits=silo.Limits(max_tool_calls=0))
    assert [f.code for f in report.findings if f.level == "error"] == ["solver_failed"]


def test_the_trl_factory_takes_limits(tmp_path: Path) -> None:
    cls = environment_factory(ENV, runs_dir=tmp_path, limits=silo.Limits(max_tool_calls=1))
    shop = cls()
    shop.reset(task="TASK-ANSWER")
    shop.get_customer(customerId="CUS-001")
    assert "Tool call limit exceeded (1)" in shop.get_customer(customerId="CUS-001")
    reward(["2"], [shop])
    (written,) = tmp_path.iterdir()
    config = json.loads((written / "run.json").read_text())["config"]
    assert config == {"maxToolCalls": 1, "timeoutMs": 120000, "tokenLimit": None}


@pytest.mark.anyio
async def test_limits_and_a_keyword_together_are_refused_before_anything_runs() -> None:
    both = r"not both \(got limits= and max_tool_calls=\)"
    with pytest.raises(TypeError, match=both):
        await silo.run(ENV, "TASK-ANSWER", _two_calls, limits=ONE_CALL, max_tool_calls=5)
    with pytest.raises(TypeError, match=both):
        await silo.run_many(ENV, "TASK-ANSWER", _two_calls, limits=ONE_CALL, max_tool_calls=5)
    with pytest.raises(TypeError, match=both):
        silo.episode(ENV, "TASK-ANSWER", limits=ONE_CALL, max_tool_calls=5)
    with pytest.raises(TypeError, match=both):
        await silo.evaluate(ENV, None, {"a": _two_calls}, limits=ONE_CALL, max_tool_calls=5)
    with pytest.raises(TypeError, match=both):
        environment_factory(ENV, limits=ONE_CALL, max_tool_calls=5)
    with pytest.raises(TypeError, match=r"got limits= and timeout="):
        await check_environment(ENV, limits=ONE_CALL, timeout=5)
    # A keyword repeating its own default beside limits= is not a conflict.
    await silo.run(ENV, "TASK-ANSWER", _two_calls, limits=ONE_CALL, max_tool_calls=100)
    environment_factory(ENV, limits=ONE_CALL, timeout=None)  # the factory's default
