"""``silo-async serve --transport http``: a real server on 127.0.0.1 port 0, real clients.

One token-protected server per module; the shutdown test runs a server of its own.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import ssl
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.testing import ScriptedAgent, ScriptedCall

from .peers import require_extra
from .serve_support import (
    ENV_NAME,
    child_env,
    make_project,
    run_files,
    serve_command,
    silo_cli,
    text_of,
    until_called,
)

require_extra("mcp")

import httpx2  # noqa: E402 - after the check
from mcp import Client  # noqa: E402 - after the check
from mcp.client.streamable_http import streamable_http_client  # noqa: E402 - after the check

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: One TLS context for every client: the servers speak plain HTTP, and a context of its own per
#: client (httpx2's default) loads the CA bundle each time, over half the 200-episode test's CPU.
TLS = ssl.create_default_context()


class Server:
    """A running ``serve --transport http`` process."""

    def __init__(self, proc: subprocess.Popen[str], line: str, project: Path, log: Path) -> None:
        self.proc, self.line, self.project, self.log = proc, line, project, log
        self.info: dict[str, Any] = json.loads(line) if line.startswith("{") else {}

    @property
    def url(self) -> str:
        return str(self.info["url"])

    def stop(self) -> int:
        """Ctrl-C, then the exit status."""
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=60)


@contextmanager
def running(project: Path, *args: str, token: str | None = None) -> Iterator[Server]:
    env = child_env()
    env.pop("SILO_SERVE_TOKEN", None)
    if token is not None:
        env["SILO_SERVE_TOKEN"] = token
    log = project / "serve.err"
    command = serve_command("--task", "TASK-001", "--transport", "http", "--port", "0", *args)
    with (
        log.open("w", encoding="utf-8") as stderr,
        subprocess.Popen(
            command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True
        ) as proc,
    ):
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line, log.read_text(encoding="utf-8")
            yield Server(proc, line, project, log)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=60)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    project = make_project(tmp_path_factory.mktemp("serve-http") / "project")
    with running(project, "--json", "--max-tool-calls", "1000", token=TOKEN) as served:
        yield served


def http(headers: dict[str, str] | None = AUTH) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers=headers, timeout=30, verify=TLS)


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    """Both protocol eras: 2026-07-28 (one exchange per call) and the initialize handshake."""
    return str(request.param)


@asynccontextmanager
async def mcp_client(
    url: str, headers: dict[str, str] | None = AUTH, *, mode: str = "auto"
) -> AsyncIterator[Client]:
    # The client does not close an HTTP client it was given: this block does.
    async with (
        http(headers) as session,
        Client(streamable_http_client(url, http_client=session), mode=mode) as client,
    ):
        yield client


async def open_episode(server: Server, task: str) -> dict[str, Any]:
    async with http() as client:
        response = await client.post(f"{server.url}/episodes", json={"task": task})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_startup_line_names_the_first_episode(server: Server) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", server.url)
    (first,) = server.info["episodes"]
    assert set(first) == {"id", "task", "url"} and first["task"] == "TASK-001"
    assert first["url"] == f"{server.url}/episodes/{first['id']}/mcp"


async def test_every_request_needs_the_bearer_token(server: Server) -> None:
    endpoint = server.info["episodes"][0]["url"]
    async with http(None) as anonymous, http({"Authorization": "Bearer wrong"}) as wrong:
        for response in (
            await anonymous.get(f"{server.url}/episodes"),
            await wrong.get(f"{server.url}/episodes"),
            await anonymous.post(endpoint, json={}),
        ):
            assert response.status_code == 401
            assert response.json()["error"]["code"] == "unauthorized"
            assert response.headers["www-authenticate"] == "Bearer"
    async with http() as client:
        assert (await client.get(f"{server.url}/episodes")).status_code == 200


async def test_open_play_inspect_and_finish_an_episode(server: Server, mode: str) -> None:
    opened = await open_episode(server, "TASK-002")
    assert set(opened) == {"id", "task", "url"} and opened["task"] == "TASK-002"
    status_url = f"{server.url}/episodes/{opened['id']}"
    async with http() as client:
        before = (await client.get(status_url)).json()
        async with mcp_client(opened["url"], mode=mode) as mcp:
            assert "Tomasz" not in str(mcp.session.instructions)  # TASK-002's own instruction
            users = await mcp.call_tool("list_users", {})
            finished = (await client.post(f"{status_url}/finish", json={"answer": "x"})).json()
            after = await mcp.call_tool("list_users", {})
        again = (await client.get(status_url)).json()
    assert before == {
        "id": opened["id"],
        "task": "TASK-002",
        "status": "open",
        "result": None,
        "runId": before["runId"],
    }
    assert not users.is_error
    assert finished["status"] == "finished" and finished["runId"] == before["runId"]
    assert finished["result"]["agentOutput"] == "x" and finished["result"]["toolCalls"] == 1
    assert after.is_error and after.structured_content["code"] == "invalid_state"
    assert again == finished
    assert run_files(server.project, before["runId"])["result"] == finished["result"]


async def test_calls_are_answered_with_one_json_body(server: Server) -> None:
    # A client that accepts JSON only is served; no SSE stream (and its per-call tasks) at all.
    opened = await open_episode(server, "TASK-002")
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "curl", "version": "1"},
        },
    }
    async with http() as client:
        answer = await client.post(
            opened["url"], json=hello, headers={"Accept": "application/json"}
        )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/json"
    env = silo.load_environment(ENV_NAME, server.project)
    assert answer.json()["result"]["instructions"] == env.task("TASK-002").instruction


async def test_unknown_episodes_and_tasks_are_404(server: Server) -> None:
    async with http() as client:
        responses = {
            "status": await client.get(f"{server.url}/episodes/nope"),
            "finish": await client.post(f"{server.url}/episodes/nope/finish", json={}),
            "mcp": await client.post(f"{server.url}/episodes/nope/mcp", json={}),
        }
        task = await client.post(f"{server.url}/episodes", json={"task": "TASK-404"})
        broken = await client.post(f"{server.url}/episodes", content=b"{not json")
    for response in responses.values():
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "episode_not_found"
        assert 'Episode "nope" was not found' in response.json()["error"]["message"]
    assert task.status_code == 404 and task.json()["error"]["code"] == "task_not_found"
    assert broken.status_code == 400 and broken.json()["error"]["code"] == "invalid_json"


async def test_a_cancelled_call_interrupts_the_sleeping_tool(
    server: Server, tmp_path: Path, mode: str
) -> None:
    # 2026-07-28: the client closes its request; legacy: it posts notifications/cancelled.
    marker = tmp_path / "nap.cancelled"
    opened = await open_episode(server, "TASK-001")
    async with mcp_client(opened["url"], mode=mode) as mcp:
        with anyio.fail_after(20):  # an hour-long nap that is not interrupted fails here
            async with anyio.create_task_group() as group:
                group.start_soon(mcp.call_tool, "nap", {"seconds": 3600, "marker": str(marker)})
                await until_called(server.project, "nap", str(marker))
                group.cancel_scope.cancel()  # the client gives up on the call in flight
            while not marker.exists():  # noqa: ASYNC110 - written by the server process
                await anyio.sleep(0.02)
        rested = await mcp.call_tool("nap", {"seconds": 0})
    assert marker.read_text(encoding="utf-8") == "cancelled"
    assert text_of(rested) == "rested"


def _calls(i: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("jot", {"text": f"episode {i:03d}"}),
        ("jot", {"text": f"again {i:03d}"}),
        ("get_user", {"userId": f"USR-{i % 9:03d}"}),
    ]


async def _play(url: str, i: int) -> list[Any]:
    async with mcp_client(url) as mcp:
        # Every client connected before any plays: 200 episodes open and driven at once.
        outputs = [await mcp.call_tool(name, args) for name, args in _calls(i)]
    return [(o.structured_content, o.is_error) for o in outputs]


async def test_200_concurrent_episodes_stay_apart_and_match_the_episode_api(
    server: Server, tmp_path: Path
) -> None:
    count = 200
    opened: dict[int, dict[str, Any]] = {}
    played: dict[int, list[Any]] = {}
    arrivals = anyio.CapacityLimiter(20)  # clients arrive a few at a time, as in life

    async def open_one(i: int) -> None:
        async with arrivals:
            opened[i] = await open_episode(server, "TASK-003")

    async def play(i: int) -> None:
        played[i] = await _play(opened[i]["url"], i)

    with anyio.fail_after(300):
        async with anyio.create_task_group() as group:
            for i in range(count):
                group.start_soon(open_one, i)
        async with anyio.create_task_group() as group:
            for i in range(count):
                group.start_soon(play, i)
        async with http() as client:
            finished = [
                await client.post(
                    f"{server.url}/episodes/{opened[i]['id']}/finish", json={"answer": f"a{i}"}
                )
                for i in range(count)
            ]
    env = silo.load_environment(ENV_NAME, server.project)
    for i, outputs in sorted(played.items()):
        # Each world holds its own notes only: a write in one is invisible in every other.
        assert outputs[1][0] == {"notes": [f"episode {i:03d}", f"again {i:03d}"]}
        async with silo.episode(env, "TASK-003", runs_dir=tmp_path) as direct:
            expected = [await direct.call_tool(name, args) for name, args in _calls(i)]
            await direct.finish(f"a{i}")
        assert outputs == [(r.output, r.is_error) for r in expected]
        served = run_files(server.project, finished[i].json()["runId"])
        assert direct.run_dir is not None
        assert served["result_bytes"] == (direct.run_dir / "result.json").read_bytes()
        assert served["diff_bytes"] == (direct.run_dir / "state-diff.json").read_bytes()


def test_a_public_host_without_a_token_is_refused(tmp_path: Path) -> None:
    env = child_env()
    env.pop("SILO_SERVE_TOKEN", None)
    done = subprocess.run(
        serve_command("--task", "TASK-001", "--transport", "http", "--host", "0.0.0.0"),
        cwd=make_project(tmp_path / "project"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith('error: serve_unprotected: Refusing to serve on "0.0.0.0"')


def test_ctrl_c_finishes_every_open_episode_before_exit(server: Server, tmp_path: Path) -> None:
    project = Path(shutil.copytree(server.project, tmp_path / "project"))
    shutil.rmtree(project / ".silo" / "runs")
    with running(project) as own:
        match = re.fullmatch(
            r'Serving "sales" at (http://127\.0\.0\.1:\d+) — MCP: \1/episodes/(\w+)/mcp',
            own.line,
        )
        assert match is not None, own.line
        base = match.group(1)
        second = httpx2.post(f"{base}/episodes", json={"task": "TASK-002"}, timeout=30)
        assert second.status_code == 201
        ids = [match.group(2), second.json()["id"]]
        statuses = [httpx2.get(f"{base}/episodes/{i}", timeout=30).json() for i in ids]
        assert [s["status"] for s in statuses] == ["open", "open"]
        assert own.stop() == 0
    for status in statuses:
        files = run_files(project, status["runId"])
        assert files["result"]["terminationReason"] == "cancelled"
        assert files["trace"][-1]["type"] == "verifier_result"
    assert own.log.read_text(encoding="utf-8").count("Run saved") == 2


def test_http_needs_asyncio(server: Server) -> None:
    done = silo_cli(
        "--backend", "trio", "serve", "--env", ENV_NAME, "--task", "TASK-001",
        "--transport", "http", "--port", "0", cwd=server.project,
    )  # fmt: skip
    assert done.returncode == 2 and "runs on asyncio" in done.stderr


async def test_an_instance_is_served_graded_and_written_as_run_and_episode_do(
    server: Server, tmp_path: Path
) -> None:
    # A task family's instance (DESIGN.md section 18), played by three drivers: the server's
    # (another process: it builds the instance itself), an episode and run() here.
    task_id = "hand-over-account#5"
    env = silo.load_environment(ENV_NAME, server.project)
    calls = [(call.tool, call.input) for call in env.instance(task_id).gold_calls()]
    opened = await open_episode(server, task_id)
    async with mcp_client(opened["url"]) as mcp:
        assert env.task(task_id).instruction in str(mcp.session.instructions)
        outputs = [await mcp.call_tool(name, args) for name, args in calls]
    async with http() as client:
        url = f"{server.url}/episodes/{opened['id']}/finish"
        finished = (await client.post(url, json={"answer": "done"})).json()
    assert not any(o.is_error for o in outputs)
    assert finished["result"]["passed"] is True
    served = run_files(server.project, finished["runId"])
    async with silo.episode(env, task_id, runs_dir=tmp_path / "episode") as direct:
        for name, args in calls:
            await direct.call_tool(name, args)
        await direct.finish("done")
    agent = ScriptedAgent([ScriptedCall(name, args) for name, args in calls], answer="done")
    ran = await silo.run(env, task_id, agent, runs_dir=tmp_path / "run")
    assert direct.run_dir is not None and ran.run_dir is not None
    for name, key in (("result.json", "result_bytes"), ("state-diff.json", "diff_bytes")):
        assert (
            served[key] == (direct.run_dir / name).read_bytes() == (ran.run_dir / name).read_bytes()
        )
