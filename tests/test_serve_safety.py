"""Serving safely (DESIGN.md section 17), checked over the wire as a hostile client would.

Real servers (``silo-async serve`` subprocesses on 127.0.0.1), driven by the official mcp
client where a well-behaved client is the point and by raw ``httpx2`` requests and pipe bytes
for malformed traffic. Every loop is bounded; every server's stderr is read at the end and
holds no ``Traceback``. HTTP runs on asyncio only (``serve --transport http`` refuses trio);
the stdio server is played on both backends.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from .peers import require_extra
from .serve_support import (
    ENV_NAME,
    child_env,
    make_project,
    run_files,
    serve_command,
    text_of,
    until_called,
)

require_extra("mcp")

import httpx2  # noqa: E402 - after the check
from mcp import Client, StdioServerParameters  # noqa: E402 - after the check
from mcp.client import stdio as mcp_stdio  # noqa: E402 - after the check
from mcp.client.stdio import stdio_client  # noqa: E402 - after the check
from mcp.client.streamable_http import streamable_http_client  # noqa: E402 - after the check

from silo_async.serve._wire import NOT_ONE_MESSAGE  # noqa: E402 - it needs the extra

pytestmark = pytest.mark.anyio

TOKEN = "safety-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ORIGIN = "https://app.example:8443"
JSON = {"Content-Type": "application/json"}
DEEP = b"[" * 10_000 + b"]" * 10_000

#: A tool whose output holds a lone surrogate (half of an emoji), which UTF-8 cannot encode.
GHOST_TOOL = '''"""Tool ghost: answers with a lone surrogate, as text or inside an object."""

from typing import Any

import silo_async as silo


@silo.tool(
    name="ghost",
    description="Answer with half an emoji.",
    input_schema={
        "type": "object",
        "properties": {"structured": {"type": "boolean"}},
        "additionalProperties": False,
    },
)
def ghost(state: Any, input: dict[str, Any]) -> Any:
    half = "\\ud83d"
    return {"half": half, half: 1} if input.get("structured") else f"a{half}b"
'''

#: A tool that notes that it has started (in the file given), then sleeps for an hour.
DOZE_TOOL = '''"""Tool doze: writes "started" to the file given, then sleeps for an hour."""

from pathlib import Path
from typing import Any

import anyio

import silo_async as silo


@silo.tool(
    name="doze",
    description="Sleep for an hour.",
    input_schema={
        "type": "object",
        "properties": {"started": {"type": "string"}},
        "required": ["started"],
        "additionalProperties": False,
    },
)
async def doze(state: Any, input: dict[str, Any]) -> Any:
    Path(input["started"]).write_text("started", encoding="utf-8")
    await anyio.sleep(3600)
    return "rested"
'''


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_project(tmp_path_factory.mktemp("serve-safety") / "project")
    for name, source in (("ghost", GHOST_TOOL), ("doze", DOZE_TOOL)):
        done = subprocess.run(
            [sys.executable, "-m", "silo_async", "tool", "add", name, "--env", ENV_NAME],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        tool = root / ".silo" / "environments" / ENV_NAME / "tools" / f"{name}.py"
        tool.write_text(source, encoding="utf-8")
    return root


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "project"))


# -- HTTP servers ----------------------------------------------------------------------------


class Server:
    """A running ``serve --transport http --json`` process."""

    def __init__(self, proc: subprocess.Popen[str], info: dict[str, Any], log: Path) -> None:
        self.proc, self.info, self.log = proc, info, log
        self.url: str = info["url"]
        self.port = int(self.url.rsplit(":", 1)[1])
        self.first: dict[str, Any] = info["episodes"][0]

    def stop(self, signum: int = signal.SIGINT) -> int:
        self.proc.send_signal(signum)
        return self.proc.wait(timeout=60)

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8")


@contextmanager
def running(project: Path, *args: str, token: str | None = TOKEN) -> Iterator[Server]:
    env = child_env()
    env.pop("SILO_SERVE_TOKEN", None)
    if token is not None:
        env["SILO_SERVE_TOKEN"] = token
    log = project / f"serve-{len(list(project.glob('serve-*.err')))}.err"
    command = serve_command(
        "--task", "TASK-001", "--transport", "http", "--port", "0", "--json", *args
    )
    with (
        log.open("w", encoding="utf-8") as stderr,
        subprocess.Popen(
            command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True
        ) as proc,
    ):
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line, log.read_text(encoding="utf-8")
            yield Server(proc, json.loads(line), log)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=60)
    assert "Traceback" not in log.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def server(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    project = Path(shutil.copytree(template, tmp_path_factory.mktemp("http") / "project"))
    args = ("--allow-origin", ORIGIN, "--allow-host", "box.example", "--max-episodes", "1000")
    with running(project, *args) as served:
        yield served


def client(headers: dict[str, str] | None = None) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={**AUTH, **(headers or {})}, timeout=30)


@asynccontextmanager
async def mcp_client(url: str, mode: str = "auto") -> AsyncIterator[Client]:
    async with (
        client() as session,
        Client(streamable_http_client(url, http_client=session), mode=mode) as mcp,
    ):
        yield mcp


async def open_episode(server: Server, task: str = "TASK-002") -> dict[str, Any]:
    async with client() as http:
        response = await http.post(f"{server.url}/episodes", json={"task": task})
    assert response.status_code == 201, response.text
    opened: dict[str, Any] = response.json()
    return opened


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    """Both protocol eras: 2026-07-28 (one exchange per call) and the initialize handshake."""
    return str(request.param)


# -- 1. Host and Origin, on every bind --------------------------------------------------------


async def test_a_foreign_host_is_421_on_every_route(server: Server) -> None:
    routes = [
        ("GET", "/episodes"),
        ("POST", "/episodes"),
        ("GET", f"/episodes/{server.first['id']}"),
        ("POST", f"/episodes/{server.first['id']}/finish"),
        ("POST", f"/episodes/{server.first['id']}/mcp"),
    ]
    hosts = ["evil.example", f"evil.example:{server.port}", "localhost.", "127.0.0.1:1@evil"]
    async with client() as http:
        for host in hosts:
            for method, path in routes:
                response = await http.request(
                    method, f"{server.url}{path}", headers={"Host": host}, json={}
                )
                assert response.status_code == 421, (host, path, response.text)
                assert response.json()["error"]["code"] == "host_not_allowed"
        for host in ("localhost", f"[::1]:{server.port}", "box.example", "box.example:1"):
            response = await http.get(f"{server.url}/episodes", headers={"Host": host})
            assert response.status_code == 200, host


async def test_a_foreign_origin_is_403_and_no_origin_is_accepted(server: Server) -> None:
    refused = ["https://evil.example", "null", f"http://localhost:{server.port + 1}"]
    refused += [f"https://127.0.0.1:{server.port}", "https://app.example"]
    admitted = [f"http://127.0.0.1:{server.port}", f"http://localhost:{server.port}", ORIGIN]
    endpoint = server.first["url"]
    async with client() as http:
        for origin in refused:
            for url in (f"{server.url}/episodes", endpoint):
                response = await http.post(url, headers={"Origin": origin}, json={})
                assert response.status_code == 403, (origin, response.text)
                assert response.json()["error"]["code"] == "origin_not_allowed"
        for origin in admitted:
            response = await http.get(f"{server.url}/episodes", headers={"Origin": origin})
            assert response.status_code == 200, origin
        assert (await http.get(f"{server.url}/episodes")).status_code == 200


async def test_host_and_origin_are_checked_on_a_public_bind_too(project: Path) -> None:
    # Bound to every interface (with a token, as required); the test reaches it on 127.0.0.1.
    with running(project, "--host", "0.0.0.0") as served:
        url = served.url.replace("0.0.0.0", "127.0.0.1")
        async with client() as http:
            host = await http.get(f"{url}/episodes", headers={"Host": "evil.example"})
            origin = await http.get(f"{url}/episodes", headers={"Origin": "https://evil.example"})
            bound = await http.get(f"{url}/episodes", headers={"Host": f"0.0.0.0:{served.port}"})
            plain = await http.get(f"{url}/episodes")
            anonymous = await http.get(f"{url}/episodes", headers={"Authorization": ""})
        async with mcp_client(served.first["url"].replace("0.0.0.0", "127.0.0.1")) as mcp:
            listed = await mcp.call_tool("list_users", {})
    assert (host.status_code, origin.status_code) == (421, 403)
    assert (bound.status_code, plain.status_code, anonymous.status_code) == (200, 200, 401)
    assert not listed.is_error


# -- 2. Episode ids are capabilities ----------------------------------------------------------


async def test_ids_carry_128_random_bits_and_a_404_names_no_other_episode(server: Server) -> None:
    opened = [await open_episode(server) for _ in range(3)]
    ids = [server.first["id"], *(o["id"] for o in opened)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids) and len(set(ids)) == len(ids)
    async with client() as http:
        missing = [
            await http.get(
                f"{server.url}/episodes/{ids[0][:-1]}{'1' if ids[0][-1] == '0' else '0'}"
            ),
            await http.post(f"{server.url}/episodes/nope/finish", json={"answer": "x"}),
            await http.post(f"{server.url}/episodes/nope/mcp", json={}),
        ]
    for response in missing:
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "episode_not_found"
        assert not any(i in response.text for i in ids)


# -- 3. Bounded resources ---------------------------------------------------------------------


async def test_episodes_beyond_max_episodes_are_503_and_finished_ones_do_not_count(
    project: Path,
) -> None:
    with running(project, "--max-episodes", "2") as served:
        async with client() as http:
            second = await http.post(f"{served.url}/episodes", json={"task": "TASK-002"})
            third = await http.post(f"{served.url}/episodes", json={"task": "TASK-002"})
            finish = f"{served.url}/episodes/{served.first['id']}/finish"
            assert (await http.post(finish, json={"answer": "done"})).status_code == 200
            again = await http.post(f"{served.url}/episodes", json={"task": "TASK-002"})
            beyond = await http.post(f"{served.url}/episodes", json={"task": "TASK-002"})
    assert second.status_code == 201
    assert third.status_code == 503 and third.json()["error"]["code"] == "capacity_reached"
    assert "--max-episodes 2" in third.json()["error"]["message"]
    assert again.status_code == 201
    assert beyond.status_code == 503


async def test_an_episode_nobody_calls_ends_at_its_deadline(project: Path) -> None:
    with running(project, "--timeout-ms", "300") as served:
        async with client() as http:
            opened = (await http.post(f"{served.url}/episodes", json={})).json()
            statuses = {}
            with anyio.fail_after(30):
                for episode_id in (served.first["id"], opened["id"]):
                    status: dict[str, Any] = {"status": "open"}
                    while status["status"] == "open":
                        await anyio.sleep(0.05)  # the deadline is the server's: nothing to await
                        status = (await http.get(f"{served.url}/episodes/{episode_id}")).json()
                    statuses[episode_id] = status
            # Finished: the slot is free again even with --max-episodes' default.
    for status in statuses.values():
        assert status["result"]["terminationReason"] == "timeout"
        assert status["result"]["agentOutput"] == ""


async def test_the_listing_is_paginated_summaries_in_opening_order(server: Server) -> None:
    for _ in range(3):
        await open_episode(server)
    async with client() as http:
        everything = (await http.get(f"{server.url}/episodes", params={"limit": 1000})).json()
        pages, after = [], None
        for _ in range(100):  # bounded: every page holds two
            params: dict[str, Any] = {"limit": 2, **({"after": after} if after else {})}
            page = (await http.get(f"{server.url}/episodes", params=params)).json()
            pages.append(page["episodes"])
            after = page["next"]
            if after is None:
                break
        default = (await http.get(f"{server.url}/episodes")).json()
        bad = [
            await http.get(f"{server.url}/episodes", params={"limit": value})
            for value in ("0", "-1", "x", "1.5", "")
        ]
        unknown = await http.get(f"{server.url}/episodes", params={"after": "nope"})
    listed = everything["episodes"]
    assert everything["next"] is None and len(listed) >= 4
    assert listed[0]["id"] == server.first["id"]
    assert all(set(e) == {"id", "task", "status", "runId"} for e in listed)
    assert [e for page in pages for e in page] == listed
    assert all(len(page) == 2 for page in pages[:-1])
    assert default["episodes"] == listed[:100]
    for response in [*bad, unknown]:
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "invalid_input"
        assert not any(e["id"] in response.text for e in listed)


# -- 4. finish takes a string answer ----------------------------------------------------------


async def test_finish_requires_a_string_answer_and_leaves_the_episode_open(
    server: Server,
) -> None:
    opened = await open_episode(server)
    finish = f"{server.url}/episodes/{opened['id']}/finish"
    async with client() as http:
        refused = [
            await http.post(finish, json={"answer": 42}),
            await http.post(finish, json={"answer": {}}),
            await http.post(finish, json={"answer": None}),
            await http.post(finish, json={}),
            await http.post(finish, content=b""),
            await http.post(finish, content=b'{"answer":' + DEEP + b"}"),
        ]
        still = (await http.get(f"{server.url}/episodes/{opened['id']}")).json()
        done = await http.post(finish, json={"answer": "42"})
    for response in refused:
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] in ("invalid_input", "invalid_json")
    assert "must be a string" in refused[0].json()["error"]["message"]
    assert still["status"] == "open"
    assert done.status_code == 200 and done.json()["result"]["agentOutput"] == "42"


# -- 5. Nothing a client sends is a 500 -------------------------------------------------------


async def test_deep_nesting_is_a_400_never_a_500(server: Server) -> None:
    async with client() as http:
        opened = await http.post(f"{server.url}/episodes", content=b'{"task":' + DEEP + b"}")
        legacy = await http.post(
            server.first["url"],
            content=b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + DEEP + b"}",
            headers={"Accept": "application/json, text/event-stream", **JSON},
        )
    assert opened.status_code == 400 and opened.json()["error"]["code"] == "invalid_json"
    assert legacy.status_code == 400 and legacy.json()["error"]["code"] == -32700


async def _legacy_session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    headers = {"Accept": "application/json, text/event-stream", **JSON}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    answer = await http.post(url, json=hello, headers=headers)
    assert answer.status_code == 200, answer.text
    headers["mcp-session-id"] = answer.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = "2025-11-25"
    notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=notified, headers=headers)).status_code == 202
    return headers


async def test_legacy_object_ids_are_refused_and_lone_surrogate_arguments_are_answered(
    server: Server,
) -> None:
    opened = await open_episode(server, "TASK-001")
    async with client() as http:
        headers = await _legacy_session(http, opened["url"])
        object_id = await http.post(
            opened["url"], content=b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
            headers=headers,
        )  # fmt: skip
        surrogate = await http.post(
            opened["url"],
            content=b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
            b'"params":{"name":"jot","arguments":{"text":"a\\ud800b"}}}',
            headers=headers,
        )
    assert object_id.status_code == 400
    assert object_id.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid request: id must be a string or an integer."},
    }
    assert surrogate.status_code == 200, surrogate.text
    result = surrogate.json()["result"]
    assert result["isError"] is False and result["structuredContent"] == {"notes": ["a\ufffdb"]}


async def test_a_batch_or_a_body_that_is_no_message_is_32600_on_both_http_paths(
    server: Server,
) -> None:
    """As stdio answers them: the legacy path answered -32602 with a raw pydantic dump."""
    opened = await open_episode(server, "TASK-001")
    bodies = [
        b'[{"jsonrpc":"2.0","id":2,"method":"ping"}]',
        b"42",
        b'{"foo":1}',
        b'{"jsonrpc":"2.0","id":3,"method":5}',
    ]
    async with client() as http:
        legacy = await _legacy_session(http, opened["url"])
        modern = {
            "Accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            **JSON,
        }
        answers = {
            era: [await http.post(opened["url"], content=b, headers=headers) for b in bodies]
            for era, headers in (("legacy", legacy), ("2026-07-28", modern))
        }
    for era, got in answers.items():
        assert [a.status_code for a in got] == [400] * len(bodies), era
        assert [a.json()["error"]["code"] for a in got] == [-32600] * len(bodies), era
    for answer in answers["legacy"]:
        assert answer.json()["error"]["message"] == NOT_ONE_MESSAGE
    assert [a.json()["id"] for a in answers["legacy"]] == [None, None, None, 3]


async def test_a_lone_surrogate_in_a_tool_output_is_sent_escaped(server: Server, mode: str) -> None:
    opened = await open_episode(server)
    async with mcp_client(opened["url"], mode) as mcp:
        text = await mcp.call_tool("ghost", {})
        structured = await mcp.call_tool("ghost", {"structured": True})
    assert text_of(text) == "a\\ud83db" and not text.is_error
    assert json.loads(text_of(structured)) == {"half": "\ud83d", "\ud83d": 1}
    assert structured.structured_content == {"half": "\\ud83d", "\\ud83d": 1}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_during_a_call_answers_it_and_finishes_every_episode(
    project: Path, mode: str, signum: int
) -> None:
    with running(project) as served:
        second = await open_episode(served)
        answer: list[Any] = []

        async def call() -> None:
            async with mcp_client(served.first["url"], mode) as mcp:
                answer.append(await mcp.call_tool("nap", {"seconds": 3600}))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await until_called(project, "nap")  # the call is in flight on the server
                assert await anyio.to_thread.run_sync(served.stop, signum) == 0
        stderr = served.stderr()
    (result,) = answer
    assert result.is_error and result.structured_content == {
        "code": "limit_exceeded",
        "message": "The call was cancelled: the episode ended (cancelled).",
    }
    runs = sorted((project / ".silo" / "runs").iterdir())
    assert len(runs) == 2 and second["id"] not in stderr
    for run in runs:
        written = run_files(project, run.name)["result"]
        assert written["terminationReason"] == "cancelled" and written["agentOutput"] == ""
    assert "Traceback" not in stderr and "Exception" not in stderr


# -- stdio -----------------------------------------------------------------------------------


@pytest.fixture(params=["asyncio", "trio"])
def server_backend(request: pytest.FixtureRequest) -> str:
    """The backend the stdio server process runs on (``silo-async --backend``)."""
    return str(request.param)


HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


class Stdio:
    """A ``serve`` stdio process driven with raw bytes (every read bounded in time)."""

    def __init__(self, proc: anyio.abc.Process) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self._out = BufferedByteReceiveStream(proc.stdout)

    async def send(self, *lines: bytes | dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        data = b"".join(
            (json.dumps(x).encode() if isinstance(x, dict) else x) + b"\n" for x in lines
        )
        await self.proc.stdin.send(data)

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(30):
            message: dict[str, Any] = json.loads(await self._out.receive_until(b"\n", 1 << 20))
        return message

    async def answers(self, count: int) -> list[dict[str, Any]]:
        return [await self.receive() for _ in range(count)]


@asynccontextmanager
async def stdio_process(project: Path, backend: str) -> AsyncIterator[Stdio]:
    command = [sys.executable, "-m", "silo_async", "--backend", backend, "serve"]
    command += ["--env", ENV_NAME, "--task", "TASK-001"]
    log = project / "stdio.err"
    with log.open("w", encoding="utf-8") as stderr:
        async with await anyio.open_process(
            command, cwd=project, env=child_env(), stderr=stderr
        ) as proc:
            try:
                yield Stdio(proc)
            finally:
                if proc.returncode is None:
                    proc.kill()
    assert "Traceback" not in log.read_text(encoding="utf-8")


async def test_stdio_answers_every_malformed_line_and_the_requests_among_them(
    project: Path, server_backend: str
) -> None:
    bad = [
        b"not json",
        b'{"jsonrpc": "2.0", "id": 2, "method": "ping"',  # truncated
        b'{"text": "\xff\xfe"}',  # not UTF-8
        b"[]",
        b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 3, "method": 5}',
        b"[" * 10_000 + b"]" * 10_000,
    ]
    async with stdio_process(project, server_backend) as stdio:
        await stdio.send(HELLO)
        assert (await stdio.receive())["id"] == 1
        await stdio.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await stdio.send(bad[0], {"jsonrpc": "2.0", "id": 10, "method": "ping"}, *bad[1:])
        await stdio.send({"jsonrpc": "2.0", "id": 11, "method": "tools/list"})
        got = await stdio.answers(len(bad) + 2)
        await stdio.send(
            {"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": 5}},
            b'{"jsonrpc":"2.0","id":13,"method":"tools/call",'
            b'"params":{"name":"jot","arguments":{"text":"a\\ud800b"}}}',
        )
        late = await stdio.answers(2)
        assert stdio.proc.stdin is not None
        await stdio.proc.stdin.aclose()
        with anyio.fail_after(30):
            assert await stdio.proc.wait() == 0
    by_id = {m["id"]: m for m in [*got, *late] if m["id"] is not None}
    refused = [m for m in got if m["id"] is None or m["id"] == 3]
    assert by_id[10]["result"] == {} and "tools" in by_id[11]["result"]
    assert len(refused) == len(bad)
    codes = sorted(m["error"]["code"] for m in refused)
    assert codes == [-32700, -32700, -32700, -32700, -32600, -32600, -32600]
    assert by_id[12]["error"]["code"] == -32602  # bad params: the request's own id
    assert by_id[13]["result"]["structuredContent"] == {"notes": ["a\\ud800b"]}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_stdio_a_signal_with_stdin_open_answers_the_call_and_exits(
    project: Path, server_backend: str, signum: int
) -> None:
    async with stdio_process(project, server_backend) as stdio:
        await stdio.send(HELLO)
        assert (await stdio.receive())["id"] == 1
        await stdio.send(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "nap", "arguments": {"seconds": 3600}}},
        )  # fmt: skip
        await stdio.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert (await stdio.receive())["id"] == 3  # served: the nap is in flight by now
        stdio.proc.send_signal(signal.Signals(signum))
        answer = await stdio.receive()
        with anyio.fail_after(30):
            assert await stdio.proc.wait() == 0  # stdin is still open
    assert answer["id"] == 2 and answer["result"]["isError"] is True
    assert answer["result"]["structuredContent"]["code"] == "limit_exceeded"
    (run,) = (project / ".silo" / "runs").iterdir()
    written = run_files(project, run.name)["result"]
    assert (written["terminationReason"], written["agentOutput"]) == ("cancelled", "")


async def test_stdio_a_lone_surrogate_output_and_a_client_leaving_without_submit(
    project: Path, server_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client kills a server still there 2 s after closing its stdin; a loaded machine may
    # need longer to grade and write, which is not what this test is about.
    monkeypatch.setattr(mcp_stdio, "PROCESS_TERMINATION_TIMEOUT", 30.0)
    log = project / "client.err"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "silo_async", "--backend", server_backend, "serve", "--env", ENV_NAME,
              "--task", "TASK-001"],
        cwd=str(project),
        env=child_env(),
    )  # fmt: skip
    with log.open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as mcp:
            text = await mcp.call_tool("ghost", {})
            structured = await mcp.call_tool("ghost", {"structured": True})
            after = await mcp.call_tool("list_users", {})
    assert text_of(text) == "a\\ud83db"
    assert structured.structured_content == {"half": "\\ud83d", "\\ud83d": 1}
    assert not after.is_error  # the server lived on
    (run,) = (project / ".silo" / "runs").iterdir()
    written = run_files(project, run.name)["result"]
    assert (written["terminationReason"], written["agentOutput"]) == ("completed", "")
    assert "Traceback" not in log.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "flag", [("--allow-origin", ORIGIN), ("--allow-host", "box.lan"), ("--max-episodes", "5")]
)
def test_the_new_http_flags_are_usage_errors_with_stdio(
    project: Path, flag: tuple[str, str]
) -> None:
    done = subprocess.run(
        serve_command("--task", "TASK-001", *flag),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and f"{flag[0]} only applies to --transport http" in done.stderr


@pytest.mark.parametrize(
    ("flag", "value"), [("--allow-host", "a b"), ("--allow-origin", "app.example")]
)
def test_an_allow_flag_that_is_no_host_or_origin_is_a_usage_error(
    project: Path, flag: str, value: str
) -> None:
    done = subprocess.run(
        serve_command("--task", "TASK-001", "--transport", "http", "--port", "0", flag, value),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and f'Invalid value for {flag}: "{value}" is not' in done.stderr
