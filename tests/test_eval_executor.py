"""The executor seam of evaluate(): the local default, another executor, recorded origins."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async._origin import origin_of, rebuild
from silo_async.agents._load import load_agent
from silo_async.eval import RolloutRecord, evaluate, read_index, read_summary
from silo_async.eval._executor import (
    Books,
    ExecutorReport,
    LocalExecutor,
    PreparedRun,
    RolloutJob,
    run_plan_entry,
)
from silo_async.project import Project

from .test_eval_support import bad_agent, good_agent, make_env

pytestmark = pytest.mark.anyio


async def test_local_executor_is_the_default_and_reports_no_retries(tmp_path: Path) -> None:
    summary = await evaluate(make_env(), None, {"good": good_agent}, runs=2, out_dir=tmp_path / "a")
    explicit = await evaluate(
        make_env(), None, {"good": good_agent}, runs=2, executor=LocalExecutor()
    )
    assert summary.infra_retries == explicit.infra_retries == 0
    assert summary.executor_start_ms == 0.0
    data = read_summary(tmp_path / "a")
    assert data["infraRetries"] == 0 and data["executorStartMs"] == 0
    assert data["config"]["executor"] == "local"
    assert [r.passed for r in explicit.records] == [r.passed for r in summary.records]


class _Backwards:
    """An executor that runs the plan last slot first, one at a time, and says so."""

    def prepare(self, job: RolloutJob) -> PreparedRun:
        return _BackwardsRun(job)


class _BackwardsRun:
    def __init__(self, job: RolloutJob) -> None:
        self.job = job

    async def run(self, books: Books, report: ExecutorReport) -> None:
        report.config = {"executor": "backwards"}
        report.start_ms = 1.5
        for slot in reversed(range(len(self.job.plan))):
            books.begin(slot)
            record, details = await run_plan_entry(self.job, self.job.plan[slot])
            books.deliver(slot, record, details)


async def test_any_executor_gets_plan_order_records_and_files(tmp_path: Path) -> None:
    seen: list[int] = []
    summary = await evaluate(
        make_env(),
        None,
        {"bad": bad_agent, "good": good_agent},
        runs=2,
        out_dir=tmp_path / "ev",
        executor=_Backwards(),
        on_progress=lambda p: seen.append(p.done),
    )
    assert seen == list(range(1, 9))
    order = [(r.task_id, r.agent, r.run) for r in summary.records]
    assert order[:3] == [("T-1", "bad", 1), ("T-1", "bad", 2), ("T-1", "good", 1)]
    assert summary.ranking == ["good", "bad"]
    data = read_summary(tmp_path / "ev")
    assert data["config"]["executor"] == "backwards" and data["executorStartMs"] == 1.5
    assert [r.run_id for r in read_index(tmp_path / "ev")] == [r.run_id for r in summary.records]
    assert (tmp_path / "ev" / "report.html").is_file()


class _Refusing:
    def prepare(self, job: RolloutJob) -> PreparedRun:
        raise silo.SiloError("executor_invalid", "nope")


async def test_an_executor_refuses_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(silo.SiloError) as info:
        await evaluate(
            make_env(), None, {"good": good_agent}, out_dir=tmp_path / "ev", executor=_Refusing()
        )
    assert info.value.code == "executor_invalid"
    assert not (tmp_path / "ev").exists()


def test_a_lost_rollout_record_is_an_environment_fault() -> None:
    record = RolloutRecord(
        task_id="T-1",
        agent="a",
        run=1,
        run_id="",
        run_dir=None,
        passed=False,
        reward=0.0,
        termination_reason="worker_lost",
        tool_calls=0,
        tool_errors=0,
        tool_faults=0,
        verifier_error=False,
        error="lost",
        failed_required=[],
        checks_passed=0,
        checks_total=0,
        duration_ms=0.0,
        worker_lost=True,
    )
    line = record.to_dict()
    assert line["workerLost"] is True and line["envFault"] is True
    assert RolloutRecord.from_dict(line) == record
    del line["workerLost"]  # an index written before the key existed
    assert RolloutRecord.from_dict(line).worker_lost is False


def _rebuilt(obj: Any) -> Any:
    recipe = origin_of(obj)
    assert recipe is not None
    # The recipe is what travels: it must pickle by reference and rebuild a working object.
    function, args, kwargs = pickle.loads(pickle.dumps(recipe))
    return rebuild(function, args, kwargs)


def test_loaded_environments_and_agents_remember_how_to_rebuild(tmp_path: Path) -> None:
    async def create() -> None:
        await Project(tmp_path).environments.create("crm", template="crm")

    anyio.run(create)
    env = silo.load_environment("crm", cwd=tmp_path)
    again = _rebuilt(env)
    assert again is not env and [t.id for t in again.tasks] == [t.id for t in env.tasks]
    assert origin_of(make_env()) is None  # code-first: ships as itself

    (tmp_path / "mine.py").write_text("async def agent(ctx):\n    return 'hi'\n")
    loaded = load_agent("mine.py", tmp_path)
    fn = _rebuilt(loaded.fn)
    assert fn.__name__ == "agent" and fn is not loaded.fn
