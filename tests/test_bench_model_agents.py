"""bench_model_agents compares like with like: both agents play the same conversation."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.testing import ScriptedModelServer
from tests.peers import extra

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_model_agents.py"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setattr(sys, "path", list(sys.path))  # the benchmark adds its own directory
    spec = importlib.util.spec_from_file_location("_bench_model_agents", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def conversation(result: silo.RunResult) -> list[Any]:
    keep = {"model_step": ("usage", "message"), "tool_call": ("tool", "input")}
    return [
        [e["type"], *(e[k] for k in keep[e["type"]])] for e in result.trace if e["type"] in keep
    ]


@extra("openai")
@pytest.mark.anyio
async def test_the_plain_agent_replays_the_model_conversation(
    anyio_backend: str, bench: ModuleType
) -> None:
    async with ScriptedModelServer(bench.play) as server:
        model = agents.openai_chat("scripted", base_url=server.base_url)
        _, (modelled,) = await bench.rollouts(model, 1, 1)
    _, (plain,) = await bench.rollouts(bench.plain, 1, 1)
    assert conversation(modelled) == conversation(plain)
    assert len(conversation(plain)) == bench.TURNS * 2 - 1
    assert (modelled.input_tokens, modelled.output_tokens) == (
        plain.input_tokens,
        plain.output_tokens,
    )
