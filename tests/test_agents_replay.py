"""A model agent's interrupted rollout continues from its recorded responses (DESIGN §15).

An eval of the shipped model agents against a ``ScriptedModelServer``; one rollout's run
directory is then cut the way a kill cuts it (its trace stops after some model steps, possibly
halfway through a step's tool calls, its last line half written; no ``result.json``, no
``run.json``), and the eval resumes. The rerun replays the recorded responses — asking the
model only for what was never answered, with the very conversation the model saw the first
time — and its files equal those of the rollout never cut.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async import agents
from silo_async.agents._replay import RecordedStep, parse_recording
from silo_async.eval import evaluate
from silo_async.testing import ModelRequest, Reply, ScriptedModelServer, ToolCall
from tests.peers import by_extra, extra

from .resume_support import same_eval
from .test_eval_support import TASKS, complete_item, get_item, make_env

pytestmark = pytest.mark.anyio


def script(request: ModelRequest) -> Reply:
    """Answers that depend only on the conversation: read, then complete and read, then say."""
    item = request.task.split()[-1].rstrip(".")
    if request.turn == 0:
        return Reply(tool_calls=[ToolCall("get_item", {"itemId": item})], input_tokens=20)
    if request.turn == 1:
        calls = [
            ToolCall("complete_item", {"itemId": item}),
            ToolCall("get_item", {"itemId": item}),
        ]
        return Reply(tool_calls=calls, input_tokens=30, output_tokens=4)
    return Reply(text=f"Completed {item}.", input_tokens=40, output_tokens=6)


def model_agent(provider: str, server: ScriptedModelServer) -> Any:
    if provider == "openai":
        return agents.openai_chat("scripted", base_url=server.base_url)
    return agents.anthropic("scripted", base_url=server.url)


def events(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "trace.jsonl").read_text().splitlines()]


def cut(eval_dir: Path, task: str, keep: int) -> dict[str, Any]:
    """Cut rollout (task, m, 1) after its ``keep``-th tool result, as a kill would."""
    index_path = eval_dir / "runs" / "index.jsonl"
    index = [json.loads(line) for line in index_path.read_text().splitlines()]
    record: dict[str, Any] = next(
        r for r in index if (r["task"], r["agent"], r["run"]) == (task, "m", 1)
    )
    run_dir = eval_dir / record["runDir"]
    lines = (run_dir / "trace.jsonl").read_text().splitlines()
    results = [i for i, line in enumerate(lines) if '"type":"tool_result"' in line]
    kept = lines[: results[keep - 1] + 1]
    torn = lines[results[keep - 1] + 1][:25]  # the next event, half written
    (run_dir / "trace.jsonl").write_text("\n".join(kept) + "\n" + torn)
    for name in ("result.json", "state-diff.json", "run.json"):
        (run_dir / name).unlink()
    index_path.write_text("".join(json.dumps(r) + "\n" for r in index if r is not record))
    (eval_dir / "summary.json").unlink()
    return record


@pytest.mark.parametrize("provider", by_extra("openai", "anthropic"))
@pytest.mark.parametrize(("keep", "replayed"), [(1, 1), (2, 2), (3, 2)])  # tool results kept
async def test_an_interrupted_model_rollout_goes_on_from_its_record(
    tmp_path: Path, provider: str, keep: int, replayed: int
) -> None:
    with ScriptedModelServer(script) as server:
        plan = {"m": model_agent(provider, server)}
        await evaluate(make_env(), None, plan, runs=2, out_dir=tmp_path / "reference")
        await evaluate(make_env(), None, plan, runs=2, out_dir=tmp_path / "ev")
        asked = server.requests
        assert len(asked) == 2 * 2 * 3 * 2
        cut(tmp_path / "ev", "T-1", keep)
        summary = await evaluate(make_env(), None, plan, resume=tmp_path / "ev")
        again = server.requests[len(asked) :]
    assert summary.resumed is not None and (summary.resumed.kept, summary.resumed.rerun) == (3, 1)
    # Only what has no record is asked for (the cut took the recorded step after the last one
    # kept with it), and first with the very conversation the model saw the first time.
    assert [r.turn for r in again] == list(range(replayed, 3))
    assert any(again[0].body == r.body for r in asked)
    same_eval(tmp_path / "reference", tmp_path / "ev")
    rerun = next(r for r in summary.records if (r.task_id, r.run) == ("T-1", 1))
    run_dir = tmp_path / "ev" / str(rerun.run_dir)
    assert json.loads((run_dir / "run.json").read_text())["resumedModelSteps"] == replayed
    trace = events(run_dir)
    assert trace[1]["type"] == "resume" and trace[1]["modelSteps"] == replayed
    steps = [e for e in trace if e["type"] == "model_step"]
    assert [s.get("replayed", False) for s in steps] == [True] * replayed + [False] * (3 - replayed)
    assert not (tmp_path / "ev" / ".resume").exists()


@extra("openai")
async def test_a_record_the_world_disagrees_with_is_run_from_scratch(tmp_path: Path) -> None:
    with ScriptedModelServer(script) as server:
        plan = {"m": model_agent("openai", server)}
        await evaluate(make_env(), ["T-1"], plan, out_dir=tmp_path / "ev")
        asked = len(server.requests)
        cut(tmp_path / "ev", "T-1", 3)

        # The same environment, a tool of it since edited (its data, tasks and verifiers are
        # the plan's: an edit of those is refused before anything runs, DESIGN §23).
        @silo.tool(
            name="get_item", description="Read an item.", input_schema=get_item.spec.input_schema
        )
        def edited_get_item(state: dict[str, Any], args: dict[str, Any]) -> Any:
            return {**state["items"][0], "note": "edited"}

        edited = silo.Environment(
            name="items",
            create_state=make_env().create_state,
            tools=[edited_get_item, complete_item],
            verifiers=make_env().verifiers,
            tasks=TASKS,
        )
        summary = await evaluate(edited, None, plan, resume=tmp_path / "ev")
        assert len(server.requests) - asked == 3  # every response asked for again
    run_dir = tmp_path / "ev" / str(summary.records[0].run_dir)
    assert json.loads((run_dir / "run.json").read_text())["resumedModelSteps"] == 0
    note = events(run_dir)[1]
    assert note["type"] == "resume" and note["modelSteps"] == 0
    assert note["mismatch"].startswith("call 1 (get_item) returned a different result")
    assert note["mismatch"].endswith("the rollout runs from scratch.")
    assert summary.records[0].passed


async def test_a_plain_agent_is_run_again_from_the_start(tmp_path: Path) -> None:
    calls: list[str] = []

    async def plain(ctx: silo.AgentContext) -> str:
        calls.append(ctx.task)
        await ctx.call_tool("get_item", {"itemId": "A"})
        return "done"

    await evaluate(make_env(), ["T-1"], {"p": plain}, out_dir=tmp_path / "ev")
    index = [
        json.loads(line) for line in (tmp_path / "ev/runs/index.jsonl").read_text().splitlines()
    ]
    (tmp_path / "ev" / index[0]["runDir"] / "run.json").unlink()
    (tmp_path / "ev" / "summary.json").unlink()
    summary = await evaluate(make_env(), ["T-1"], {"p": plain}, resume=tmp_path / "ev")
    assert len(calls) == 2 and summary.complete
    trace = events(tmp_path / "ev" / str(summary.records[0].run_dir))
    assert [e["type"] for e in trace][:2] == ["run_start", "tool_call"]  # no resume event


@extra("openai")
async def test_the_provider_message_is_recorded_only_when_message_cannot_rebuild_it(
    tmp_path: Path,
) -> None:
    replies = [
        Reply(tool_calls=[ToolCall("get_item", {"itemId": "A"})]),
        Reply(text="", tool_calls=[ToolCall("get_item", '{"itemId":"A"}')]),
        Reply(text="Done."),
    ]
    with ScriptedModelServer(replies) as server:
        result = await silo.run(
            make_env(), "T-1", agents.openai_chat("s", base_url=server.base_url)
        )
    steps = [e for e in result.trace if e["type"] == "model_step"]
    assert "providerMessage" not in steps[0] and "providerMessage" not in steps[2]
    assert steps[1]["providerMessage"] == {  # "" is not None, and the arguments' own spacing
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": steps[1]["message"]["toolCalls"][0]["id"],
                "type": "function",
                "function": {"name": "get_item", "arguments": '{"itemId":"A"}'},
            }
        ],
    }


def _step(calls: list[str], **fields: Any) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": None,
        "toolCalls": [{"id": f"c{i}", "name": n, "input": {}} for i, n in enumerate(calls)],
    }
    usage = {"inputTokens": 1, "outputTokens": 1}
    return {"type": "model_step", "usage": usage, "attempts": 1, "message": message, **fields}


def _result(tool: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool": tool, "output": {"ok": True}, "isError": False}


def test_a_recording_ends_where_it_stops_making_sense() -> None:
    whole = [_step(["a", "b"]), _result("a"), _result("b"), _step([])]
    recording = parse_recording("r", whole)
    assert [len(s.results) for s in recording.steps] == [2, 0]
    assert recording.calls() == [("a", {}, {"ok": True}, False), ("b", {}, {"ok": True}, False)]
    # A result of another tool than asked, one result too many, a step it cannot rebuild, a
    # call before any step: the recording stops there.
    assert parse_recording("r", [_step(["a"]), _result("b")]).steps == (RecordedStep(_step(["a"])),)
    assert len(parse_recording("r", [_step(["a"]), _result("a"), _result("a")]).steps) == 1
    assert parse_recording("r", [_step(["a"], attempts="x")]).steps == ()
    assert parse_recording("r", [{"type": "tool_call"}, _step([])]).steps == ()
