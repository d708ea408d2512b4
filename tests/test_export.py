"""export_runs / trajectories: chat lines rebuilt from traces, model and scripted agents."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.export import (
    SKIP_DAMAGED,
    SKIP_INCOMPLETE,
    SKIP_TRACE_CUT,
    EvalNotFoundError,
    RunNotFoundError,
    chat_messages,
    export_runs,
    trajectories,
)

from .export_support import check_line, pairs
from .worlds import ENV, blocker

pytestmark = pytest.mark.anyio

READ = {"id": "call_a1", "name": "get_customer", "input": {"customerId": "CUS-001"}}
MISSING = {"id": "call_a2", "name": "get_customer", "input": {"customerId": "CUS-404"}}
BLOCK = {"id": "call_b1", "name": "block_customer", "input": {"customerId": "CUS-001"}}


def reply(content: str | None, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "toolCalls": list(calls)}


async def model_like(ctx: silo.AgentContext) -> str:
    """Records each reply as a model_step, then runs its calls in order: a model loop's shape."""
    replies = [reply("Let me look.", READ, MISSING), reply(None, BLOCK), reply("Blocked CUS-001.")]
    for n, message in enumerate(replies):
        ctx.record_model_step(model="m", input_tokens=100 + n, output_tokens=10, message=message)
        for call in message["toolCalls"]:
            await ctx.call_tool(call["name"], call["input"])
    return "Blocked CUS-001."


async def test_a_model_agents_replies_become_its_assistant_messages(tmp_path: Path) -> None:
    result = await silo.run(ENV, "TASK-BLOCK", model_like, runs_dir=tmp_path / "runs")
    assert result.passed and result.run_dir is not None
    stream = trajectories([str(result.run_dir)], environment=ENV, cwd=tmp_path)
    (line,) = list(stream)
    found = check_line(line, result.run_dir)
    assert [p[0] for p in found] == ["call_a1", "call_a2", "call_b1"]  # the model's own ids
    messages = line["messages"]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert messages[1]["content"] == "Let me look." and len(messages[1]["tool_calls"]) == 2
    assert json.loads(messages[3]["content"])["code"] == "not_found"  # errors are observations
    assert messages[4] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_b1",
                "type": "function",
                "function": {"name": "block_customer", "arguments": '{"customerId":"CUS-001"}'},
            }
        ],
    }
    # The last reply is the answer: it is not repeated as a second final message.
    assert messages[-1] == {"role": "assistant", "content": "Blocked CUS-001."}
    assert line["usage"] == {"inputTokens": 303, "outputTokens": 30, "modelSteps": 3}
    tools = {t["function"]["name"]: t["function"] for t in line["tools"]}
    assert tools["get_customer"]["description"] == "Read a customer."
    assert tools["get_customer"]["parameters"]["required"] == ["customerId"]
    assert stream.stats.written == 1 and stream.stats.skipped == {}


async def test_calls_never_executed_are_dropped_from_the_reply(tmp_path: Path) -> None:
    result = await silo.run(
        ENV, "TASK-BLOCK", model_like, runs_dir=tmp_path / "runs", max_tool_calls=1
    )
    assert result.termination_reason == "max_tool_calls" and result.run_dir is not None
    (line,) = list(trajectories([str(result.run_dir)], environment=ENV, cwd=tmp_path))
    found = check_line(line, result.run_dir)
    assert [p[0] for p in found] == ["call_a1"]  # the refused call_a2 never reached the world
    assert [m["role"] for m in line["messages"]] == ["user", "assistant", "tool"]
    assert line["messages"][1]["content"] == "Let me look."


async def test_a_scripted_agents_calls_each_become_a_reply(tmp_path: Path) -> None:
    result = await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=tmp_path / "runs")
    assert result.run_dir is not None
    (line,) = list(trajectories([str(result.run_dir)], environment=ENV, cwd=tmp_path))
    found = check_line(line, result.run_dir)
    assert [(p[0], p[1]) for p in found] == [
        ("call_1", "get_customer"),
        ("call_2", "block_customer"),
    ]
    roles = [m["role"] for m in line["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert all(m["content"] is None for m in line["messages"][1:5:2])
    assert line["messages"][-1] == {"role": "assistant", "content": "done"}
    assert line["usage"] == {"inputTokens": 0, "outputTokens": 0, "modelSteps": 0}


async def crashing(ctx: silo.AgentContext) -> str:
    ctx.set_output("halfway")
    await ctx.call_tool("get_customer", {"customerId": "CUS-001"})
    raise RuntimeError("model went away")


async def test_a_crashed_agents_rollout_is_exported_with_its_reason(tmp_path: Path) -> None:
    result = await silo.run(ENV, "TASK-BLOCK", crashing, runs_dir=tmp_path / "runs")
    assert result.termination_reason == "agent_error" and result.run_dir is not None
    (line,) = list(trajectories([str(result.run_dir)], environment=ENV, cwd=tmp_path))
    check_line(line, result.run_dir)
    assert line["terminationReason"] == "agent_error" and line["passed"] is False
    assert line["output"] == "halfway"
    assert line["messages"][-1] == {"role": "assistant", "content": "halfway"}


async def test_structured_output_closes_the_conversation_as_json_text(tmp_path: Path) -> None:
    async def answers(ctx: silo.AgentContext) -> Any:
        return {"count": 2}

    result = await silo.run(ENV, "TASK-ANSWER", answers, runs_dir=tmp_path / "runs")
    assert result.run_dir is not None
    (line,) = list(trajectories([str(result.run_dir)], environment=ENV, cwd=tmp_path))
    assert line["output"] == {"count": 2}
    assert line["messages"] == [
        {"role": "user", "content": "How many customers are there?"},
        {"role": "assistant", "content": '{"count":2}'},
    ]


def test_text_with_calls_keeps_both_and_the_answer_follows() -> None:
    events: list[dict[str, Any]] = [
        {"type": "model_step", "message": reply("Checking.", READ)},
        {"type": "tool_call", "callId": 1, "tool": "get_customer", "input": READ["input"]},
        {"type": "tool_result", "callId": 1, "tool": "get_customer", "output": "plain text"},
    ]
    messages = chat_messages("Do it.", events, "Final answer.")
    assert messages[2] == {"role": "tool", "tool_call_id": "call_a1", "content": "plain text"}
    assert messages[-1] == {"role": "assistant", "content": "Final answer."}
    assert len(pairs(messages)) == 1


def test_a_call_the_reply_did_not_announce_gets_a_reply_of_its_own() -> None:
    events: list[dict[str, Any]] = [
        {"type": "model_step", "message": reply("Reading.", READ)},
        {"type": "tool_call", "callId": 1, "tool": "block_customer", "input": BLOCK["input"]},
        {"type": "tool_result", "callId": 1, "tool": "block_customer", "output": {"ok": True}},
    ]
    messages = chat_messages("Do it.", events, None)
    assert messages[1] == {"role": "assistant", "content": "Reading."}  # its call never ran
    assert messages[2]["tool_calls"][0]["id"] == "call_1"
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}'}
    assert len(messages) == 4


async def test_filters_and_order(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    good = await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=runs)
    bad = await silo.run(ENV, "TASK-ANSWER", blocker, runs_dir=runs)
    assert good.passed and not bad.passed
    ids = [str(bad.run_dir), str(good.run_dir)]
    both = list(trajectories(ids, environment=ENV, cwd=tmp_path))
    assert [line["runId"] for line in both] == [bad.run_id, good.run_id]  # the order given
    passed = trajectories(ids, environment=ENV, cwd=tmp_path, passed_only=True)
    assert [line["runId"] for line in passed] == [good.run_id]
    assert passed.stats.filtered == 1 and passed.stats.written == 1
    rewarded = list(trajectories(ids, environment=ENV, cwd=tmp_path, min_reward=0.5))
    assert [line["runId"] for line in rewarded] == [good.run_id]
    assert list(trajectories(ids, environment=ENV, cwd=tmp_path, min_reward=0.0)) == both
    assert list(trajectories(ids, environment=ENV, cwd=tmp_path, env="SHOP")) == both
    assert list(trajectories(ids, environment=ENV, cwd=tmp_path, env="other")) == []


async def test_unrebuildable_runs_are_counted_and_skipped(tmp_path: Path) -> None:
    runs = tmp_path / ".silo" / "runs"
    made = [await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=runs) for _ in range(4)]
    dirs = [r.run_dir for r in made]
    assert all(d is not None for d in dirs)
    no_result, torn, damaged = dirs[1], dirs[2], dirs[3]
    assert no_result and torn and damaged
    (no_result / "result.json").unlink()
    (no_result / "run.json").unlink()  # as after a kill -9: only the trace is left
    trace = (torn / "trace.jsonl").read_text()
    (torn / "trace.jsonl").write_text(trace[: len(trace) // 2])
    (damaged / "result.json").write_text('{"passed": tru')
    out = io.StringIO()
    stats = export_runs(out=out, environment=ENV, cwd=tmp_path)  # all of .silo/runs
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["runId"] for line in lines] == [made[0].run_id]
    assert stats.written == 1 and stats.skipped_total == 3
    assert stats.skipped == {SKIP_INCOMPLETE: 1, SKIP_TRACE_CUT: 1, SKIP_DAMAGED: 1}
    # Named explicitly, a killed run is found and skipped, not unknown.
    named = trajectories([no_result.name], environment=ENV, cwd=tmp_path)
    assert list(named) == [] and named.stats.skipped == {SKIP_INCOMPLETE: 1}


def test_unknown_ids_raise_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(RunNotFoundError, match="run_missing"):
        export_runs(["run_missing"], out=tmp_path / "x.jsonl", cwd=tmp_path)
    with pytest.raises(EvalNotFoundError, match="eval_missing"):
        export_runs(eval_id="eval_missing", out=tmp_path / "x.jsonl", cwd=tmp_path)
    with pytest.raises(ValueError, match="format"):
        trajectories(format="sft", cwd=tmp_path)
    assert list(tmp_path.iterdir()) == []


async def test_out_file_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    result = await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=tmp_path / ".silo" / "runs")
    out = tmp_path / "train.jsonl"
    stats = export_runs(out=out, environment=ENV, cwd=tmp_path)
    assert stats.written == 1 and json.loads(out.read_text())["runId"] == result.run_id
    # Without the environment (code-first, not in the project), the export fails: the file
    # written before stays as it was and no temporary file is left behind.
    with pytest.raises(silo.SiloError) as failure:
        export_runs(out=out, cwd=tmp_path)
    assert failure.value.code == "environment_not_found"
    assert json.loads(out.read_text())["runId"] == result.run_id
    assert sorted(p.name for p in tmp_path.iterdir()) == [".silo", "train.jsonl"]


async def test_a_run_reached_twice_is_exported_once(tmp_path: Path) -> None:
    runs = tmp_path / ".silo" / "runs"
    made = [await silo.run(ENV, "TASK-BLOCK", blocker, runs_dir=runs) for _ in range(2)]
    first, second = (r.run_dir for r in made)
    assert first is not None and second is not None
    (runs / "run_zz_link").symlink_to(first, target_is_directory=True)  # a second name, beside
    elsewhere = tmp_path / "kept"
    elsewhere.mkdir()
    outside = elsewhere / "run_outside"
    first.rename(outside)
    first.mkdir()  # a run of its own again, for the link
    for name in ("trace.jsonl", "result.json", "state-diff.json", "run.json"):
        (first / name).write_bytes((outside / name).read_bytes())
    (runs / "run_zz_outside").symlink_to(outside, target_is_directory=True)  # not a duplicate
    everything = trajectories(environment=ENV, cwd=tmp_path)  # all of .silo/runs
    ids = [line["runId"] for line in everything]
    assert ids == [made[0].run_id, made[1].run_id, made[0].run_id]  # the outside copy counts
    assert everything.stats.skipped_total == 0
    named = trajectories(
        [str(first), made[0].run_id, str(runs / "run_zz_link"), str(second)],
        environment=ENV,
        cwd=tmp_path,
    )
    assert [line["runId"] for line in named] == [made[0].run_id, made[1].run_id]
    # runs list counts them as the export does: the link beside the run is not a run of its own.
    listed = silo.list_runs(tmp_path)
    assert [i.run_id for i in listed] == sorted([made[0].run_id, made[0].run_id, made[1].run_id])
    assert sorted(i.run_dir.name for i in listed) == [
        first.name, second.name, "run_zz_outside"
    ]  # fmt: skip
