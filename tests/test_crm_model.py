"""The shipped scripted model (examples/agents/crm_model.py) bills a conversation the same
tokens whatever else its server answered: two identical evals against one server are equal.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.testing import ScriptedModelServer

from .peers import require_module

pytestmark = pytest.mark.anyio

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "agents"


@pytest.fixture
def play(monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setattr(sys, "path", [str(EXAMPLES), *sys.path])
    from crm_model import play as scripted

    return scripted


async def test_two_identical_evals_bill_the_same_tokens(tmp_path: Path, play: object) -> None:
    require_module("openai")
    project = await silo.Project.open(tmp_path)
    await project.environments.create("crm", template="crm")
    env = silo.load_environment("crm", tmp_path)

    async def one_eval(agent: silo.Agent) -> list[tuple[int, int, int]]:
        summary = await silo.evaluate(env, "TASK-001", {"model": agent}, runs=3, concurrency=3)
        return sorted((r.model_steps, r.input_tokens, r.output_tokens) for r in summary.records)

    with ScriptedModelServer(play) as server:  # type: ignore[arg-type]
        agent = agents.openai_chat("scripted", base_url=server.base_url, api_key="unused")
        first = await one_eval(agent)
        second = await one_eval(agent)  # the server's request count has moved on
        alone = await silo.run(env, "TASK-001", agent)
    assert first == second
    assert len(set(first)) == 1 and first[0][0] == 4  # every conversation alike, 4 steps
    assert (alone.model_steps, alone.input_tokens, alone.output_tokens) == first[0]
    assert alone.passed
