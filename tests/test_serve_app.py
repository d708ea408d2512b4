"""The HTTP app of ``serve`` in this process, on both backends (DESIGN.md section 17).

The host and its ASGI app driven through httpx2's ASGI transport: the access checks, the
capacity bound and the listing, without a server process (``test_serve_safety`` drives the
same over the wire).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo

from .peers import require_extra
from .serve_support import text_of
from .worlds import ENV

require_extra("mcp")

import httpx2  # noqa: E402 - after the check
from mcp import Client  # noqa: E402 - after the check
from mcp.client.streamable_http import streamable_http_client  # noqa: E402 - after the check

from silo_async.serve._access import Access  # noqa: E402 - it needs the extra
from silo_async.serve._app import ServeApp  # noqa: E402 - it needs the extra
from silo_async.serve._host import EpisodeHost, Hosted  # noqa: E402 - it needs the extra

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1:8765"
TASK = "TASK-BLOCK"


@asynccontextmanager
async def hosting(
    runs_dir: Path,
    *,
    access: Access | None = None,
    max_episodes: int = 1000,
    streamed: bool = False,
) -> AsyncIterator[tuple[EpisodeHost, httpx2.AsyncClient]]:
    host = EpisodeHost(
        ENV,
        BASE,
        silo.RunOptions(limits=silo.Limits(timeout=60.0)),
        runs_dir,
        max_episodes=max_episodes,
        streamed=streamed,
    )
    access = access or Access.build(port=8765, bound="127.0.0.1")
    app = ServeApp(host, access=access, default_task=TASK)
    transport = httpx2.ASGITransport(app=app)
    async with (
        host.running(),
        httpx2.AsyncClient(transport=transport, base_url=BASE, timeout=30) as http,
    ):
        yield host, http


async def test_the_checks_run_host_then_origin_then_token(tmp_path: Path) -> None:
    access = Access.build(
        port=8765,
        bound="10.1.2.3",
        token="t",
        allow_hosts=["box.lan", "proxy.lan:443"],
        allow_origins=["https://app.example/"],
    )
    cases: list[tuple[dict[str, str], int]] = [
        ({"Host": "evil.example", "Origin": "https://evil.example"}, 421),
        ({"Host": "10.1.2.3:8765", "Origin": "https://evil.example"}, 403),
        ({"Host": "box.lan:9999", "Origin": "https://app.example:443"}, 401),
        ({"Host": "proxy.lan:443"}, 401),
        ({"Host": "proxy.lan:80"}, 421),
        ({"Host": "LOCALHOST:1", "Origin": "HTTP://LocalHost:8765"}, 401),
        ({"Host": "[::1]", "Origin": "http://[::1]:8765"}, 401),
        ({"Host": "127.0.0.1", "Origin": "http://127.0.0.1"}, 403),  # port 80 is not this one
        ({"Host": ""}, 421),
        ({"Host": "127.0.0.1:80:80"}, 421),
    ]
    async with hosting(tmp_path, access=access) as (_, http):
        for headers, status in cases:
            response = await http.get("/episodes", headers=headers)
            assert response.status_code == status, (headers, response.text)
        authorized = await http.get("/episodes", headers={"Authorization": "Bearer t"})
    assert authorized.status_code == 200


@pytest.mark.parametrize(
    ("flag", "value"),
    [("allow_hosts", "a b"), ("allow_hosts", "x:port"), ("allow_origins", "app.example")],
)
def test_a_bad_allow_entry_is_a_value_error(flag: str, value: str) -> None:
    given: dict[str, Any] = {flag: [value]}
    with pytest.raises(ValueError, match=f'{flag}: "{value}" is not'):
        Access.build(port=1, bound="127.0.0.1", **given)


async def test_capacity_counts_open_episodes_only(tmp_path: Path) -> None:
    async with hosting(tmp_path, max_episodes=2) as (_, http):
        opened = [(await http.post("/episodes", json={})).json() for _ in range(2)]
        full = await http.post("/episodes", json={})
        for episode in opened:
            await http.post(f"/episodes/{episode['id']}/finish", json={"answer": "x"})
        reopened = [await http.post("/episodes", json={}) for _ in range(2)]
        listed = (await http.get("/episodes", params={"limit": 4})).json()
    assert full.status_code == 503 and full.json()["error"]["code"] == "capacity_reached"
    assert [r.status_code for r in reopened] == [201, 201]
    assert [e["status"] for e in listed["episodes"]] == ["finished", "finished", "open", "open"]
    assert listed["next"] is None  # the page ends exactly at the last episode


async def test_pages_walk_every_episode_once(tmp_path: Path) -> None:
    async with hosting(tmp_path) as (_, http):
        ids = [(await http.post("/episodes", json={})).json()["id"] for _ in range(5)]
        seen: list[str] = []
        after: Any = None
        for _ in range(10):
            params = {"limit": 2, **({"after": after} if after else {})}
            page = (await http.get("/episodes", params=params)).json()
            seen += [e["id"] for e in page["episodes"]]
            after = page["next"]
            if after is None:
                break
        last = (await http.get("/episodes", params={"after": ids[-1]})).json()
    assert seen == ids
    assert last == {"episodes": [], "next": None}


async def test_finish_refuses_what_is_not_a_string(tmp_path: Path) -> None:
    async with hosting(tmp_path) as (host, http):
        opened = (await http.post("/episodes", json={})).json()
        finish = f"/episodes/{opened['id']}/finish"
        refused = {
            "number": await http.post(finish, json={"answer": 1}),
            "missing": await http.post(finish, json={"other": "x"}),
            "array": await http.post(finish, content=b"[]"),
        }
        hosted = host.get(opened["id"])
        assert hosted is not None and "open" in hosted.status().decode()
    assert "received number" in refused["number"].json()["error"]["message"]
    assert "none was given" in refused["missing"].json()["error"]["message"]
    assert all(r.status_code == 400 for r in refused.values())


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_customer", {"customerId": "CUS-001"}),
    ("get_customer", {"customerID": "CUS-001"}),
    ("block_customer", {"customerId": "CUS-001"}),
    ("get_custmer", {}),
    ("submit", {"answer": "done"}),
    ("get_customer", {"customerId": "CUS-001"}),
]


async def _play(tmp_path: Path, *, streamed: bool, mode: str) -> list[Any]:
    async with hosting(tmp_path, streamed=streamed) as (_, http):
        opened = (await http.post("/episodes", json={})).json()
        transport = streamable_http_client(opened["url"], http_client=http)
        async with Client(transport, mode=mode) as client:
            results = [await client.call_tool(name, args) for name, args in CALLS]
        status = (await http.get(f"/episodes/{opened['id']}")).json()
    return [
        *((r.structured_content, text_of(r), r.is_error) for r in results),
        {k: v for k, v in status["result"].items() if k != "durationMs"},
    ]


# On trio the official client leaves its SSE readers (async generators) to the garbage
# collector when a legacy session closes: a warning about the client, not about the server.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_fast_path_answers_as_the_sdks_own_streams(tmp_path: Path, mode: str) -> None:
    # JSON bodies with our disconnect watcher, next to the SDK's SSE responses (the reference).
    fast = await _play(tmp_path / "fast", streamed=False, mode=mode)
    streamed = await _play(tmp_path / "streamed", streamed=True, mode=mode)
    assert fast == streamed
    assert fast[-2][0]["code"] == "invalid_state" and fast[-1]["agentOutput"] == "done"


async def test_a_run_directory_that_cannot_be_made_is_a_500_and_the_server_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runs = tmp_path / "runs"
    runs.write_text("a file where the run directories should go", encoding="utf-8")
    async with hosting(runs) as (_, http):
        refused = await http.post("/episodes", json={})
        runs.unlink()  # the disk is fixed: the next episode opens
        opened = await http.post("/episodes", json={})
    assert refused.status_code == 500
    error = refused.json()["error"]
    assert error["code"] == "internal_error"
    assert error["message"].startswith(f"Could not open an episode of {TASK}: NotADirectoryError")
    assert opened.status_code == 201
    cause = error["message"].split(": ", 1)[1]
    logged = [r.getMessage() for r in caplog.records]
    assert logged == [f"silo-async serve: could not open an episode of {TASK}: {cause}"]


async def test_an_episode_that_cannot_be_written_fails_alone(tmp_path: Path) -> None:
    async with hosting(tmp_path) as (host, http):
        broken = (await http.post("/episodes", json={})).json()
        hosted = host.get(broken["id"])
        assert isinstance(hosted, Hosted) and hosted.episode.run_dir is not None
        shutil.rmtree(hosted.episode.run_dir)
        hosted.episode.run_dir.write_text("not a directory", encoding="utf-8")
        finish = await http.post(f"/episodes/{broken['id']}/finish", json={"answer": "x"})
        again = await http.post(f"/episodes/{broken['id']}/finish", json={"answer": "x"})
        status = (await http.get(f"/episodes/{broken['id']}")).json()
        call = await http.post(
            f"/episodes/{broken['id']}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
        other = (await http.post("/episodes", json={})).json()
        done = await http.post(f"/episodes/{other['id']}/finish", json={"answer": "x"})
        listed = (await http.get("/episodes")).json()["episodes"]
    assert finish.status_code == again.status_code == call.status_code == 500
    assert finish.json()["error"]["code"] == "internal_error"
    assert "NotADirectoryError" in finish.json()["error"]["message"]
    assert status["status"] == "failed" and status["result"] is None
    assert status["error"] == finish.json()["error"]
    assert done.status_code == 200 and done.json()["status"] == "finished"
    assert [e["status"] for e in listed] == ["failed", "finished"]
