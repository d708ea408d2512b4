"""A conversational task played over MCP by the official client: stdio and HTTP (§8, §13).

``message_user`` is served like any tool; the same calls give the same ``result.json`` and
``state-diff.json`` as ``run()``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.testing import ScriptedAgent

from .chat_world import ENV, write_project
from .peers import require_extra
from .serve_support import child_env, only_run, run_files

require_extra("mcp")

import httpx2  # noqa: E402 - after the check
from mcp import Client, StdioServerParameters  # noqa: E402 - after the check
from mcp.client.stdio import stdio_client  # noqa: E402 - after the check
from mcp.client.streamable_http import streamable_http_client  # noqa: E402 - after the check

pytestmark = pytest.mark.anyio

TASK = "CHAT-SYNC"
PROMPT = "Help them order 1 croissant.\n\nUser: My order won't go through, it's bo@example.com."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    write_project(root)
    return root


def serve(*args: str) -> list[str]:
    return [sys.executable, "-m", "silo_async", "serve", "--env", "bakery", "--task", TASK, *args]


#: The calls an MCP client makes, and a Python agent makes the same through ``run()``.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("set_offline_mode", {"on": False}),  # the user's tool: not the agent's
    ("message_user", {"text": ""}),
    ("message_user", {"text": "Please switch offline mode off."}),
    ("place_order", {"customerId": "CUS-2", "quantity": 1}),
    ("message_user", {"text": "Your order is placed."}),
    ("message_user", {"text": "Anything else?"}),
]
NAMES = ["own", "empty", "ask", "order", "bye", "after"]


async def play(client: Client) -> dict[str, Any]:
    """The calls, made by an MCP client, then ``submit``."""
    seen: dict[str, Any] = {"instructions": client.session.instructions}
    seen["tools"] = [t.name for t in (await client.list_tools()).tools]
    for name, (tool, args) in zip(NAMES, CALLS, strict=True):
        seen[name] = await client.call_tool(tool, args)
    seen["submit"] = await client.call_tool("submit", {"answer": "synced"})
    return seen


async def same_as_run(seen: dict[str, Any], project: Path, tmp_path: Path) -> None:
    assert seen["instructions"] == PROMPT
    assert seen["tools"] == [
        "find_customer",
        "place_order",
        "refund_order",
        "message_user",
        "submit",
    ]
    assert seen["own"].is_error and seen["own"].structured_content["code"] == "tool_not_found"
    assert seen["empty"].structured_content["code"] == "invalid_input"
    assert not seen["ask"].is_error
    assert seen["ask"].structured_content == {"reply": "OK, I switched offline mode off."}
    assert seen["bye"].structured_content == {"reply": "Great, bye!", "ended": True}
    assert seen["after"].is_error and seen["after"].structured_content["code"] == "invalid_state"
    files = run_files(project, only_run(project))
    assert files["result"]["userTurns"] == 2 and files["result"]["userToolCalls"] == 1
    agent = ScriptedAgent(CALLS, answer="synced")
    ran = await silo.run(ENV, TASK, agent, runs_dir=tmp_path / "ran")
    assert ran.run_dir is not None
    assert files["result_bytes"] == (ran.run_dir / "result.json").read_bytes()
    assert files["diff_bytes"] == (ran.run_dir / "state-diff.json").read_bytes()


async def test_over_stdio(project: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=serve()[1:], cwd=str(project), env=child_env()
    )
    with (tmp_path / "stderr.txt").open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            seen = await play(client)
    await same_as_run(seen, project, tmp_path)


@asynccontextmanager
async def http_server(project: Path) -> AsyncIterator[dict[str, Any]]:
    command = serve("--transport", "http", "--port", "0", "--json")
    with (
        (project / "serve.err").open("w", encoding="utf-8") as log,
        # A server process for the test's lifetime: started once, before any await.
        subprocess.Popen(  # noqa: ASYNC220
            command, cwd=project, env=child_env(), stdout=subprocess.PIPE, stderr=log, text=True
        ) as proc,
    ):
        try:
            assert proc.stdout is not None
            yield json.loads(proc.stdout.readline())
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)


async def test_over_http(project: Path, tmp_path: Path) -> None:
    async with http_server(project) as info:
        url = info["episodes"][0]["url"]
        async with (
            httpx2.AsyncClient(timeout=30) as session,
            Client(streamable_http_client(url, http_client=session)) as client,
        ):
            seen = await play(client)
    await same_as_run(seen, project, tmp_path)
