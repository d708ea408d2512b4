"""A long-lived server stays small (DESIGN §23; issue 32, point 5).

``--keep-finished N``: the newest N finished episodes (NeMo Gym: ended sessions) are remembered,
older ones are forgotten (404 ``episode_not_found``) while their run directories stay; ``silo-async
scripted-model`` keeps no request history. Then the servers' resident memory, read from
``/proc``: the contract is 100,000 items within 20 MB of 1,000, which
``benchmarks/bench_serve_memory.py`` measures in full; here the same code plays a few hundred
items past a small ``keep_finished`` and the growth must stay far below what the old servers
kept (about 1.6 KB per finished episode, a request record per model request).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from silo_async.testing import ScriptedModelServer

from .hardening_support import make_hardening_project, served
from .peers import require_extra

require_extra("mcp")

import httpx2  # noqa: E402 - after the check

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_serve_memory.py"
TOKEN = {"Authorization": "Bearer long-life"}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hardening_project(tmp_path_factory.mktemp("long") / "project")


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "project"))


def test_the_oldest_finished_episodes_are_forgotten_and_their_runs_stay(project: Path) -> None:
    with served(project, "mcp", "--keep-finished", "2") as server:
        first = server.info["episodes"][0]
        with httpx2.Client(base_url=server.url, timeout=30) as http:
            opened = [first] + [http.post("/episodes", json={}).json() for _ in range(3)]
            runs = [
                http.post(f"/episodes/{e['id']}/finish", json={"answer": "x"}).json()["runId"]
                for e in opened
            ]
            still_open = http.post("/episodes", json={}).json()
            statuses = [http.get(f"/episodes/{e['id']}") for e in opened]
            endpoint = http.post(opened[0]["url"], json={})
            listed = http.get("/episodes").json()
            after_forgotten = http.get("/episodes", params={"after": opened[0]["id"]})
    assert [s.status_code for s in statuses] == [404, 404, 200, 200]
    assert statuses[0].json()["error"]["code"] == "episode_not_found"
    assert endpoint.status_code == 404
    assert [e["id"] for e in listed["episodes"]] == [
        opened[2]["id"],
        opened[3]["id"],
        still_open["id"],
    ]
    assert after_forgotten.status_code == 400
    for run_id in runs:  # forgotten by the server, never by the disk
        assert (project / ".silo" / "runs" / run_id / "result.json").is_file()


def test_nemo_gym_forgets_the_oldest_ended_sessions_abandoned_ones_too(project: Path) -> None:
    def session(http: httpx2.Client) -> httpx2.Client:
        assert http.post("/seed_session", json={"task": "TASK-001"}).status_code == 200
        return http

    flags = ("--keep-finished", "2", "--timeout-ms", "1500")
    with served(project, "nemo-gym", *flags) as server:
        clients = [httpx2.Client(base_url=server.url, timeout=30) for _ in range(4)]
        try:
            abandoned = session(clients[0])
            for _ in range(600):  # it ends at its deadline, nobody calling, and counts as ended
                if abandoned.post("/list_users", json={}).status_code == 400:
                    break
                abandoned.post("/nap", json={"seconds": 0.05})
            verified, closed, last = (session(c) for c in clients[1:])
            row = {"task": "TASK-001", "response": {"output": []}}
            reward = verified.post("/verify", json=row).json()["reward"]
            closed.post("/close_session", json={})
            again = last.post("/verify", json=row).json()
            forgotten = [c.post("/list_users", json={}) for c in (abandoned, verified)]
            remembered = closed.post("/list_users", json={})
            reverified = last.post("/verify", json=row).json()
        finally:
            for client in clients:
                client.close()
    for response in forgotten:
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "session_not_found"
    assert remembered.status_code == 400
    assert remembered.json()["code"] == "invalid_state"
    assert reverified["silo_run_id"] == again["silo_run_id"]
    assert reverified["reward"] == again["reward"] == reward


async def test_the_library_server_keeps_requests_only_with_history(
    anyio_backend: str,
) -> None:
    pytest.importorskip("openai")
    from openai import AsyncOpenAI

    for history in (True, False):
        async with ScriptedModelServer(lambda request: "ok", history=history) as model:
            client = AsyncOpenAI(base_url=model.base_url, api_key="none", max_retries=0)
            for _ in range(3):
                await client.chat.completions.create(model="m", messages=[])
            await client.close()
        assert model.served == 3
        assert len(model.requests) == (3 if history else 0)


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_bench_serve_memory", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("kind", "baseline", "items", "options"),
    [
        ("mcp", 200, 1000, {"keep_finished": 50}),
        ("nemo_gym", 200, 800, {"keep_finished": 50}),
        ("scripted_model", 500, 3000, {}),
    ],
)
def test_memory_stays_flat_past_what_the_server_keeps(
    kind: str, baseline: int, items: int, options: dict[str, int]
) -> None:
    got = _bench().measure(kind, baseline, items, **options)
    growth_kib = got["after_kib"] - got["baseline_kib"]
    # Far below what the old servers kept for these items (MCP ~1.6 KB a finished episode,
    # NeMo Gym a record per typed session, the scripted model every request), far above the
    # noise of the allocator.
    assert growth_kib < 768, got
