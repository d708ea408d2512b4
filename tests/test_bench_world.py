"""bench_world times what the runner does: its diff is the runner's state diff, byte for byte."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import silo_async as silo
from silo_async._jsonutil import pack

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_world.py"

pytestmark = pytest.mark.anyio


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_world", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_benchmarks_diff_is_the_runners(tmp_path: Path) -> None:
    bench = _bench()
    env = await bench.load(tmp_path, "erp")
    worlds: list[Any] = []

    def capture() -> Any:
        worlds.append(env.create_state())
        return worlds[-1]

    captured = silo.Environment(
        name="erp",
        create_state=capture,
        bind=env.bind_tools,
        verifiers=env.verifiers,
        tasks=env.tasks,
    )
    result = await silo.run(captured, "TASK-013", bench.solver_of("erp"))
    assert result.passed
    initial = env.create_state()
    assert bench.runner_diff(pack(initial), initial, worlds[0]) == result.state_diff_json
    assert json.loads(bench.runner_diff(pack(initial), initial, initial)) == {
        "scalars": [],
        "collections": {},
    }


def test_the_benchmark_times_scripted_turns_and_tool_calls() -> None:
    costs = _bench().turn_costs(1)
    assert set(costs) == {"asyncio", "trio"}
    for cost in costs.values():
        assert cost["scripted_turn_us"] > 0 and cost["tool_call_us"] > 0


async def test_the_benchmark_grades_support_with_the_conversation(tmp_path: Path) -> None:
    # Support's verifiers also read what the customer was told: the graded phase must hand
    # them the solver's conversation, or the refusals would be timed failing.
    bench = _bench()
    env = await bench.load(tmp_path, "support")
    finals = await bench.final_worlds(env, bench.solver_of("support"))
    for task in env.tasks:
        final, answer, conversation = finals[task.id]
        assert conversation and conversation[-1]["ended"], task.id
        ctx = silo.VerifierContext(
            agent_output=answer, task=task, output=answer, conversation=conversation
        )
        outcome = await env.verifier_for(task).evaluate(final, env.create_state(), ctx)
        assert outcome.passed, (task.id, outcome)
