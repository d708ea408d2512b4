"""Finished HTTP episodes are let go: a small record answers for them, nothing of the episode.

The host and its ASGI app in this process (so the test can watch the episode objects die),
driven through the official mcp client over httpx2's ASGI transport, in both protocol eras.
"""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo

from .peers import require_extra
from .worlds import ENV

require_extra("mcp")

import httpx2  # noqa: E402 - after the check
from mcp import Client  # noqa: E402 - after the check
from mcp.client.streamable_http import streamable_http_client  # noqa: E402 - after the check
from mcp.types import TextContent, TextResourceContents  # noqa: E402 - after the check

from silo_async.serve._access import Access  # noqa: E402 - it needs the extra
from silo_async.serve._app import ServeApp  # noqa: E402 - it needs the extra
from silo_async.serve._host import EpisodeHost, Hosted  # noqa: E402 - it needs the extra
from silo_async.serve._lifecycle import EndReport  # noqa: E402 - it needs the extra

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8765"
TASK = "TASK-BLOCK"


@asynccontextmanager
async def hosting(
    runs_dir: Path, ended: list[Any] | None = None, *, max_tool_calls: int = 100
) -> AsyncIterator[tuple[EpisodeHost, httpx2.AsyncClient]]:
    """The host and a client of its app; ``ended`` collects weak references to the results."""
    limits = silo.Limits(max_tool_calls=max_tool_calls, timeout=60.0)

    def on_end(result: silo.RunResult) -> None:
        if ended is not None:
            ended.append(weakref.ref(result))

    options = silo.RunOptions(limits=limits)
    host = EpisodeHost(ENV, BASE, options, runs_dir=runs_dir, report=EndReport(on_end))
    app = ServeApp(host, access=Access.build(port=8765, bound="127.0.0.1"), default_task=TASK)
    transport = httpx2.ASGITransport(app=app)
    async with (
        host.running(),
        httpx2.AsyncClient(transport=transport, base_url=BASE, timeout=30) as http,
    ):
        yield host, http


@asynccontextmanager
async def playing(http: httpx2.AsyncClient, url: str, mode: str) -> AsyncIterator[Client]:
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


async def open_episode(host: EpisodeHost, http: httpx2.AsyncClient) -> tuple[dict[str, Any], Any]:
    """POST /episodes; the body, and a weak reference to the episode object it opened."""
    opened: dict[str, Any] = (await http.post("/episodes", json={"task": TASK})).json()
    hosted = host.get(opened["id"])
    assert isinstance(hosted, Hosted)
    return opened, weakref.ref(hosted.episode)


async def until(done: Callable[[], bool]) -> None:
    """Wait (a few seconds at most) until ``done()``: the owner tasks run after a request."""
    with anyio.fail_after(10):
        while not done():  # noqa: ASYNC110 - nothing to wait on: the garbage collector
            await anyio.sleep(0.01)


async def let_go(*refs: Any) -> None:
    """Wait until nothing holds these objects any more."""

    def dead() -> bool:
        gc.collect()
        return all(ref() is None for ref in refs)

    await until(dead)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_finished_episode_is_let_go_and_still_answers(mode: str, tmp_path: Path) -> None:
    results: list[Any] = []
    async with hosting(tmp_path, results) as (host, http):
        submitted, submitted_ref = await open_episode(host, http)
        posted, posted_ref = await open_episode(host, http)
        for opened in (submitted, posted):
            async with playing(http, opened["url"], mode) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                await client.call_tool("block_customer", {"customerId": "CUS-001"})
                if opened is submitted:
                    await client.call_tool("submit", {"answer": "done"})
        finished = await http.post(f"/episodes/{posted['id']}/finish", json={"answer": "x"})
        await until(lambda: len(results) == 2)
        await let_go(submitted_ref, posted_ref, *results)  # the worlds, traces and results

        statuses = [(await http.get(f"/episodes/{o['id']}")).json() for o in (submitted, posted)]
        listed = (await http.get("/episodes")).json()["episodes"]
        async with playing(http, submitted["url"], mode) as late:
            instructions = late.session.instructions
            late_tools = [t.name for t in (await late.list_tools()).tools]
            refused = [
                await late.call_tool("block_customer", {"customerId": "CUS-001"}),
                await late.call_tool("submit", {"answer": "again"}),
            ]
            prompt = await late.get_prompt("task")
            resource = await late.read_resource("silo://task")
    assert [s["status"] for s in statuses] == ["finished", "finished"]
    assert statuses[1] == finished.json()
    assert [s["id"] for s in listed] == [submitted["id"], posted["id"]]
    assert listed == [{k: s[k] for k in ("id", "task", "status", "runId")} for s in statuses]
    for status in statuses:
        run_dir = tmp_path / status["runId"]
        assert status["result"] == json.loads((run_dir / "result.json").read_text("utf-8"))
    assert statuses[0]["result"]["agentOutput"] == "done" and statuses[0]["result"]["passed"]
    assert instructions == "Block customer CUS-001."
    assert late_tools == tools
    for call in refused:
        assert call.is_error
        assert call.structured_content == {
            "code": "invalid_state",
            "message": "The episode has ended (completed).",
        }
    assert prompt.messages[0].content == TextContent(text="Block customer CUS-001.")
    (contents,) = resource.contents
    assert isinstance(contents, TextResourceContents) and contents.text == instructions


async def test_a_session_opened_before_the_end_carries_on_after_it(tmp_path: Path) -> None:
    async with hosting(tmp_path) as (host, http):
        opened, ref = await open_episode(host, http)
        async with playing(http, opened["url"], "legacy") as client:
            before = await client.call_tool("get_customer", {"customerId": "CUS-001"})
            await http.post(f"/episodes/{opened['id']}/finish", json={"answer": ""})
            await let_go(ref)
            after = await client.call_tool("get_customer", {"customerId": "CUS-001"})
    assert not before.is_error
    assert after.is_error and after.structured_content["code"] == "invalid_state"


async def test_episodes_ended_by_a_limit_answer_with_that_reason(tmp_path: Path) -> None:
    async with hosting(tmp_path, max_tool_calls=1) as (host, http):
        opened, ref = await open_episode(host, http)
        async with playing(http, opened["url"], "auto") as client:
            await client.call_tool("get_customer", {"customerId": "CUS-001"})
            beyond = await client.call_tool("get_customer", {"customerId": "CUS-001"})
        await let_go(ref)
        async with playing(http, opened["url"], "auto") as client:
            late = await client.call_tool("get_customer", {"customerId": "CUS-001"})
        status = (await http.get(f"/episodes/{opened['id']}")).json()
    assert beyond.structured_content["code"] == "limit_exceeded"
    assert late.structured_content == {
        "code": "invalid_state",
        "message": "The episode has ended (max_tool_calls).",
    }
    assert status["result"]["terminationReason"] == "max_tool_calls"
