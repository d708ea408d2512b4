"""The MCP face of an episode, driven by the official mcp client in memory.

Both protocol eras: ``auto`` (2026-07-28, direct dispatch, no handshake) and ``legacy``
(initialize handshake, JSON-RPC over memory streams, cancellation by notification).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo

from .peers import require_extra
from .serve_support import text_of
from .worlds import ENV, TASKS, create_state, get_customer

require_extra("mcp")

from mcp import Client, MCPError  # noqa: E402 - after the check
from mcp.types import TextContent, TextResourceContents  # noqa: E402 - after the check

from silo_async.serve import SUBMIT, EpisodeServer, check_reserved  # noqa: E402 - it needs the extra

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def served(
    mode: str,
    task: str = "TASK-BLOCK",
    *,
    env: silo.Environment = ENV,
    reveal: Callable[[silo.RunResult], str] | None = None,
    **options: Any,
) -> AsyncIterator[tuple[silo.Episode, Client]]:
    async with silo.episode(env, task, **options) as ep:
        server = EpisodeServer(ep, name=env.name, reveal=reveal)
        async with Client(server.server, mode=mode) as client:
            yield ep, client


text = text_of


async def test_tools_are_listed_with_their_schemas_and_submit(mode: str) -> None:
    async with served(mode) as (ep, client):
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [*(s.name for s in ep.tools), SUBMIT]
    assert [t.input_schema for t in listed[:-1]] == [s.input_schema for s in ep.tools]
    assert listed[0].description == "Read a customer."
    submit = listed[-1].input_schema
    assert submit["required"] == ["answer"]
    assert submit["properties"]["answer"]["type"] == "string"
    assert all(t.output_schema is None for t in listed)


async def test_a_call_returns_text_structured_content_and_the_error_flag(mode: str) -> None:
    async with served(mode) as (_, client):
        got = await client.call_tool("get_customer", {"customerId": "CUS-001"})
        slept = await client.call_tool("slow", {"seconds": 0})
    customer = {"id": "CUS-001", "status": "active", "tags": ["vip"]}
    assert got.is_error is False and got.structured_content == customer
    assert text(got) == json.dumps(customer, separators=(",", ":"))
    # A string output is the text as it is; it is not a JSON object, so no structured content.
    assert (text(slept), slept.structured_content, slept.is_error) == ("slept", None, False)


async def test_rejected_calls_are_results_never_protocol_errors(mode: str) -> None:
    async with served(mode) as (ep, client):
        invalid = await client.call_tool("get_customer", {"customerID": "CUS-001"})
        unknown = await client.call_tool("get_custmer", {"customerId": "CUS-001"})
        missing = await client.call_tool("get_customer", {"customerId": "CUS-404"})
        fault = await client.call_tool("explode", {})
        result = await ep.finish()
    assert all(r.is_error for r in (invalid, unknown, missing, fault))
    assert invalid.structured_content["code"] == "invalid_input"
    assert text(invalid).startswith(
        '{"code":"invalid_input","message":"Invalid arguments for \\"get_customer\\": '
        '\\"customerId\\" is required; \\"customerID\\" is not a parameter'
    )
    assert unknown.structured_content["code"] == "tool_not_found"
    assert "get_customer" in unknown.structured_content["details"]["suggestions"]
    assert missing.structured_content["code"] == "not_found"
    assert fault.structured_content["code"] == "internal_error"
    assert (result.tool_calls, result.tool_errors, result.tool_faults) == (4, 3, 1)


async def test_submit_finishes_the_episode_with_its_answer(mode: str, tmp_path: Path) -> None:
    async with served(mode, "TASK-ANSWER", runs_dir=tmp_path) as (ep, client):
        await client.call_tool("get_customer", {"customerId": "CUS-001"})
        submitted = await client.call_tool(SUBMIT, {"answer": "2"})
        assert ep.finished
        after = await client.call_tool("get_customer", {"customerId": "CUS-001"})
        again = await client.call_tool(SUBMIT, {"answer": "3"})
    assert (text(submitted), submitted.is_error) == ("Submitted.", False)
    for refused in (after, again):
        assert refused.is_error and refused.structured_content == {
            "code": "invalid_state",
            "message": "The episode has ended (completed).",
        }
    result = ep.result
    assert result is not None and result.passed and result.agent_output == "2"
    assert result.tool_calls == 1  # submit is not a tool call of the world
    assert json.loads((tmp_path / result.run_id / "result.json").read_text())["passed"] is True


async def test_submit_checks_its_answer_and_leaves_the_episode_open(mode: str) -> None:
    async with served(mode, "TASK-ANSWER") as (ep, client):
        missing = await client.call_tool(SUBMIT, {})
        wrong = await client.call_tool(SUBMIT, {"answer": 2})
        assert not ep.finished
        result = await ep.finish()
    assert missing.structured_content["code"] == "invalid_input"
    assert text(missing).startswith(
        '{"code":"invalid_input","message":"Invalid arguments for \\"submit\\": '
        '\\"answer\\" is required.'
    )
    assert "must be string" in wrong.structured_content["message"]
    assert (result.tool_calls, result.tool_errors) == (0, 0)


async def test_submit_is_never_refused_by_the_tool_call_limit(mode: str) -> None:
    async with served(mode, "TASK-ANSWER", max_tool_calls=0) as (ep, client):
        submitted = await client.call_tool(SUBMIT, {"answer": "2"})
    assert text(submitted) == "Submitted."
    assert ep.result is not None and ep.result.termination_reason == "completed"


async def test_reveal_grade_answers_the_report_instead(mode: str) -> None:
    def report(result: silo.RunResult) -> str:
        return f"{'PASS' if result.passed else 'FAIL'} {result.reward:.2f}"

    async with served(mode, "TASK-ANSWER", reveal=report) as (_, client):
        submitted = await client.call_tool(SUBMIT, {"answer": "3"})
    assert text(submitted) == "FAIL 0.00"


async def test_the_task_is_instructions_prompt_and_resource(mode: str) -> None:
    instruction = "Block customer CUS-001."
    async with served(mode) as (_, client):
        assert client.server_capabilities.prompts is not None
        prompts = (await client.list_prompts()).prompts
        prompt = await client.get_prompt("task")
        resources = (await client.list_resources()).resources
        read = await client.read_resource("silo://task")
        with pytest.raises(MCPError, match='Unknown prompt "solution"'):
            await client.get_prompt("solution")
        with pytest.raises(MCPError, match='Unknown resource "silo://answer"') as unknown:
            await client.read_resource("silo://answer")
        templates = await client.list_resource_templates()
        assert client.session.instructions == instruction
    assert [p.name for p in prompts] == ["task"]
    (message,) = prompt.messages
    assert message.role == "user" and isinstance(message.content, TextContent)
    assert message.content.text == instruction
    assert [str(r.uri) for r in resources] == ["silo://task"]
    assert unknown.value.error.data == {"uri": "silo://answer"}
    assert templates.resource_templates == []  # resources are declared: templates answer too
    (contents,) = read.contents
    assert isinstance(contents, TextResourceContents) and contents.text == instruction


def test_an_environment_with_a_submit_tool_is_refused() -> None:
    with pytest.raises(silo.SiloError) as raised:
        check_reserved(["get_customer", SUBMIT], "shop")
    assert raised.value.code == "tool_name_reserved"
    assert 'has a tool named "submit"' in raised.value.message
    check_reserved([t.name for t in ENV.tools], "shop")  # no submit: nothing raised


async def test_the_call_beyond_the_limit_ends_the_episode(mode: str) -> None:
    async with served(mode, max_tool_calls=1) as (ep, client):
        first = await client.call_tool("get_customer", {"customerId": "CUS-001"})
        beyond = await client.call_tool("block_customer", {"customerId": "CUS-001"})
        assert ep.finished
        after = await client.call_tool("get_customer", {"customerId": "CUS-001"})
    assert not first.is_error
    assert beyond.is_error and beyond.structured_content["code"] == "limit_exceeded"
    assert after.structured_content == {
        "code": "invalid_state",
        "message": "The episode has ended (max_tool_calls).",
    }
    assert ep.result is not None and ep.result.tool_calls == 1


async def test_the_deadline_ends_the_episode_with_nobody_calling(mode: str) -> None:
    async with served(mode, timeout=0.05) as (ep, client):
        result = await ep.wait_finished()
        after = await client.call_tool("get_customer", {"customerId": "CUS-001"})
    assert result.termination_reason == "timeout"
    assert after.structured_content["message"] == "The episode has ended (timeout)."


def _sleeper_env(
    started: anyio.Event, cancelled: anyio.Event
) -> tuple[silo.Environment, dict[str, int]]:
    seen = {"started": 0, "cancelled": 0, "finished": 0}

    @silo.tool(
        name="nap",
        description="Sleep for a while.",
        input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
    )
    async def nap(state: Any, input: dict[str, Any]) -> str:
        seen["started"] += 1
        started.set()
        try:
            await anyio.sleep(input["seconds"])
        except anyio.get_cancelled_exc_class():
            seen["cancelled"] += 1
            cancelled.set()
            raise
        seen["finished"] += 1
        return "rested"

    env = silo.Environment(
        name="nap", create_state=create_state, tools=[get_customer, nap],
        verifiers=ENV.verifiers, tasks=TASKS,
    )  # fmt: skip
    return env, seen


async def _cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def test_a_cancelled_call_interrupts_the_sleeping_tool(mode: str) -> None:
    started, cancelled = anyio.Event(), anyio.Event()
    env, seen = _sleeper_env(started, cancelled)
    async with served(mode, env=env) as (ep, client):
        with anyio.fail_after(30):  # an hour-long nap that is not interrupted fails here
            # The client gives up once the nap has begun (not after a fixed 50 ms, which a
            # loaded machine could spend before the call reaches the tool).
            with anyio.CancelScope() as call:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_cancel_when_set, started, call)
                    await client.call_tool("nap", {"seconds": 3600})
            await cancelled.wait()
        # The episode goes on: the next call is served.
        after = await client.call_tool("nap", {"seconds": 0})
        assert not ep.finished
    assert seen == {"started": 2, "cancelled": 1, "finished": 1}
    assert text(after) == "rested"


CALLS: list[tuple[str, dict[str, Any] | None]] = [
    ("get_customer", {"customerId": "CUS-002"}),
    ("get_custmer", {"customerId": "CUS-002"}),
    ("get_customer", {"customerID": "CUS-001"}),
    ("block_customer", {"customerId": "CUS-001"}),
    ("block_customer", {"customerId": "CUS-001"}),
    ("explode", None),
]


def _files(result: silo.RunResult) -> tuple[bytes, bytes]:
    assert result.run_dir is not None
    return (
        (result.run_dir / "result.json").read_bytes(),
        (result.run_dir / "state-diff.json").read_bytes(),
    )


async def test_the_same_calls_give_the_same_files_as_the_episode_itself(
    mode: str, tmp_path: Path
) -> None:
    async with served(mode, runs_dir=tmp_path / "mcp") as (ep, client):
        outputs = [await client.call_tool(name, args) for name, args in CALLS]
        await client.call_tool(SUBMIT, {"answer": "done"})
    async with silo.episode(ENV, "TASK-BLOCK", runs_dir=tmp_path / "direct") as direct:
        expected = [await direct.call_tool(name, args) for name, args in CALLS]
        await direct.finish("done")
    assert [(o.structured_content, o.is_error) for o in outputs] == [
        (r.output, r.is_error) for r in expected
    ]
    assert ep.result is not None and direct.result is not None
    assert _files(ep.result) == _files(direct.result)


async def test_two_served_episodes_never_share_a_world(mode: str) -> None:
    async with served(mode) as (_, first), served(mode) as (_, second):
        await first.call_tool("block_customer", {"customerId": "CUS-001"})
        seen = await second.call_tool("get_customer", {"customerId": "CUS-001"})
        again = await first.call_tool("get_customer", {"customerId": "CUS-001"})
    assert seen.structured_content["status"] == "active"
    assert again.structured_content["status"] == "blocked"
