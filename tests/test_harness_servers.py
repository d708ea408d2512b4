"""The OpenEnv and NeMo Gym servers' shared parts in process: held episodes, the access guard."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from typing import Any

import anyio
import pytest

from silo_async._limits import Limits
from silo_async._options import RunOptions

from .harness_players import Plays
from .harness_support import read_run, run_ids, serving
from .peers import require_extra
from .worlds import ENV

require_extra("harness-servers")

from websockets.asyncio.client import connect  # noqa: E402 - after the check
from websockets.exceptions import ConnectionClosed  # noqa: E402 - after the check

from silo_async.serve._access import Access  # noqa: E402 - it needs the extra
from silo_async.serve._harness_common import Guard, HeldEpisodes  # noqa: E402 - it needs the extra
from silo_async.serve._host import CapacityReachedError  # noqa: E402 - it needs the extra
from silo_async.serve._nemo_gym import final_text  # noqa: E402 - it needs the extra

pytestmark = pytest.mark.anyio


async def test_held_episodes_are_bounded_and_each_ends_written_once() -> None:
    ended: list[Any] = []
    options = RunOptions(limits=Limits(5, None, None))
    held = HeldEpisodes(ENV, options, None, "test", ended.append, 1)
    async with held.running():
        first = await held.open("TASK-ANSWER")
        with pytest.raises(CapacityReachedError):
            await held.open("TASK-ANSWER")
        await first.finish("done")
        second = await held.open("TASK-ANSWER")  # the slot was freed when the first ended
    assert second.finished and second.result is not None
    assert second.result.termination_reason == "cancelled"  # open when the server stopped
    assert first.result is not None
    assert [r.run_id for r in ended] == [first.result.run_id, second.result.run_id]


async def _call(guard: Guard, kind: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        sent.append({"type": "reached"})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        sent.append(message)

    guard._app = app
    raw = [(k.encode(), v.encode()) for k, v in headers.items()]
    await guard({"type": kind, "headers": raw, "path": "/ws"}, receive, send)
    return sent


@pytest.mark.parametrize("kind", ["http", "websocket"])
async def test_the_guard_refuses_foreign_hosts_web_pages_and_missing_tokens(kind: str) -> None:
    access = Access.build(port=8000, bound="127.0.0.1", token="s3cret")
    guard = Guard(lambda *a: None, access)  # type: ignore[arg-type]
    auth = {"authorization": "Bearer s3cret"}
    ok = await _call(guard, kind, {"host": "127.0.0.1:8000", **auth})
    assert ok == [{"type": "reached"}]
    for headers in (
        {"host": "evil.example:8000", **auth},
        {"host": "127.0.0.1:8000", "origin": "http://evil.example", **auth},
        {"host": "localhost:8000"},
    ):
        refused = await _call(guard, kind, headers)
        assert {"type": "reached"} not in refused
        if kind == "websocket":
            assert refused[0]["type"] == "websocket.close"
        else:
            assert refused[0]["status"] in (401, 403, 421)


def test_the_answer_is_the_last_output_text_of_the_response() -> None:
    response = {
        "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "first"}]},
            {"type": "function_call", "name": "x", "arguments": "{}"},
            {"type": "message", "content": [{"type": "output_text", "text": "final"}]},
            {"type": "reasoning", "summary": []},
        ]
    }
    assert final_text(response) == "final"
    assert final_text({"output": []}) is None
    assert final_text(None) is None


def test_sigint_ends_an_open_session_cancelled_and_written(plays: Plays) -> None:
    project = plays.project
    before = run_ids(project)

    async def hold_then_interrupt(url: str, pid: int) -> None:
        async with connect(url.replace("http", "ws", 1) + "/ws") as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"task": "TASK-001"}}))
            assert json.loads(await ws.recv())["type"] == "observation"
            os.kill(pid, signal.SIGINT)  # the session is open: it must end, written
            with anyio.fail_after(30), contextlib.suppress(ConnectionClosed):
                await ws.recv()  # the server closes the socket once the episode is written

    with serving(project, "openenv") as info:
        anyio.run(hold_then_interrupt, info["url"], info["pid"])
    (run_id,) = run_ids(project) - before
    assert read_run(project, run_id)["result"]["terminationReason"] == "cancelled"
