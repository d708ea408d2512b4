"""The Ray executor against a real local Ray: one per module (2 CPUs, no dashboard).

Starting Ray takes 3-14 s and about 0.8 GB here, so the module starts it once, through
``RayExecutor.start()`` (the executor's own start: loopback, token auth), and every test's eval
creates its own two workers on it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.eval import evaluate, read_index, read_summary
from silo_async.testing import Reply, ScriptedModelServer

from .cli_support import cli
from .peers import require_extra
from .resume_support import same_eval
from .test_eval_support import bad_agent, good_agent, make_env

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")


@pytest.fixture(scope="module")
def ray_executor() -> Iterator[silo.RayExecutor]:
    require_extra("ray")
    with pytest.MonkeyPatch.context() as mp:
        # An ambient cluster where nothing answers: address=None must never try to join it.
        mp.setenv("RAY_ADDRESS", "127.0.0.1:1")
        executor = silo.RayExecutor(workers=2, concurrency=4).start()
        yield executor
        executor.shutdown()
        assert os.environ["RAY_ADDRESS"] == "127.0.0.1:1"  # the session put it back


def by_slot(eval_dir: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    lines = (eval_dir / "runs" / "index.jsonl").read_text().splitlines()
    index = [json.loads(line) for line in lines]
    return {(r["task"], r["agent"], r["run"]): r for r in index}


def assert_same_rollout_files(local: Path, remote: Path) -> int:
    a, b = by_slot(local), by_slot(remote)
    assert a.keys() == b.keys()
    for slot, record in a.items():
        for name in ("result.json", "state-diff.json"):
            mine = (local / record["runDir"] / name).read_bytes()
            theirs = (remote / b[slot]["runDir"] / name).read_bytes()
            assert mine == theirs, (slot, name)
    return len(a)


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if "Duration" not in k}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def test_crm_eval_on_ray_is_the_local_eval(
    ray_executor: silo.RayExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    common = ["eval", "--env", "crm", "--agent", f"solver={SOLVER}", "--agent", NOOP]
    common += ["--runs", "2", "--json"]
    local = cli(*common, "--out", "local")
    assert local.exit_code == 0, local.output
    remote = cli(*common, "--out", "remote", "--executor", "ray", "--workers", "2")
    assert remote.exit_code == 0, remote.stderr
    assert assert_same_rollout_files(tmp_path / "local", tmp_path / "remote") == 44

    mine, theirs = json.loads(local.stdout), json.loads(remote.stdout)
    for key in ("agents", "tasks", "ranking", "best", "planned", "finished", "complete"):
        assert without_timings(mine[key]) == without_timings(theirs[key]), key
    assert mine["config"]["executor"] == "local" and mine["infraRetries"] == 0
    assert theirs["config"] | {"workers": 2, "workerConcurrency": 32} == theirs["config"]
    assert theirs["config"]["executor"] == "ray" and theirs["infraRetries"] == 0
    assert theirs["executorStartMs"] > 0
    assert theirs == read_summary(tmp_path / "remote") | {"outDir": "remote"}
    for name in ("summary.md", "report.html"):
        assert (tmp_path / "remote" / name).stat().st_size > 0
    # one run directory per rollout, nothing else
    assert len(list((tmp_path / "remote" / "runs").iterdir())) == 44 + 1


def test_a_family_eval_on_ray_is_the_local_one(
    ray_executor: silo.RayExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Instances (DESIGN.md section 18) are built again in each worker: same tasks, same grades.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    common = ["eval", "--env", "crm", "--family", "hand-over-account", "--count", "4"]
    common += ["--split", "train", "--agent", "silo_async.testing:gold_agent", "--agent", NOOP]
    local = cli(*common, "--json", "--out", "local")
    assert local.exit_code == 0, local.output
    remote = cli(*common, "--json", "--out", "remote", "--executor", "ray", "--workers", "2")
    assert remote.exit_code == 0, remote.stderr
    assert assert_same_rollout_files(tmp_path / "local", tmp_path / "remote") == 8
    mine, theirs = json.loads(local.stdout), json.loads(remote.stdout)
    for key in ("tasks", "families"):
        assert without_timings(mine[key]) == without_timings(theirs[key]), key
    assert theirs["families"][0]["agents"]["silo_async.testing:gold_agent"]["passRate"] == 1.0


def test_faults_and_their_baseline_on_ray_are_the_local_ones(
    ray_executor: silo.RayExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    common = ["eval", "--env", "crm", "--agent", f"solver={SOLVER}", "--runs", "2", "--json"]
    common += ["--faults", "unavailable@0.2,latency=1ms@0.2", "--fault-seed", "7", "--baseline"]
    local = cli(*common, "--out", "local")
    assert local.exit_code == 0, local.output
    remote = cli(*common, "--out", "remote", "--executor", "ray", "--workers", "2")
    assert remote.exit_code == 0, remote.stderr

    def rollouts(eval_dir: Path) -> dict[tuple[str, int, bool], tuple[bytes, bytes]]:
        lines = [json.loads(x) for x in (eval_dir / "runs/index.jsonl").read_text().splitlines()]
        return {
            (r["task"], r["run"], r.get("baseline", False)): tuple(
                (eval_dir / r["runDir"] / name).read_bytes()
                for name in ("result.json", "state-diff.json")
            )
            for r in lines
        }

    mine, theirs = rollouts(tmp_path / "local"), rollouts(tmp_path / "remote")
    assert len(mine) == 44 and mine == theirs  # faulted and baseline rollouts alike
    assert any(b'"injectedFaults": 0' not in files[0] for files in mine.values())
    local_summary, remote_summary = json.loads(local.stdout), json.loads(remote.stdout)
    assert without_timings(local_summary["baseline"]) == without_timings(remote_summary["baseline"])


def _probe_agent(seen: Path, active: Path) -> Any:
    async def agent(ctx: silo.AgentContext) -> str:
        mark = active / f"{os.getpid()}-{id(ctx)}"
        mark.touch()
        (seen / f"{os.getpid()}-{len(os.listdir(active))}").write_text(str(os.nice(0)))
        await anyio.sleep(0.05)
        mark.unlink()
        return await good_agent(ctx)

    return agent


@pytest.mark.anyio
async def test_the_local_ray_is_fresh_loopback_token_protected_and_limited(
    ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    address = ray_executor.ray_address
    assert address is not None and address.startswith("127.0.0.1:")
    assert os.environ["RAY_AUTH_MODE"] == "token" and os.environ["RAY_AUTH_TOKEN"]
    assert "RAY_ADDRESS" not in os.environ  # hidden from the workers while the session lasts
    seen, active = tmp_path / "seen", tmp_path / "active"
    seen.mkdir()
    active.mkdir()
    summary = await evaluate(
        make_env(),
        None,
        {"probe": _probe_agent(seen, active)},
        runs=12,
        concurrency=3,  # the eval's limit, over both workers of 4 each
        executor=ray_executor,
    )
    assert summary.complete and all(r.passed for r in summary.records)
    pids = {int(name.split("-")[0]) for name in os.listdir(seen)}
    assert len(pids) == 2 and os.getpid() not in pids  # two worker processes did the work
    assert max(int(name.split("-")[1]) for name in os.listdir(seen)) <= 3
    niceness = {p.read_text() for p in seen.iterdir()}
    assert niceness == {str(os.nice(0))}  # not Ray's default niceness 15


def test_a_model_agent_travels_as_its_spec(
    ray_executor: silo.RayExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    reply = Reply(text="Nothing needed doing.", input_tokens=120, output_tokens=9)
    with ScriptedModelServer(lambda request: reply) as server:
        common = ["eval", "--env", "crm", "--task", "TASK-001", "--task", "TASK-002"]
        common += ["--model", "scripted=openai/any", "--base-url", server.base_url, "--runs", "3"]
        local = cli(*common, "--out", "local")
        assert local.exit_code == 0, local.output
        remote = cli(*common, "--out", "remote", "--executor", "ray", "--workers", "2")
        assert remote.exit_code == 0, remote.stderr
        assert len(server.requests) == 12  # the workers called the model server themselves
    assert assert_same_rollout_files(tmp_path / "local", tmp_path / "remote") == 6
    result = json.loads(next((tmp_path / "remote" / "runs").glob("*/result.json")).read_text())
    assert (result["modelSteps"], result["inputTokens"], result["outputTokens"]) == (1, 120, 9)


def _closure_agent(item: str) -> Any:
    async def agent(ctx: silo.AgentContext) -> str:  # a closure: Ray sends it by value
        await ctx.call_tool("complete_item", {"itemId": item})
        return f"completed {item}"

    return agent


@pytest.mark.anyio
async def test_evaluate_a_code_first_environment(
    anyio_backend: str, ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    agents = {"good": good_agent, "bad": bad_agent, "a-only": _closure_agent("A")}
    local = await evaluate(make_env(), None, agents, runs=3, out_dir=tmp_path / "local")
    remote = await evaluate(
        make_env(), None, agents, runs=3, out_dir=tmp_path / "remote", executor=ray_executor
    )
    assert [(r.task_id, r.agent, r.run) for r in remote.records] == [
        (r.task_id, r.agent, r.run) for r in local.records
    ]
    assert [(r.passed, r.reward) for r in remote.records] == [
        (r.passed, r.reward) for r in local.records
    ]
    assert remote.ranking == local.ranking and remote.complete
    assert remote.config["workerConcurrency"] == 4  # the executor's own limit
    assert assert_same_rollout_files(tmp_path / "local", tmp_path / "remote") == 18


class _Locked:
    """An agent holding a lock: it cannot leave this process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    async def __call__(self, ctx: silo.AgentContext) -> str:
        return ""


@pytest.mark.anyio
async def test_an_unshippable_agent_is_refused_up_front(
    ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    with pytest.raises(silo.SiloError) as info:
        await evaluate(
            make_env(),
            None,
            {"good": good_agent, "locked": _Locked()},
            out_dir=tmp_path / "ev",
            executor=ray_executor,
        )
    assert info.value.code == "executor_invalid"
    assert info.value.message.startswith('agent "locked" cannot be sent to the Ray workers: ')
    assert "lock" in info.value.message and "create them inside the agent" in info.value.message
    assert not (tmp_path / "ev").exists()


@pytest.mark.anyio
async def test_an_agent_only_this_process_can_import_is_refused_before_it_runs(
    ray_executor: silo.RayExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "only_here.py").write_text("async def agent(ctx):\n    return 'hi'\n")
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    import only_here  # type: ignore[import-not-found]

    with pytest.raises(silo.SiloError) as info:
        await evaluate(
            make_env(),
            None,
            {"mine": only_here.agent},
            out_dir=tmp_path / "ev",
            executor=ray_executor,
        )
    assert info.value.code == "executor_invalid"
    message = info.value.message
    assert message.startswith('agent "mine" could not be loaded on the Ray worker on ')
    assert "No module named 'only_here'" in message and "py_modules" in message
    assert not (tmp_path / "ev").exists()  # nothing ran, nothing is left


def _killing_once(marker: Path) -> Any:
    async def agent(ctx: silo.AgentContext) -> object:
        if "item B" in ctx.task and not marker.exists():
            marker.write_text("killed")
            await anyio.sleep(0.05)  # let the worker's other rollouts be mid-flight
            os.kill(os.getpid(), signal.SIGKILL)
        await anyio.sleep(0.01)
        return await good_agent(ctx)

    return agent


@pytest.mark.anyio
async def test_a_worker_killed_mid_eval_loses_and_duplicates_nothing(
    ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    out = tmp_path / "ev"
    summary = await evaluate(
        make_env(),
        None,
        {"good": _killing_once(tmp_path / "marker")},
        runs=12,
        concurrency=8,
        out_dir=out,
        executor=ray_executor,
    )
    assert (tmp_path / "marker").read_text() == "killed"
    assert summary.complete and summary.finished == summary.planned == 24
    slots = [(r.task_id, r.run) for r in summary.records]
    assert sorted(slots) == sorted({(t, n) for t in ("T-1", "T-2") for n in range(1, 13)})
    assert all(r.passed for r in summary.records)
    assert summary.infra_retries >= 1  # the killer and whatever ran beside it
    assert read_summary(out)["infraRetries"] == summary.infra_retries
    index = read_index(out)
    assert len({r.run_id for r in index}) == 24
    # the dead attempts' run directories are gone: one directory per recorded rollout
    assert {p.name for p in (out / "runs").iterdir() if p.is_dir()} == {r.run_id for r in index}


async def _kills_on_b(ctx: silo.AgentContext) -> object:
    if "item B" in ctx.task:
        await anyio.sleep(0.05)
        os.kill(os.getpid(), signal.SIGKILL)
    return await good_agent(ctx)


@pytest.mark.anyio
async def test_a_rollout_that_kills_its_worker_every_time_is_an_environment_fault(
    ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    out = tmp_path / "ev"
    summary = await evaluate(
        make_env(),
        None,
        {"good": good_agent, "killer": _kills_on_b},
        out_dir=out,
        executor=ray_executor,
    )
    assert summary.complete and summary.finished == 4
    lost = [r for r in summary.records if r.worker_lost]
    assert [(r.task_id, r.agent) for r in lost] == [("T-2", "killer")]
    (record,) = lost
    assert record.env_fault and not record.passed and record.run_dir is None
    assert record.termination_reason == "worker_lost" and "died 3 times" in (record.error or "")
    assert summary.infra_retries == 2  # three tries in all, then given up
    assert summary.agent("killer").faults == 1
    lines = (out / "runs" / "index.jsonl").read_text().splitlines()
    line = json.loads(next(r for r in lines if '"task":"T-2","agent":"killer"' in r))
    assert line["workerLost"] is True and line["envFault"] is True and line["runDir"] is None
    assert (line["rewardValid"], line["invalidReason"]) == (False, "worker_lost")
    assert summary.agent("killer").invalid == 1  # counted apart, never as a failure
    # the three dead attempts left no run directory
    assert sum(1 for p in (out / "runs").iterdir() if p.is_dir()) == 3


def test_ctrl_c_mid_eval_keeps_what_finished_and_stops_the_workers(
    ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    ray = sys.modules["ray"]
    assert cli_init(tmp_path)
    (tmp_path / "slow.py").write_text(
        "import anyio\n\nasync def agent(ctx):\n    await anyio.sleep(0.02)\n    return ''\n"
    )
    address = ray_executor.ray_address
    assert address is not None and address.startswith("127.0.0.1:")
    command = [sys.executable, "-m", "silo_async", "eval", "--env", "crm", "--agent", "slow.py"]
    command += ["--runs", "200", "--concurrency", "4", "--out", "ev", "--executor", "ray"]
    command += ["--ray-address", address, "--workers", "2"]
    proc = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},  # with this Ray's RAY_AUTH_TOKEN
    )
    runs = tmp_path / "ev" / "runs"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.is_dir() and len(os.listdir(runs)) >= 8:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    data = read_summary(tmp_path / "ev")
    assert data["cancelled"] is True and data["complete"] is False
    assert 4 <= data["finished"] < data["planned"] == 2200
    index = (runs / "index.jsonl").read_text().splitlines()
    assert len(index) == data["finished"] + data["interrupted"]
    assert b"eval cancelled:" in err
    # the remote work is cancelled: nothing more is written, and the workers are gone
    written = sorted(os.listdir(runs))
    time.sleep(1.0)
    assert sorted(os.listdir(runs)) == written
    assert len(written) == len(index) + 1
    deadline = time.monotonic() + 30
    while ray.available_resources().get("CPU", 0) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray.available_resources().get("CPU", 0) == 2


def cli_init(project: Path) -> bool:
    proc = subprocess.run(
        [sys.executable, "-m", "silo_async", "init", "crm", "--template", "crm"],
        cwd=project,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return proc.returncode == 0


@pytest.mark.anyio
async def test_more_workers_than_cpus_is_executor_invalid(
    ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    with pytest.raises(silo.SiloError) as info:
        await evaluate(
            make_env(),
            None,
            {"good": good_agent},
            out_dir=tmp_path / "ev",
            executor=silo.RayExecutor(workers=5),
        )
    assert info.value.code == "executor_invalid"
    assert "5 Ray workers need 5 CPUs" in info.value.message and "--workers 2" in info.value.message
    assert not (tmp_path / "ev").exists()


async def _cancelled(out: Path, agents: dict[str, Any], executor: Any, done: int) -> None:
    with anyio.CancelScope() as scope:

        def progress(p: silo.EvalProgress) -> None:
            if p.done >= done:
                scope.cancel()

        await evaluate(
            make_env(), None, agents, runs=6, concurrency=4, out_dir=out, executor=executor,
            on_progress=progress,
        )  # fmt: skip
    assert scope.cancelled_caught


@pytest.mark.anyio
async def test_an_eval_resumes_on_ray_and_a_ray_eval_resumes_locally(
    ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    marker.write_text("not yet")  # the agent kills its worker only once this is gone
    agents = {"good": _killing_once(marker), "bad": bad_agent}
    reference = tmp_path / "reference"
    await evaluate(make_env(), None, agents, runs=6, concurrency=4, out_dir=reference)

    local = tmp_path / "local-then-ray"
    await _cancelled(local, agents, None, 5)
    kept = {r.run_id for r in read_index(local) if r.termination_reason != "cancelled"}
    marker.unlink()  # a worker of the resume dies: its dead attempt goes, the kept ones stay
    summary = await evaluate(make_env(), None, agents, resume=local, executor=ray_executor)
    assert marker.read_text() == "killed" and summary.infra_retries >= 1
    assert summary.config["executor"] == "ray" and summary.resumed is not None
    assert summary.resumed.kept == len(kept) >= 5
    assert kept <= {p.name for p in (local / "runs").iterdir()}
    same_eval(reference, local, any_executor=True)

    remote = tmp_path / "ray-then-local"
    await _cancelled(remote, agents, ray_executor, 5)
    summary = await evaluate(make_env(), None, agents, resume=remote)
    assert summary.config["executor"] == "local" and summary.complete
    same_eval(reference, remote, any_executor=True)


@pytest.mark.anyio
async def test_conversational_tasks_and_their_users_travel(
    anyio_backend: str, ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    from .chat_world import ENV as BAKERY
    from .chat_world import Echo, solver

    for user, name in ((None, "scripted"), (Echo, "echo")):
        local = await evaluate(
            BAKERY, None, {"s": solver}, out_dir=tmp_path / f"l-{name}", user=user
        )
        remote = await evaluate(
            BAKERY, None, {"s": solver}, out_dir=tmp_path / f"r-{name}", user=user,
            executor=ray_executor,
        )  # fmt: skip
        assert [r.passed for r in remote.records] == [r.passed for r in local.records]
        assert assert_same_rollout_files(tmp_path / f"l-{name}", tmp_path / f"r-{name}") == 3
    index = read_index(tmp_path / "r-echo")
    assert index[0].run_dir is not None
    turns = [
        json.loads(line)
        for line in (tmp_path / "r-echo" / index[0].run_dir / "trace.jsonl")
        .read_text()
        .splitlines()
    ]
    said = [e["reply"] for e in turns if e["type"] == "user_turn"]
    assert said[0] == "CHAT-ORDER heard: Sure! What is your email?"
