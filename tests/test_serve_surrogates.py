r"""Lone surrogates and deep nesting on every HTTP server (DESIGN §17, §23; issue 32, point 1).

Also the token a client could never send (point 6), and what the scripted model cannot read.

``json.loads`` turns ``"\ud800"`` into a string UTF-8 cannot encode; a task id, an answer or a
tool output holding one is escaped like any other string, on the wire and on disk, and reads
back as the same string. Never a 500, a closed socket or a traceback (each server's stderr is
checked when it stops). The servers are real processes on 127.0.0.1, driven with raw bytes.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .hardening_support import Served, make_hardening_project, scripted_model, served
from .peers import require_extra
from .serve_support import child_env, run_files, serve_command

require_extra("mcp")
require_extra("harness-servers")

import httpx2  # noqa: E402 - after the check
from websockets.sync.client import connect  # noqa: E402 - after the check

DEEP = b"[" * 100_000 + b"]" * 100_000
JSON = {"Content-Type": "application/json"}
#: A 2026-07-28 MCP request carries who is asking in each message (no handshake).
META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},'
    b'"io.modelcontextprotocol/clientCapabilities":{}}'
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hardening_project(tmp_path_factory.mktemp("surrogates") / "project")


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "project"))


@pytest.fixture
def mcp(project: Path) -> Iterator[Served]:
    with served(project, "mcp") as server:
        yield server


def _mcp_call(url: str, name: str, arguments: bytes) -> httpx2.Response:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        **JSON,
    }
    body = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"%s",' % name.encode()
    body += b'"arguments":' + arguments + b"," + META + b"}}"
    return httpx2.post(url, content=body, headers=headers, timeout=30)


def _written_answer(project: Path, run_id: str) -> tuple[Any, bytes]:
    files = run_files(project, run_id)
    return files["result"]["agentOutput"], files["result_bytes"]


def test_mcp_a_lone_surrogate_task_or_answer_is_escaped_on_the_wire_and_on_disk(
    project: Path, mcp: Served
) -> None:
    first = mcp.info["episodes"][0]
    with httpx2.Client(base_url=mcp.url, timeout=30) as http:
        unknown = http.post("/episodes", content=b'{"task":"\\ud800"}', headers=JSON)
        finished = http.post(f"/episodes/{first['id']}/finish", content=b'{"answer":"a\\udc00"}')
        status = http.get(f"/episodes/{first['id']}")
        opened = http.post("/episodes", json={"task": "TASK-002"}).json()
        submitted = _mcp_call(opened["url"], "submit", b'{"answer":"\\ud83d!"}')
        after = _mcp_call(opened["url"], "list_users", b"{}")
        listed = http.get("/episodes")
        second = http.get(f"/episodes/{opened['id']}")
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "task_not_found"
    assert '"\ud800"' in unknown.json()["error"]["message"]
    assert b'\\"\\ud800\\"' in unknown.content  # escaped: the body is UTF-8
    for response in (finished, status):
        assert response.status_code == 200, response.text
        assert response.json()["status"] == "finished"
        assert response.json()["result"]["agentOutput"] == "a\udc00"
    assert submitted.status_code == 200 and submitted.json()["result"]["isError"] is False
    assert after.status_code == 200  # the ended episode's endpoint answers, as always
    assert after.json()["result"]["structuredContent"]["code"] == "invalid_state"
    assert [e["status"] for e in listed.json()["episodes"]] == ["finished", "finished"]
    assert second.json()["result"]["agentOutput"] == "\ud83d!"
    for status_of, answer in ((finished, "a\udc00"), (second, "\ud83d!")):
        read_back, raw = _written_answer(project, status_of.json()["runId"])
        assert read_back == answer
        assert answer.encode("utf-8", "backslashreplace") in raw  # escaped on disk too
    assert "silo-async serve:" not in mcp.stderr()  # no episode failed


def _frame(ws: Any, message: dict[str, Any] | bytes) -> dict[str, Any]:
    ws.send(message if isinstance(message, bytes) else json.dumps(message))
    answer: dict[str, Any] = json.loads(ws.recv(timeout=30))
    return answer


def test_openenv_a_lone_surrogate_or_a_deep_frame_is_answered_and_the_socket_stays(
    project: Path,
) -> None:
    with (
        served(project, "openenv") as server,
        connect(server.info["ws"], max_size=None, open_timeout=30) as ws,
    ):
        unknown = _frame(ws, {"type": "reset", "data": {"task": "\ud800"}})
        deep = _frame(ws, DEEP)
        reset = _frame(ws, {"type": "reset", "data": {"task": "TASK-001"}})
        call = {"type": "call_tool", "tool_name": "ghost", "arguments": {"structured": True}}
        ghost = _frame(ws, {"type": "step", "data": call})
        answer = {"type": "call_tool", "tool_name": "submit", "arguments": {"answer": "\udc00"}}
        submitted = _frame(ws, {"type": "step", "data": answer})
    assert unknown["type"] == "error" and '"\ud800"' in unknown["data"]["message"]
    assert deep["type"] == "error" and deep["data"]["code"] == "INVALID_JSON"
    assert reset["type"] == "observation"
    assert ghost["data"]["observation"]["result"]["data"] == {"half": "\ud83d", "\ud83d": 1}
    assert submitted["data"]["done"] is True
    run_id = submitted["data"]["observation"]["metadata"]["runId"]
    assert _written_answer(project, run_id)[0] == "\udc00"


def test_nemo_gym_lone_surrogates_and_deep_bodies_are_never_a_500(project: Path) -> None:
    part = {"type": "output_text", "text": "\ud800"}
    response = {"output": [{"type": "message", "content": [part]}]}
    with served(project, "nemo-gym") as server, httpx2.Client(base_url=server.url) as http:
        answers = [
            http.post("/seed_session", content=b'{"task":"\\ud800"}', headers=JSON),
            http.post("/seed_session", content=DEEP, headers=JSON),
            http.post("/seed_session", json={"task": "TASK-001"}),
            http.post("/ghost", json={"structured": True}),
            http.post("/jot", content=b'{"text":"\\udc00"}', headers=JSON),
            http.post("/ghost", content=DEEP, headers=JSON),
            http.post("/verify", content=json.dumps({"response": response}).encode(), headers=JSON),
        ]
        typed = {"resources_session_id": "\udfff", "task_data": {"task": "TASK-002"}}
        seeded = http.post("/seed_session", content=json.dumps(typed).encode(), headers=JSON)
        closed = http.post("/close_session", content=json.dumps(typed).encode(), headers=JSON)
    statuses = [a.status_code for a in answers]
    assert statuses == [404, 400, 200, 200, 200, 400, 200], [a.text[:200] for a in answers]
    assert answers[1].json()["error"]["code"] == "invalid_json"
    assert answers[3].json() == {"half": "\ud83d", "\ud83d": 1}
    assert answers[4].json() == {"notes": ["\udc00"]}
    verified = answers[6].json()
    assert verified["response"] == response and verified["passed"] is False
    assert _written_answer(project, verified["silo_run_id"])[0] == "\ud800"
    assert seeded.json() == closed.json() == {"resources_session_id": "\udfff"}


@pytest.mark.parametrize(("protocol", "by"), [("mcp", "flag"), ("nemo-gym", "env")])
def test_a_token_that_is_not_utf8_is_one_coded_line(project: Path, protocol: str, by: str) -> None:
    # Bytes that are not UTF-8 reach Python as lone surrogates (it was internal_error).
    command = [*serve_command("--protocol", protocol, "--transport", "http", "--port", "0")]
    if protocol == "mcp":
        command += ["--task", "TASK-001"]
    env: dict[bytes, bytes] = {k.encode(): v.encode() for k, v in child_env().items()}
    args: list[bytes] = [part.encode() for part in command]
    if by == "flag":
        args += [b"--token", b"s3cr\xff\xfet"]
    else:
        env[b"SILO_SERVE_TOKEN"] = b"\xc3\x28"
    done = subprocess.run(args, cwd=project, env=env, capture_output=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.startswith(b"error: token_invalid: The token (--token or SILO_SERVE_TOKEN)")
    assert done.stderr.count(b"\n") == 1 and b"\xff" not in done.stderr


#: A scripted model that answers with what it was told (a lone surrogate included).
ECHO = """from silo_async.testing import Reply


def script(request):
    return Reply(text="heard " + request.task)
"""


def test_the_scripted_model_answers_what_it_cannot_read_and_keeps_serving(tmp_path: Path) -> None:
    # A 100,000-deep body killed the server's thread: every later request was refused.
    (tmp_path / "echo.py").write_text(ECHO, encoding="utf-8")
    chat = b'{"messages":[{"role":"user","content":"a\\ud800"}]}'
    with scripted_model(tmp_path / "echo.py") as model, httpx2.Client(base_url=model.url) as http:
        answers = [
            http.post("/v1/chat/completions", content=body, headers=JSON)
            for body in (DEEP, b"[1]", b"{not json", chat)
        ]
        with socket.create_connection((model.host, model.port), timeout=30) as raw:
            raw.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: ten\r\n\r\n")
            bad_length = raw.recv(65536)
        after = http.post("/v1/chat/completions", content=chat, headers=JSON)
    assert [a.status_code for a in answers] == [400, 400, 400, 200]
    assert answers[3].json()["choices"][0]["message"]["content"] == "heard a\ud800"
    assert bad_length.startswith(b"HTTP/1.1 400 ") and b"is not a number" in bad_length
    assert after.status_code == 200
