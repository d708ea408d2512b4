"""Conformance to DESIGN.md section 8 (MCP: ``silo-async serve``).

As a reader of DESIGN.md alone would check it: the command is run as a user runs it (a
subprocess in a fresh ``init --template crm`` project) and driven only through the official
``mcp`` client (stdio and streamable HTTP) and plain HTTP requests on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest

from .peers import require_extra

require_extra("mcp")

import httpx2  # noqa: E402 - after the check: the mcp SDK brings it
import mcp.client.stdio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.types import TextContent, TextResourceContents  # noqa: E402

pytestmark = pytest.mark.anyio

ENV = "sales"
TOKEN = "contract-token"

#: A slow tool that notes its own cancellation in a file (the server is another process).
NAP = '''"""nap: sleep; a cancelled nap writes "cancelled" to the marker file."""

from pathlib import Path
from typing import Any

import anyio

import silo_async as silo


@silo.tool(
    name="nap",
    description="Sleep.",
    input_schema={
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "marker": {"type": "string"}},
        "required": ["seconds", "marker"],
        "additionalProperties": False,
    },
)
async def nap(state: Any, input: dict[str, Any]) -> Any:
    try:
        await anyio.sleep(input["seconds"])
    except anyio.get_cancelled_exc_class():
        Path(input["marker"]).write_text("cancelled")
        raise
    return "rested"
'''

#: A tool that writes a note into the world and answers with every note it holds.
NOTE = '''"""note: add a note; answers the notes this world holds."""

from typing import Any

import silo_async as silo


@silo.tool(
    name="note",
    description="Add a note.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
)
def note(state: Any, input: dict[str, Any]) -> Any:
    notes = state.setdefault("contractNotes", [])
    notes.append(input["text"])
    return {"notes": list(notes)}
'''


def silo_cli(project: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "silo_async", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh crm project, as a new user makes it, with two tools of the test's own."""
    project = tmp_path_factory.mktemp("serve") / "project"
    project.mkdir()
    assert silo_cli(project, "init", ENV, "--template", "crm").returncode == 0
    for name, source in (("nap", NAP), ("note", NOTE)):
        assert silo_cli(project, "tool", "add", name, "--env", ENV).returncode == 0
        (project / ".silo" / "environments" / ENV / "tools" / f"{name}.py").write_text(source)
    return project


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "project"))


def text(result: Any) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def runs(project: Path) -> list[Path]:
    root = project / ".silo" / "runs"
    return sorted(root.iterdir()) if root.exists() else []


def task_instruction(project: Path, task: str) -> str:
    path = project / ".silo" / "environments" / ENV / "tasks" / f"{task}.json"
    return str(json.loads(path.read_text())["instruction"])


async def until(predicate: Any, what: str, seconds: float = 15) -> None:
    """Wait for something another process does (there is no event to wait on)."""
    with anyio.fail_after(seconds):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.02)


# --- stdio ------------------------------------------------------------------------------------


@asynccontextmanager
async def stdio(project: Path, log: TextIO, *args: str) -> AsyncIterator[Client]:
    # Through sh so that the test sees the server's own exit status.
    command = [sys.executable, "-m", "silo_async", "serve", "--env", ENV, *args]
    script = f'{shlex.join(command)}; echo "exit=$?" >&2'
    params = StdioServerParameters(
        command="sh", args=["-c", script], cwd=str(project), env=dict(os.environ)
    )
    async with Client(stdio_client(params, errlog=log)) as client:
        yield client


@pytest.fixture
def log(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "stderr.txt").open("w+") as handle:
        yield handle


def logged(log: TextIO) -> str:
    log.flush()
    return Path(log.name).read_text()


def tool_list(project: Path) -> list[dict[str, Any]]:
    done = silo_cli(project, "tool", "list", "--env", ENV, "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    return list(listed["tools"] if isinstance(listed, dict) else listed)


async def test_section8_stdio_one_episode_tools_task_results_submit_and_after(
    anyio_backend: str, project: Path, log: TextIO
) -> None:
    """One stdio session checks, in order, what a client meets (a server start is ~3 s)."""
    async with stdio(project, log, "--task", "TASK-002") as client:
        listed = (await client.list_tools()).tools
        instructions = client.session.instructions
        prompts = [p.name for p in (await client.list_prompts()).prompts]
        prompt = await client.get_prompt("task")
        resource = await client.read_resource("silo://task")
        users = await client.call_tool("list_users", {})
        noted = await client.call_tool("note", {"text": "hello"})
        rested = await client.call_tool("nap", {"seconds": 0, "marker": "unused"})
        invalid = await client.call_tool("get_user", {"userID": "USR-001"})
        unknown = await client.call_tool("get_usr", {"userId": "USR-001"})
        submitted = await client.call_tool("submit", {"answer": "my answer"})
        await until(lambda: "Run saved" in logged(log), "the report on stderr")
        (run_dir,) = runs(project)
        assert (run_dir / "result.json").exists()  # written at submit, not at exit
        after = await client.call_tool("list_users", {})
        again = await client.call_tool("submit", {"answer": "other"})

    # Tools: the environment's, with their explicit JSON Schemas, plus submit.
    world = tool_list(project)
    assert [t.name for t in listed] == [t["name"] for t in world] + ["submit"]
    for served, spec in zip(listed, world, strict=False):
        assert served.input_schema == spec["inputSchema"]
        assert served.description == spec["description"]
    submit = listed[-1].input_schema
    assert submit["properties"]["answer"]["type"] == "string"
    assert submit["required"] == ["answer"]

    # The task's instruction: the server's instructions, prompt "task", resource silo://task.
    wanted = task_instruction(project, "TASK-002")
    assert instructions == wanted and "task" in prompts
    (message,) = prompt.messages
    assert isinstance(message.content, TextContent) and message.content.text == wanted
    (contents,) = resource.contents
    assert isinstance(contents, TextResourceContents) and contents.text == wanted

    # Results: text (a str as-is, else compact JSON), structuredContent for objects, isError.
    assert users.is_error is False and isinstance(users.structured_content, dict)
    assert text(users) == json.dumps(users.structured_content, separators=(",", ":"))
    assert noted.structured_content == {"notes": ["hello"]}
    assert (text(rested), rested.structured_content, rested.is_error) == ("rested", None, False)
    for rejected, code in ((invalid, "invalid_input"), (unknown, "tool_not_found")):
        assert rejected.is_error is True  # a result, never a JSON-RPC error
        assert rejected.structured_content is not None
        assert rejected.structured_content["code"] == code
        assert json.loads(text(rejected)) == rejected.structured_content

    # submit answers "Submitted." and ends the episode; after it, every call is invalid_state.
    assert (text(submitted), submitted.is_error) == ("Submitted.", False)
    for refused in (after, again):
        assert refused.is_error and refused.structured_content is not None
        assert refused.structured_content["code"] == "invalid_state"

    # The run directory under .silo/runs/, like run; submit is not a tool call of the world.
    result = json.loads((run_dir / "result.json").read_text())
    assert result["agentOutput"] == "my answer" and result["terminationReason"] == "completed"
    assert (result["toolCalls"], result["toolErrors"]) == (5, 2)
    assert {"trace.jsonl", "result.json", "state-diff.json", "run.json"} <= {
        p.name for p in run_dir.iterdir()
    }
    config = json.loads((run_dir / "run.json").read_text())["config"]
    assert config["timeoutMs"] == 120000  # --timeout-ms defaults to run's 120 s

    # The report (as run prints it) on stderr; exit 0 once the client disconnected.
    stderr = logged(log)
    assert "TASK-002" in stderr and "FAIL" in stderr
    assert stderr.rstrip().endswith("exit=0")


async def test_section8_stdio_the_grade_stays_with_the_operator_unless_revealed(
    anyio_backend: str, project: Path, log: TextIO
) -> None:
    async with stdio(project, log, "--task", "TASK-001", "--reveal-grade") as client:
        revealed = text(await client.call_tool("submit", {"answer": "nothing done"}))
    assert "FAIL" in revealed and "0.17" in revealed  # the actor check passes: nothing was done
    assert "lead is converted" in revealed  # a failed required check


async def test_section8_stdio_client_going_away_grades_the_output_so_far_within_a_second(
    anyio_backend: str, project: Path, log: TextIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Clients kill a server still there 2 s after closing its stdin; a loaded machine gets
    # more, and "exit=0" shows the server ended on its own rather than being killed.
    monkeypatch.setattr(mcp.client.stdio, "PROCESS_TERMINATION_TIMEOUT", 30.0)
    async with stdio(project, log, "--task", "TASK-001") as client:
        await client.call_tool("note", {"text": "x"})
    (run_dir,) = runs(project)
    result = json.loads((run_dir / "result.json").read_text())
    assert (result["toolCalls"], result["terminationReason"]) == (1, "completed")
    assert logged(log).rstrip().endswith("exit=0")


async def test_section8_stdio_the_call_beyond_max_tool_calls_ends_the_episode(
    anyio_backend: str, project: Path, log: TextIO
) -> None:
    async with stdio(project, log, "--task", "TASK-001", "--max-tool-calls", "1") as client:
        first = await client.call_tool("note", {"text": "1"})
        beyond = await client.call_tool("note", {"text": "2"})
    assert not first.is_error
    assert beyond.is_error and beyond.structured_content is not None
    assert beyond.structured_content["code"] == "limit_exceeded"
    (run_dir,) = runs(project)
    result = json.loads((run_dir / "result.json").read_text())
    assert (result["terminationReason"], result["toolCalls"]) == ("max_tool_calls", 1)


async def test_section8_stdio_submit_is_not_counted_against_max_tool_calls(
    anyio_backend: str, project: Path, log: TextIO
) -> None:
    async with stdio(project, log, "--task", "TASK-001", "--max-tool-calls", "1") as client:
        await client.call_tool("note", {"text": "1"})
        submitted = await client.call_tool("submit", {"answer": "done"})
    assert (text(submitted), submitted.is_error) == ("Submitted.", False)
    (run_dir,) = runs(project)
    result = json.loads((run_dir / "result.json").read_text())
    assert (result["terminationReason"], result["agentOutput"]) == ("completed", "done")


async def test_section8_stdio_timeout_ends_the_episode_with_nobody_calling(
    anyio_backend: str, project: Path, log: TextIO
) -> None:
    async with stdio(project, log, "--task", "TASK-001", "--timeout-ms", "300") as client:
        await client.call_tool("note", {"text": "1"})
        await until(lambda: len(runs(project)) == 1, "the run directory")
        await until(lambda: (runs(project)[0] / "result.json").exists(), "result.json")
        after = await client.call_tool("note", {"text": "2"})
    assert after.structured_content == {
        "code": "invalid_state",
        "message": "The episode has ended (timeout).",
    }
    result = json.loads((runs(project)[0] / "result.json").read_text())
    assert (result["terminationReason"], result["toolCalls"]) == ("timeout", 1)


def test_section8_an_environment_with_a_submit_tool_is_refused_at_start(project: Path) -> None:
    assert silo_cli(project, "tool", "add", "submit", "--env", ENV).returncode == 0
    for transport in (["--transport", "stdio"], ["--transport", "http", "--port", "0"]):
        done = silo_cli(project, "serve", "--env", ENV, "--task", "TASK-001", *transport)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: tool_name_reserved: ")
    assert runs(project) == []


def test_section8_a_non_loopback_host_without_a_token_is_refused(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SILO_SERVE_TOKEN"}
    args = ["serve", "--env", ENV, "--task", "TASK-001", "--transport", "http"]
    done = silo_cli(project, *args, "--host", "0.0.0.0", "--port", "0", env=env)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: serve_unprotected: ")
    assert runs(project) == []


def test_section8_usage_errors_exit_2(project: Path) -> None:
    base = ["serve", "--env", ENV, "--task", "TASK-001"]
    for extra in (["--transport", "websocket"], ["--prot", "1"], ["--port", "-1"]):
        assert silo_cli(project, *base, *extra).returncode == 2, extra


def test_section8_the_mcp_extra_and_a_core_without_it() -> None:
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extra = pyproject["project"]["optional-dependencies"]["mcp"]
    assert any(re.fullmatch(r"mcp\s*>=\s*2\s*,\s*<\s*3", spec) for spec in extra), extra
    probe = "import sys, silo_async; print('mcp' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False"


# --- streamable HTTP --------------------------------------------------------------------------


class Served:
    """A running ``serve --transport http`` process and what it printed at start."""

    def __init__(self, proc: subprocess.Popen[str], line: str, project: Path, err: Path) -> None:
        self.proc, self.line, self.project, self.err = proc, line, project, err

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=60)


@contextmanager
def serving(project: Path, *args: str, token_env: str | None = None) -> Iterator[Served]:
    env = {k: v for k, v in os.environ.items() if k != "SILO_SERVE_TOKEN"}
    if token_env is not None:
        env["SILO_SERVE_TOKEN"] = token_env
    err = project / "serve.stderr"
    command = [sys.executable, "-m", "silo_async", "serve", "--env", ENV, "--task", "TASK-001"]
    command += ["--transport", "http", "--port", "0", *args]
    with (
        err.open("w") as stderr,
        subprocess.Popen(
            command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True
        ) as proc,
    ):
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().rstrip("\n")
            assert line, err.read_text()
            yield Served(proc, line, project, err)
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                proc.wait(timeout=60)


@pytest.fixture(scope="module")
def http_server(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the module, protected by SILO_SERVE_TOKEN, printing JSON at start."""
    project = Path(shutil.copytree(template, tmp_path_factory.mktemp("http") / "project"))
    with serving(project, "--json", token_env=TOKEN) as served:
        yield served


AUTH = {"Authorization": f"Bearer {TOKEN}"}


def base(served: Served) -> str:
    return str(json.loads(served.line)["url"])


def http(headers: dict[str, str] | None = AUTH) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers=headers, timeout=30)


@asynccontextmanager
async def mcp_http(url: str, headers: dict[str, str] | None = AUTH) -> AsyncIterator[Client]:
    async with (
        http(headers) as session,
        Client(streamable_http_client(url, http_client=session)) as client,
    ):
        yield client


async def open_episode(served: Served, task: str) -> dict[str, Any]:
    async with http() as client:
        response = await client.post(f"{base(served)}/episodes", json={"task": task})
    assert response.status_code == 201, response.text
    opened: dict[str, Any] = response.json()
    return opened


def test_section8_http_json_startup_line(http_server: Served) -> None:
    info = json.loads(http_server.line)
    assert set(info) == {"url", "episodes"}
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", info["url"])
    assert not info["url"].endswith(":8765")  # --port 0: any free port
    (first,) = info["episodes"]
    assert set(first) == {"id", "task", "url"} and first["task"] == "TASK-001"
    assert first["url"] == f"{info['url']}/episodes/{first['id']}/mcp"


def test_section8_http_text_startup_line_and_token_flag(project: Path) -> None:
    env_free = ("--token", "flag-token")
    with serving(project, *env_free) as served:
        found = re.fullmatch(
            r'Serving "sales" at (http://127\.0\.0\.1:\d+) — MCP: (\S+)', served.line
        )
        assert found, served.line
        url, endpoint = found.groups()
        assert re.fullmatch(re.escape(url) + r"/episodes/[^/]+/mcp", endpoint)
        anonymous = httpx2.get(f"{url}/episodes/none", timeout=30)
        allowed = httpx2.get(
            f"{url}/episodes/none", headers={"Authorization": "Bearer flag-token"}, timeout=30
        )
    assert anonymous.status_code == 401
    assert allowed.status_code == 404


async def test_section8_http_every_request_needs_the_bearer_token(
    anyio_backend: str, http_server: Served
) -> None:
    url = base(http_server)
    endpoint = json.loads(http_server.line)["episodes"][0]["url"]
    async with http(None) as anonymous, http({"Authorization": "Bearer nope"}) as wrong:
        refused = [
            await anonymous.get(f"{url}/episodes/x"),
            await anonymous.post(f"{url}/episodes", json={"task": "TASK-002"}),
            await anonymous.post(endpoint, json={}),
            await wrong.get(f"{url}/episodes/x"),
        ]
    assert [r.status_code for r in refused] == [401] * 4


async def test_section8_http_open_play_inspect_finish(
    anyio_backend: str, http_server: Served
) -> None:
    opened = await open_episode(http_server, "TASK-002")
    assert set(opened) == {"id", "task", "url"} and opened["task"] == "TASK-002"
    assert opened["url"] == f"{base(http_server)}/episodes/{opened['id']}/mcp"
    status_url = f"{base(http_server)}/episodes/{opened['id']}"
    async with http() as client:
        before = (await client.get(status_url)).json()
        async with mcp_http(opened["url"]) as session:
            assert session.session.instructions == task_instruction(http_server.project, "TASK-002")
            await session.call_tool("note", {"text": "a"})
            response = await client.post(f"{status_url}/finish", json={"answer": "the answer"})
            after = await session.call_tool("note", {"text": "b"})
        shown = (await client.get(status_url)).json()
    assert before == {
        "id": opened["id"],
        "task": "TASK-002",
        "status": "open",
        "result": None,
        "runId": before["runId"],
    }
    assert response.status_code == 200
    finished = response.json()
    assert finished["status"] == "finished" and finished["runId"] == before["runId"]
    assert shown == finished
    run_dir = http_server.project / ".silo" / "runs" / before["runId"]
    assert finished["result"] == json.loads((run_dir / "result.json").read_text())
    assert finished["result"]["agentOutput"] == "the answer"
    assert finished["result"]["toolCalls"] == 1
    # A finished episode's endpoint still answers, every call invalid_state.
    assert after.is_error and after.structured_content is not None
    assert after.structured_content["code"] == "invalid_state"
    # Its report went to stderr when it ended.
    await until(lambda: "TASK-002" in http_server.err.read_text(), "the report")


async def test_section8_http_each_episode_is_a_fresh_world(
    anyio_backend: str, http_server: Served
) -> None:
    first, second = [await open_episode(http_server, "TASK-003") for _ in range(2)]
    assert first["id"] != second["id"]
    async with mcp_http(first["url"]) as one, mcp_http(second["url"]) as two:
        a = await one.call_tool("note", {"text": "only in the first"})
        b = await two.call_tool("note", {"text": "only in the second"})
    assert a.structured_content == {"notes": ["only in the first"]}
    assert b.structured_content == {"notes": ["only in the second"]}


async def test_section8_http_unknown_ids_and_tasks_are_404(
    anyio_backend: str, http_server: Served
) -> None:
    url = base(http_server)
    async with http() as client:
        missing = [
            await client.get(f"{url}/episodes/no-such-id"),
            await client.post(f"{url}/episodes/no-such-id/finish", json={"answer": "x"}),
        ]
        task = await client.post(f"{url}/episodes", json={"task": "TASK-999"})
    for response in missing:
        assert response.status_code == 404
        error = response.json()["error"]
        assert error["code"] == "episode_not_found" and error["message"]
    assert task.status_code == 404 and task.json()["error"]["code"] == "task_not_found"


async def test_section8_http_a_client_cancelling_a_call_cancels_the_tool(
    anyio_backend: str, http_server: Served, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled.txt"
    opened = await open_episode(http_server, "TASK-001")
    async with mcp_http(opened["url"]) as session:
        with anyio.move_on_after(0.5):
            await session.call_tool("nap", {"seconds": 3600, "marker": str(marker)})
        await until(marker.exists, "the tool's cancellation", seconds=20)
        still = await session.call_tool("nap", {"seconds": 0, "marker": str(marker)})
    assert marker.read_text() == "cancelled"
    assert text(still) == "rested"


def test_section8_http_ctrl_c_finishes_open_episodes_before_exit(project: Path) -> None:
    with serving(project, "--json") as served:
        info = json.loads(served.line)
        url = info["url"]
        second = httpx2.post(f"{url}/episodes", json={"task": "TASK-002"}, timeout=30).json()
        ids = [info["episodes"][0]["id"], second["id"]]
        run_ids = [httpx2.get(f"{url}/episodes/{i}", timeout=30).json()["runId"] for i in ids]
        served.stop()
    for run_id in run_ids:
        result = project / ".silo" / "runs" / run_id / "result.json"
        assert result.exists(), run_id  # graded and written before the process exited
        assert json.loads(result.read_text())["terminationReason"]
