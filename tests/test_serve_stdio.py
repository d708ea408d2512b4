"""``silo-async serve`` over stdio, driven by the official mcp client as a subprocess."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import anyio
import pytest

from .peers import require_extra
from .serve_support import (
    ENV_NAME,
    child_env,
    make_project,
    only_run,
    run_files,
    serve_command,
    silo_cli,
    text_of,
)

require_extra("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402 - after the check
from mcp.client import stdio as mcp_stdio  # noqa: E402 - after the check
from mcp.client.stdio import stdio_client  # noqa: E402 - after the check

pytestmark = pytest.mark.anyio

#: How long a server may take to exit after its client leaves (the SDK's own grace is 2 s).
GRACE_S = 30.0


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("serve-stdio") / "project")


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "project"))


@asynccontextmanager
async def stdio(project: Path, errlog: TextIO, *args: str) -> AsyncIterator[Client]:
    # Through sh, so the test sees the server's own exit status (a killed server prints none).
    script = f'{shlex.join(serve_command(*args))}; echo "exit=$?" >&2'
    params = StdioServerParameters(
        command="sh", args=["-c", script], cwd=str(project), env=child_env()
    )
    async with Client(stdio_client(params, errlog=errlog)) as client:
        yield client


def instruction(project: Path, task: str) -> str:
    path = project / ".silo" / "environments" / ENV_NAME / "tasks" / f"{task}.json"
    return str(json.loads(path.read_text(encoding="utf-8"))["instruction"])


async def wait_for(path: Path, text: str) -> str:
    with anyio.fail_after(10):
        # The file is written by the server process: there is no event to wait on.
        while text not in (content := path.read_text(encoding="utf-8")):  # noqa: ASYNC110
            await anyio.sleep(0.02)
    return content


async def test_submit_ends_the_episode_graded_written_and_reported(
    project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "stderr.txt"
    with log.open("w", encoding="utf-8") as errlog:
        async with stdio(project, errlog, "--task", "TASK-001", "--reveal-grade") as client:
            assert client.session.instructions == instruction(project, "TASK-001")
            names = [t.name for t in (await client.list_tools()).tools]
            users = await client.call_tool("list_users", {})
            invalid = await client.call_tool("get_user", {"userID": "USR-001"})
            submitted = await client.call_tool("submit", {"answer": "done"})
            # The report is on stderr as soon as the episode ends, not when the process exits.
            report = await wait_for(log, "Run saved")
            after = await client.call_tool("list_users", {})
    assert names[-3:] == ["nap", "jot", "submit"] and "list_users" in names
    assert not users.is_error and users.structured_content["total"] > 0
    assert invalid.is_error and invalid.structured_content["code"] == "invalid_input"
    grade = text_of(submitted)
    assert not submitted.is_error and "Result" in grade and "FAIL" in grade
    assert after.is_error and after.structured_content["code"] == "invalid_state"
    assert "Task        TASK-001" in report
    assert "exit=0" in log.read_text(encoding="utf-8")
    files = run_files(project, only_run(project))
    result = files["result"]
    assert (result["agentOutput"], result["toolCalls"], result["toolErrors"]) == ("done", 2, 1)
    assert result["terminationReason"] == "completed"


async def test_a_client_going_away_grades_the_output_so_far_at_once(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client kills a server still running 2 s after closing its stdin; on a loaded machine
    # the test grants more, and "exit=0" below shows the server went on its own, not killed.
    monkeypatch.setattr(mcp_stdio, "PROCESS_TERMINATION_TIMEOUT", GRACE_S)
    log = tmp_path / "stderr.txt"
    with log.open("w", encoding="utf-8") as errlog:
        async with stdio(project, errlog, "--task", "TASK-002") as client:
            await client.call_tool("list_users", {})
            closing_at = time.time()
    # Written when the client left, not at the task's time limit (120 s).
    written = project / ".silo" / "runs" / only_run(project) / "result.json"
    assert written.stat().st_mtime - closing_at < GRACE_S
    stderr = log.read_text(encoding="utf-8")
    assert "exit=0" in stderr and "Task        TASK-002" in stderr
    result = run_files(project, only_run(project))["result"]
    assert (result["terminationReason"], result["toolCalls"]) == ("completed", 1)


async def test_a_limit_ends_the_episode_and_later_calls_answer_invalid_state(
    project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "stderr.txt"
    args = ("--task", "TASK-001", "--max-tool-calls", "1", "--token-limit", "50", "--json")
    with log.open("w", encoding="utf-8") as errlog:
        async with stdio(project, errlog, *args) as client:
            await client.call_tool("list_users", {})
            beyond = await client.call_tool("list_users", {})
            await wait_for(log, "terminationReason")
            after = await client.call_tool("submit", {"answer": "late"})
    assert beyond.is_error and beyond.structured_content["code"] == "limit_exceeded"
    assert after.structured_content == {
        "code": "invalid_state",
        "message": "The episode has ended (max_tool_calls).",
    }
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[-1] == "exit=0"
    report = json.loads(lines[-2])  # --json: the report is one JSON line, as `run --json`
    assert (report["terminationReason"], report["toolCalls"]) == ("max_tool_calls", 1)
    run_start = run_files(project, only_run(project))["trace"][0]
    assert run_start["config"] == {"maxToolCalls": 1, "timeoutMs": 120000, "tokenLimit": 50}
    assert report["runDir"] == f".silo/runs/{only_run(project)}"


def test_an_environment_with_a_submit_tool_is_refused_at_start(project: Path) -> None:
    assert silo_cli("tool", "add", "submit", "--env", ENV_NAME, cwd=project).returncode == 0
    done = silo_cli("serve", "--env", ENV_NAME, "--task", "TASK-001", cwd=project)
    assert done.returncode == 1
    assert done.stderr.startswith('error: tool_name_reserved: Environment "sales" has a tool')
    assert not (project / ".silo" / "runs").exists() or not any(
        (project / ".silo" / "runs").iterdir()
    )


def test_http_only_flags_are_usage_errors_with_stdio(project: Path) -> None:
    done = silo_cli("serve", "--env", ENV_NAME, "--task", "TASK-001", "--port", "0", cwd=project)
    assert done.returncode == 2 and "--port only applies to --transport http" in done.stderr


def test_the_core_never_imports_the_mcp_sdk() -> None:
    probe = (
        "import sys, silo_async, silo_async.cli; "
        "print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('mcp', 'mcp_types', 'uvicorn')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
