"""Exact tokens and policy versions on model steps (token fidelity).

The real openai SDK talks to a ScriptedModelServer speaking vLLM's documented extension: a
request with ``return_token_ids: true`` gets ``prompt_token_ids`` beside ``choices`` and each
choice's ``token_ids``; ``logprobs: true`` gets ``choices[].logprobs.content[].logprob``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async._episode import open_episode
from silo_async.export import trajectories
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall

from .peers import extra
from .worlds import ENV

pytestmark = pytest.mark.anyio

BLOCK = ToolCall("block_customer", {"customerId": "CUS-001"}, id="call_block")
TOKENS = [
    Reply(
        tool_calls=[BLOCK],
        prompt_token_ids=[151644, 872, 198],
        token_ids=[7, 8, 9],
        logprobs=[-0.25, -1.5, 0.0],
    ),
    Reply(text="Blocked CUS-001.", prompt_token_ids=[151644, 872, 198, 7, 8, 9, 42]),
]


def steps(result: silo.RunResult) -> list[dict[str, Any]]:
    return [e for e in result.trace if e["type"] == "model_step"]


@extra("openai")
async def test_token_ids_are_asked_with_vllms_fields_and_recorded_as_sent() -> None:
    with ScriptedModelServer(TOKENS) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url, token_ids=True)
        result = await silo.run(ENV, "TASK-BLOCK", agent)
    assert result.passed
    for request in server.requests:
        assert request.body["return_token_ids"] is True
        assert request.body["logprobs"] is True
    first, second = steps(result)
    assert first["promptTokenIds"] == [151644, 872, 198]
    assert first["completionTokenIds"] == [7, 8, 9]
    assert first["logprobs"] == [-0.25, -1.5, 0.0]
    # What the server did not send is null, and the key is there all the same.
    assert second["promptTokenIds"] == [151644, 872, 198, 7, 8, 9, 42]
    assert second["completionTokenIds"] is None
    assert second["logprobs"] is None


@extra("openai")
async def test_a_server_that_sends_no_tokens_leaves_the_three_keys_null() -> None:
    raw = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Done."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    with ScriptedModelServer([raw]) as server:
        agent = agents.openai_chat("m", base_url=server.base_url, token_ids=True)
        result = await silo.run(ENV, "TASK-BLOCK", agent)
    (step,) = steps(result)
    assert {k: step[k] for k in ("promptTokenIds", "completionTokenIds", "logprobs")} == {
        "promptTokenIds": None,
        "completionTokenIds": None,
        "logprobs": None,
    }


@extra("openai")
async def test_a_raw_vllm_body_is_recorded_exactly_never_retokenised() -> None:
    raw = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "Qwen/Qwen3-8B",
        "prompt_token_ids": [1, 2, 3, 4],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok"},
                "finish_reason": "stop",
                "token_ids": [1000, 17],
                "logprobs": {
                    "content": [
                        {"token": "ok", "logprob": -0.0001, "bytes": None, "top_logprobs": []},
                        {"token": "<|im_end|>", "logprob": -2.5e-07, "top_logprobs": []},
                    ]
                },
            }
        ],
        "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6},
    }
    with ScriptedModelServer([raw]) as server:
        agent = agents.openai_chat("Qwen/Qwen3-8B", base_url=server.base_url, token_ids=True)
        result = await silo.run(ENV, "TASK-BLOCK", agent)
    (step,) = steps(result)
    assert step["promptTokenIds"] == [1, 2, 3, 4]
    assert step["completionTokenIds"] == [1000, 17]
    assert step["logprobs"] == [-0.0001, -2.5e-07]


@extra("openai")
async def test_without_token_ids_nothing_is_asked_and_no_key_is_recorded() -> None:
    with ScriptedModelServer(TOKENS) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url)
        result = await silo.run(ENV, "TASK-BLOCK", agent)
    for request in server.requests:
        assert "return_token_ids" not in request.body and "logprobs" not in request.body
    for step in steps(result):
        assert not {"promptTokenIds", "completionTokenIds", "logprobs", "policyVersion"} & set(step)


@extra("openai")
async def test_the_scripted_server_sends_tokens_only_when_asked() -> None:
    import openai

    with ScriptedModelServer(TOKENS * 2) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x")
        async with client:
            plain = await client.chat.completions.create(model="m", messages=[])
            asked = await client.chat.completions.create(
                model="m", messages=[], logprobs=True, extra_body={"return_token_ids": True}
            )
    assert plain.choices[0].logprobs is None
    assert "prompt_token_ids" not in (plain.model_extra or {})
    assert asked.model_extra == {"prompt_token_ids": [151644, 872, 198, 7, 8, 9, 42]}
    assert asked.choices[0].model_extra == {"token_ids": None}


@extra("openai")
async def test_policy_version_stamps_every_step_as_a_string() -> None:
    with ScriptedModelServer(TOKENS) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url, policy_version=12)
        result = await silo.run(ENV, "TASK-BLOCK", agent)
    assert [s["policyVersion"] for s in steps(result)] == ["12", "12"]


async def hand_written(ctx: silo.AgentContext) -> str:
    ctx.record_model_step(
        model="mine",
        input_tokens=3,
        output_tokens=2,
        prompt_token_ids=[5, 6, 7],
        completion_token_ids=[8, 9],
        logprobs=[-0.5, -0.125],
    )
    await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
    ctx.record_model_step(model="mine", policy_version="step-40")
    ctx.record_model_step(model="mine")
    return "Blocked CUS-001."


async def test_any_agent_records_tokens_and_the_run_stamps_steps_without_a_version() -> None:
    result = await silo.run(
        ENV, "TASK-BLOCK", hand_written, options=silo.RunOptions(policy_version=3)
    )
    first, second, third = steps(result)
    assert first["promptTokenIds"] == [5, 6, 7]
    assert first["completionTokenIds"] == [8, 9]
    assert first["logprobs"] == [-0.5, -0.125]
    assert [first["policyVersion"], second["policyVersion"], third["policyVersion"]] == [
        "3",
        "step-40",
        "3",
    ]
    assert "promptTokenIds" not in third  # a step given none has none of the three keys


async def test_an_episode_records_tokens_too() -> None:
    # episodes opened by the servers take one RunOptions, policy_version included
    how = silo.RunOptions(policy_version="v9")
    async with open_episode(ENV, "TASK-BLOCK", how) as ep:
        ep.record_model_step(completion_token_ids=[4, 2])
        await ep.call_tool("block_customer", {"customerId": "CUS-001"})
        result = await ep.finish("Blocked CUS-001.")
    (step,) = steps(result)
    assert step["completionTokenIds"] == [4, 2]
    assert step["promptTokenIds"] is None and step["logprobs"] is None
    assert step["policyVersion"] == "v9"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"prompt_token_ids": [1, "2"]}, "prompt_token_ids"),
        ({"completion_token_ids": "123"}, "completion_token_ids"),
        ({"logprobs": [-0.5, None]}, "logprobs"),
        ({"completion_token_ids": [True]}, "completion_token_ids"),
    ],
)
async def test_token_fields_that_are_not_lists_of_numbers_are_refused(
    fields: dict[str, Any], message: str
) -> None:
    async def agent(ctx: silo.AgentContext) -> None:
        ctx.record_model_step(**fields)

    result = await silo.run(ENV, "TASK-BLOCK", agent)
    assert result.termination_reason == "agent_error"
    assert result.error is not None and "TypeError" in result.error


@extra("openai")
async def test_chat_export_gives_assistant_messages_their_tokens(tmp_path: Path) -> None:
    with ScriptedModelServer(TOKENS) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url, token_ids=True)
        result = await silo.run(ENV, "TASK-BLOCK", agent, runs_dir=tmp_path / "runs")
    assert result.run_dir is not None
    (line,) = trajectories([str(result.run_dir)], environment=ENV, cwd=tmp_path)
    assistant = [m for m in line["messages"] if m["role"] == "assistant"]
    assert assistant[0]["tokenIds"] == [7, 8, 9]
    assert assistant[0]["logprobs"] == [-0.25, -1.5, 0.0]
    # The last reply recorded none: its message has neither key.
    assert assistant[-1]["content"] == "Blocked CUS-001."
    assert "tokenIds" not in assistant[-1] and "logprobs" not in assistant[-1]


@extra("openai")
async def test_a_resumed_model_step_keeps_its_tokens(tmp_path: Path) -> None:
    """A replayed step (an eval resumed) is recorded again with the tokens it had."""
    from silo_async.agents._loop import recorded_turn
    from silo_async.agents._replay import RecordedStep

    with ScriptedModelServer(TOKENS) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url, token_ids=True)
        result = await silo.run(ENV, "TASK-BLOCK", agent)
    first = steps(result)[0]
    turn = recorded_turn(RecordedStep(first))
    assert turn.tokens is not None
    assert turn.tokens.completion_token_ids == [7, 8, 9]


def by_turn(request: ModelRequest) -> Reply:
    return TOKENS[request.turn]


@extra("openai")
async def test_eval_policy_version_reaches_every_rollout_and_eval_json(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    with ScriptedModelServer(by_turn) as server:
        agent = agents.openai_chat("scripted", base_url=server.base_url, token_ids=True)
        summary = await silo.evaluate(
            ENV,
            ["TASK-BLOCK"],
            {"m": agent},
            runs=2,
            out_dir=out,
            options=silo.RunOptions(policy_version="ckpt-7"),
        )
    assert summary.finished == 2
    assert json.loads((out / "eval.json").read_text())["policyVersion"] == "ckpt-7"
    for line in trajectories(eval_id=str(out), environment=ENV, cwd=tmp_path):
        run_dir = out / "runs" / line["runId"]
        events = [json.loads(x) for x in (run_dir / "trace.jsonl").read_text().splitlines()]
        versions = [e["policyVersion"] for e in events if e["type"] == "model_step"]
        assert versions == ["ckpt-7", "ckpt-7"]
