"""Conformance to DESIGN.md section 10 (scale-out: the Ray executor).

As a reader of DESIGN.md alone would check it. One local Ray for the module (``RayExecutor
.start()``: 2 workers); every eval here runs on it, from the library, from the CLI in this
process, and from a CLI subprocess joining it (``--ray-address auto``). It is started while
``RAY_ADDRESS`` names a dead cluster, which ``address=None`` must ignore.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo

from .cli_support import cli
from .peers import extra, require_extra

ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")
#: A cluster address nothing listens on.
STALE = "127.0.0.1:9"


def subprocess_cli(project: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "silo_async", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def one_error_line(stderr: str, code: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {code}: "), stderr
    return lines[0]


# --- without Ray running ----------------------------------------------------------------------


def test_section10_the_names_and_flags() -> None:
    params = inspect.signature(silo.RayExecutor).parameters
    assert list(params) == ["address", "workers", "concurrency"]
    assert params["address"].default is None
    assert "executor" in inspect.signature(silo.evaluate).parameters
    shown = cli("eval", "--help").output
    for flag in ("--executor [local|ray]", "--ray-address", "--workers", "--worker-concurrency"):
        assert flag in shown, flag
    assert re.search(r"--executor \[local\|ray\][^-]*\[default: local\]", shown.replace("\n", " "))


def test_section10_the_ray_extra() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = pyproject["project"]["optional-dependencies"]["ray"]
    assert any(re.fullmatch(r"ray\s*>=\s*2\.50\s*,\s*<\s*3", spec) for spec in extra), extra


@pytest.fixture(scope="module")
def crm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("ray-crm")
    assert subprocess_cli(project, "init", "crm", "--template", "crm").returncode == 0
    return project


def test_section10_nothing_imports_ray_unless_asked(crm: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from silo_async.cli import main\n"
        "sys.argv = ['silo-async', *sys.argv[1:]]\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('ray' in sys.modules, file=sys.stderr)\n"
    )
    out = str(tmp_path / "ev")
    args = ["eval", "--env", "crm", "--task", "TASK-001", "--agent", NOOP, "--out", out]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=crm, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False"
    summary = json.loads((tmp_path / "ev" / "summary.json").read_text())
    assert summary["infraRetries"] == 0  # top-level, 0 for the local executor


def test_section10_ray_missing_is_executor_unavailable(crm: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['ray'] = None  # as if the extra were not installed\n"
        "from silo_async.cli import main\n"
        "sys.argv = ['silo-async', *sys.argv[1:]]\n"
        "main()\n"
    )
    args = ["eval", "--env", "crm", "--agent", NOOP, "--executor", "ray", "--out", "nothing"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=crm, capture_output=True, text=True
    )
    assert done.returncode == 1
    line = one_error_line(done.stderr, "executor_unavailable")
    assert "pip install 'silo_async[ray]'" in line
    assert not (crm / "nothing").exists()


@extra("ray")
def test_section10_what_the_executor_cannot_use_is_executor_invalid(crm: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "environ", env)
        patch.chdir(crm)
        patch.setattr(sys, "path", list(sys.path))
        base = ["eval", "--env", "crm", "--agent", NOOP, "--executor", "ray", "--out", "x"]
        for extra in (["--ray-address", "auto"], ["--ray-address", "not an address"]):
            done = cli(*base, *extra)
            assert done.exit_code == 1, (extra, done.output)
            one_error_line(done.stderr, "executor_invalid")
    for bad in ({"workers": 0}, {"concurrency": -1}, {"address": "::nonsense::"}):
        with pytest.raises(silo.SiloError) as caught:
            silo.RayExecutor(**bad)
        assert caught.value.code == "executor_invalid"
    assert not (crm / "x").exists()


# --- on the module's Ray ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_executor() -> Iterator[silo.RayExecutor]:
    """The one Ray of the module (2 CPUs, loopback, started by the executor itself).

    It is started while RAY_ADDRESS names a cluster that is gone: ``address=None`` must start a
    fresh local Ray, never join an ambient or stale one (checked below).
    """
    require_extra("ray")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_ADDRESS", STALE)
        executor = silo.RayExecutor(workers=2, concurrency=4).start()
    try:
        yield executor
    finally:
        executor.shutdown()


def test_section10_address_none_started_a_fresh_local_ray(ray_executor: silo.RayExecutor) -> None:
    address = ray_executor.ray_address
    assert address is not None and address != STALE
    assert address.startswith("127.0.0.1:")  # local, loopback


def index(eval_dir: Path) -> list[dict[str, Any]]:
    lines = (eval_dir / "runs" / "index.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


SAME = ("result.json", "state-diff.json")


def rollout_files(eval_dir: Path) -> dict[tuple[Any, ...], tuple[bytes, ...]]:
    files: dict[tuple[Any, ...], tuple[bytes, ...]] = {}
    for record in index(eval_dir):
        run_dir = eval_dir / record["runDir"]
        assert run_dir.parent == eval_dir / "runs"  # artifacts in the eval directory
        slot = (record["task"], record["agent"], record["run"])
        files[slot] = tuple((run_dir / name).read_bytes() for name in SAME)
    return files


def figures(summary: dict[str, Any]) -> Any:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if "Duration" not in k}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip({k: summary[k] for k in ("agents", "tasks", "ranking", "best", "planned")})


def test_section10_a_crm_eval_on_ray_is_the_local_eval(
    ray_executor: silo.RayExecutor, crm: Path, tmp_path: Path
) -> None:
    address = ray_executor.ray_address
    assert address is not None
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(crm)
        patch.setattr(sys, "path", list(sys.path))
        common = ["eval", "--env", "crm", "--agent", f"solver={SOLVER}", "--agent", NOOP, "--json"]
        local = cli(*common, "--out", str(tmp_path / "local"))
        remote = cli(
            *common, "--out", str(tmp_path / "remote"), "--executor", "ray",
            "--ray-address", address, "--workers", "2", "--worker-concurrency", "3",
            "--concurrency", "5",
        )  # fmt: skip
    assert local.exit_code == 0, local.output
    assert remote.exit_code == 0, remote.stderr
    mine, theirs = rollout_files(tmp_path / "local"), rollout_files(tmp_path / "remote")
    assert mine == theirs and len(mine) == 22  # byte-identical result.json / state-diff.json
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert figures(a) == figures(b)
    assert (a["infraRetries"], b["infraRetries"]) == (0, 0)
    assert b["executorStartMs"] >= 0 and b["config"]["executor"] == "ray"
    assert b["config"]["workerConcurrency"] == 3  # per worker
    assert b["config"]["concurrency"] == 5  # the eval's overall limit
    for name in ("summary.json", "summary.md", "report.html"):
        assert (tmp_path / "remote" / name).stat().st_size > 0


def closure_agent(tool: str) -> Any:
    async def agent(ctx: silo.AgentContext) -> str:  # a closure: only Ray's pickling ships it
        await ctx.call_tool(tool, {})
        return "ok"

    return agent


@pytest.mark.anyio
async def test_section10_code_first_environments_and_agents_travel_by_ray(
    anyio_backend: str, ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    from tests.test_contract import ENV

    agents = {"bumper": closure_agent("bump"), "idle": closure_agent("get_opportunity")}
    local = await silo.evaluate(ENV, ["TASK-COUNT"], agents, runs=3, out_dir=tmp_path / "l")
    remote = await silo.evaluate(
        ENV, ["TASK-COUNT"], agents, runs=3, out_dir=tmp_path / "r", executor=ray_executor
    )
    assert rollout_files(tmp_path / "l") == rollout_files(tmp_path / "r")
    assert [(r.agent, r.passed) for r in remote.records] == [
        (r.agent, r.passed) for r in local.records
    ]
    assert remote.complete and remote.infra_retries == 0


class Unshippable:
    """An agent holding a lock: it cannot be sent to another process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    async def __call__(self, ctx: silo.AgentContext) -> str:
        return ""


@pytest.mark.anyio
async def test_section10_what_cannot_be_shipped_is_refused_before_anything_runs(
    anyio_backend: str, ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    from tests.test_contract import ENV

    agents = {"fine": closure_agent("bump"), "held": Unshippable()}
    with pytest.raises(silo.SiloError) as caught:
        await silo.evaluate(ENV, None, agents, out_dir=tmp_path / "ev", executor=ray_executor)
    assert caught.value.code == "executor_invalid"
    assert '"held"' in caught.value.message  # naming it
    assert not (tmp_path / "ev").exists()


def killing_once(marker: Path) -> Any:
    async def agent(ctx: silo.AgentContext) -> str:
        await ctx.call_tool("bump", {})
        if not marker.exists():
            marker.write_text("killed")
            await anyio.sleep(0.05)  # others are in flight on the same worker
            os.kill(os.getpid(), signal.SIGKILL)
        return "ok"

    return agent


def test_section10_a_dead_worker_loses_nothing_and_counts_infra_retries(
    ray_executor: silo.RayExecutor, tmp_path: Path
) -> None:
    """On asyncio only: a killed worker costs a Ray worker restart (6-12 s here), and the
    executor's trio path is the code-first test's."""
    from tests.test_contract import ENV

    out = tmp_path / "ev"
    summary = anyio.run(
        lambda: silo.evaluate(
            ENV,
            ["TASK-COUNT"],
            {"a": killing_once(tmp_path / "marker")},
            runs=10,
            out_dir=out,
            executor=ray_executor,
        )
    )
    assert (tmp_path / "marker").exists()
    assert summary.complete and summary.finished == summary.planned == 10
    assert sorted(r.run for r in summary.records) == list(range(1, 11))  # each exactly once
    assert all(r.passed for r in summary.records)
    data = json.loads((out / "summary.json").read_text())
    assert data["infraRetries"] >= 1 and data["infraRetries"] == summary.infra_retries
    records = index(out)
    assert len(records) == len({r["runId"] for r in records}) == 10
    dirs = {p.name for p in (out / "runs").iterdir() if p.is_dir()}
    assert dirs == {r["runId"] for r in records}  # the dead attempts' directories are gone


def test_section10_ctrl_c_and_ray_address_auto(
    ray_executor: silo.RayExecutor, crm: Path, tmp_path: Path
) -> None:
    address = ray_executor.ray_address
    assert address is not None
    (tmp_path / "slow.py").write_text(
        "import anyio\n\nasync def agent(ctx):\n    await anyio.sleep(0.05)\n    return ''\n"
    )
    out = tmp_path / "ev"
    command = [sys.executable, "-m", "silo_async", "eval", "--env", "crm"]
    command += ["--agent", str(tmp_path / "slow.py"), "--runs", "100", "--concurrency", "4"]
    command += ["--out", str(out), "--executor", "ray", "--ray-address", "auto"]
    proc = subprocess.Popen(
        command,
        cwd=crm,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "RAY_ADDRESS": address},
    )
    runs = out / "runs"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.is_dir() and len(os.listdir(runs)) >= 6:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err  # as the local executor: Ctrl-C exits 130
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cancelled"] is True and summary["complete"] is False
    assert 1 <= summary["finished"] < summary["planned"] == 1100
    assert summary["config"]["executor"] == "ray"
