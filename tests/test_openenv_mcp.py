"""``serve --protocol openenv``: OpenEnv's HTTP MCP (``POST /mcp``) and its sessions, raw.

OpenEnv's own clients (``MCPToolClient``, ``openenv validate``) are in test_harness_openenv;
here a plain HTTP client and a WebSocket probe what they never send: malformed requests,
unknown sessions, a second socket, a session closed while a socket holds it, capacity.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from .harness_support import CALLS, make_crm_project, read_run, run_ids, serving
from .peers import require_extra

require_extra("mcp")
require_extra("harness-servers")

import httpx2  # noqa: E402 - after the check
from websockets.asyncio.client import ClientConnection, connect  # noqa: E402 - after the check


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One crm project for the module."""
    return make_crm_project(tmp_path_factory.mktemp("openenv-mcp") / "project")


@pytest.fixture
def server(project: Path) -> Iterator[str]:
    """``serve --protocol openenv`` in the project; its base URL."""
    with serving(project, "openenv") as info:
        yield str(info["url"])


async def rpc(http: httpx2.AsyncClient, url: str, method: str, **params: Any) -> Any:
    """One JSON-RPC request to ``/mcp``; the response (always HTTP 200)."""
    request = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    answer = await http.post(f"{url}/mcp", json=request)
    assert answer.status_code == 200, answer.text
    return answer.json()


async def frame(ws: ClientConnection, kind: str, data: Any = None) -> dict[str, Any]:
    """Send one frame, read the answer."""
    await ws.send(json.dumps({"type": kind, "data": data} if data is not None else {"type": kind}))
    answer: dict[str, Any] = json.loads(await ws.recv())
    return answer


async def until_gone(http: httpx2.AsyncClient, url: str, sid: str) -> Any:
    """Poll ``tools/list`` of session ``sid`` until it is unknown (the server closes it once
    its socket has gone, which the client cannot wait for otherwise); that answer."""
    with anyio.fail_after(30):
        for _ in range(600):
            answer = await rpc(http, url, "tools/list", session_id=sid)
            if "error" in answer:
                return answer
            await anyio.sleep(0.05)
    raise AssertionError(f"session {sid} is still open")


def ws_url(url: str, session: str) -> str:
    return url.replace("http", "ws", 1) + f"/ws?session_id={session}"


def test_malformed_requests_get_json_rpc_errors_with_status_200(server: str) -> None:
    async def probe() -> list[Any]:
        async with httpx2.AsyncClient(timeout=30) as http:
            raw = [await http.post(f"{server}/mcp", content=body) for body in (b"{}", b"nope")]
            not_an_object = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1]}
            params = await http.post(f"{server}/mcp", json=not_an_object)
            return [
                *[r.json() for r in raw],
                params.json(),
                await rpc(http, server, "resources/list"),
                await rpc(http, server, "tools/call", name="search_leads"),
                await rpc(http, server, "tools/call", name="search_leads", session_id="nope"),
                await rpc(http, server, "openenv/session/close"),
                await rpc(http, server, "tools/list"),
                (await http.get(f"{server}/mcp")).status_code,
            ]

    empty, garbage, params, unknown, no_session, bad_session, no_id, listed, get = anyio.run(probe)
    assert empty["error"]["code"] == -32600 and empty["jsonrpc"] == "2.0"  # openenv validate
    assert garbage["error"]["code"] == -32700
    assert params["error"]["code"] == -32602 and params["id"] == 3
    assert unknown["error"]["code"] == -32601 and unknown["id"] == 7
    assert no_session["error"]["code"] == -32000
    assert "openenv/session/create" in no_session["error"]["message"]
    assert bad_session["error"]["code"] == -32602
    assert no_id["error"]["code"] == -32602
    tools = listed["result"]["tools"]  # discovery needs no session
    assert tools[-1]["name"] == "submit"
    assert all(set(t) == {"name", "description", "input_schema"} for t in tools)
    assert get == 405


def test_a_session_outlives_its_socket_until_closed_and_takes_one_socket(
    server: str, project: Path
) -> None:
    before = run_ids(project)

    async def play() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with httpx2.AsyncClient(timeout=30) as http:
            sid = (await rpc(http, server, "openenv/session/create"))["result"]["session_id"]
            async with connect(ws_url(server, "nope")) as stranger:
                out["stranger"] = json.loads(await stranger.recv())
            async with connect(ws_url(server, sid)) as ws:
                out["reset"] = await frame(ws, "reset", {"task": "TASK-001"})
                async with connect(ws_url(server, sid)) as second:
                    out["second"] = json.loads(await second.recv())
                name, arguments = CALLS[0]
                out["call"] = await rpc(
                    http, server, "tools/call", name=name, arguments=arguments, session_id=sid
                )
            # The socket left; the session, and its episode, are /mcp's until closed there.
            out["after_socket"] = await rpc(http, server, "tools/list", session_id=sid)
            async with connect(ws_url(server, sid)) as ws:
                out["state"] = await frame(ws, "state")
                out["closing"] = await rpc(http, server, "openenv/session/close", session_id=sid)
            out["gone"] = await until_gone(http, server, sid)
        return out

    out = anyio.run(play)
    assert out["stranger"]["data"]["code"] == "SESSION_ERROR"
    assert out["second"]["data"]["code"] == "SESSION_ERROR"
    assert out["reset"]["data"]["observation"]["task_id"] == "TASK-001"
    call = out["call"]["result"]
    assert call["tool_name"] == CALLS[0][0] and call["result"]["is_error"] is False
    assert call["done"] is False and call["reward"] is None
    assert out["after_socket"]["result"]["tools"][-1]["name"] == "submit"
    assert out["state"]["data"]["step_count"] == 1 and out["state"]["data"]["done"] is False
    closing = out["closing"]["result"]
    assert closing == {"session_id": closing["session_id"], "closed": False, "closing": True}
    assert out["gone"]["error"]["code"] == -32602
    (run_id,) = run_ids(project) - before  # closing finished the episode: written once
    assert read_run(project, run_id)["calls"] == [CALLS[0]]


def test_sessions_count_against_max_episodes_and_played_out_ones_make_room(
    project: Path,
) -> None:
    async def play(url: str) -> list[Any]:
        async with httpx2.AsyncClient(timeout=30) as http:
            first = (await rpc(http, url, "openenv/session/create"))["result"]["session_id"]
            full = await rpc(http, url, "openenv/session/create")
            async with connect(ws_url(url, first)) as ws:
                await frame(ws, "reset", {"task": "TASK-001"})
                submit = {"type": "call_tool", "tool_name": "submit", "arguments": {"answer": "no"}}
                done = await frame(ws, "step", submit)
            second = await rpc(http, url, "openenv/session/create")  # the first is played out
            again = await rpc(http, url, "openenv/session/create")
            forgotten = await rpc(http, url, "tools/list", session_id=first)
            return [full, done, second, again, forgotten]

    with serving(project, "openenv", "--max-episodes", "1") as info:
        full, done, second, again, forgotten = anyio.run(play, info["url"])
    assert full["error"]["code"] == -32000 and "close one" in full["error"]["message"]
    assert done["data"]["done"] is True
    assert "session_id" in second["result"]
    assert again["error"]["code"] == -32000
    assert forgotten["error"]["code"] == -32602
