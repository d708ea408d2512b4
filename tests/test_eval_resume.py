"""Resuming an eval (DESIGN §15): eval.json, the index as it grows, what a resume keeps and reruns.

``evaluate(..., resume=EVAL_DIR)`` on the small code-first environment of the eval tests, with
interrupted states made the way a kill leaves them: a cancelled eval, run directories torn
(no ``run.json``), an index cut short or missing, duplicates. The kill test proper (processes
killed at seeded moments) is ``test_eval_resume_kill.py``; the CLI's ``--resume`` is below.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.eval import EvalProgress, evaluate, read_index, read_summary
from silo_async.eval._report._summary import Resumed

from .cli_support import cli
from .resume_support import same_eval
from .test_eval_support import bad_agent, good_agent, make_env, slow_agent

pytestmark = pytest.mark.anyio

AGENTS: dict[str, Any] = {"good": slow_agent, "bad": bad_agent}
ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")
NOOP = str(ROOT / "examples" / "agents" / "noop.py")


async def full_eval(out: Path, **kwargs: Any) -> silo.EvalSummary:
    return await evaluate(make_env(), None, AGENTS, runs=3, concurrency=2, out_dir=out, **kwargs)


async def cancelled_after(out: Path, done: int) -> None:
    """The eval of :func:`full_eval`, cancelled once ``done`` rollouts finished."""
    with anyio.CancelScope() as scope:

        def progress(p: EvalProgress) -> None:
            if p.done >= done:
                scope.cancel()

        await full_eval(out, on_progress=progress)
    assert scope.cancelled_caught


async def test_eval_json_holds_the_plan_before_the_first_rollout_starts(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    seen: list[dict[str, Any]] = []

    async def first(ctx: silo.AgentContext) -> str:
        if not seen:
            seen.append(json.loads((out / "eval.json").read_text()))
            assert not (out / "runs" / "index.jsonl").exists()  # no rollout has finished
        return await good_agent(ctx)

    summary = await evaluate(
        make_env(),
        ["T-2", "T-1"],
        {"first": first, "good": good_agent, "bad": bad_agent},
        runs=2,
        concurrency=1,
        token_limit=500,
        out_dir=out,
        prices={"*": {"input": 1, "output": 2}},
    )
    plan = json.loads((out / "eval.json").read_text())
    assert seen == [plan]
    digests = plan.pop("digests")  # DESIGN §23: what the plan ran, for a resume to check
    assert sorted(digests["tasks"]) == ["T-1", "T-2"] and sorted(digests["verifiers"]) == [
        "VER-1",
        "VER-2",
    ]
    found = [*digests["tasks"].values(), *digests["verifiers"].values(), digests["data"]]
    assert all(d.startswith("sha256:") and len(d) == 7 + 64 for d in found)
    assert plan == {
        "format": "silo_async.eval-plan",
        "formatVersion": 1,
        "evalId": summary.eval_id,
        "createdAt": plan["createdAt"],
        "environment": {"name": "items", "project": None},  # code-first: resumed from Python
        "tasks": ["T-2", "T-1"],
        "agents": [
            {"label": "first"},  # a closure: nothing can make it again
            {"label": "good", "code": "tests.test_eval_support:good_agent"},
            {"label": "bad"},
        ],
        "runs": 2,
        "limits": {"maxToolCalls": 100, "timeoutMs": 120000, "tokenLimit": 500},
        "concurrency": 1,
        "prices": {"*": {"input": 1.0, "output": 2.0}},
        "faults": None,  # DESIGN §14: the fault plan, its seed, the baseline
        "faultSeed": 0,
        "baseline": False,
        "user": None,  # each task's scripted user (a model user is recorded to play again)
        "executor": {"executor": "local"},
    }


async def test_the_index_grows_as_rollouts_finish(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    lines: list[int] = []

    def progress(p: EvalProgress) -> None:  # called once the rollout's line is written
        text = (out / "runs" / "index.jsonl").read_text()
        assert text.endswith("\n")
        index = [json.loads(line) for line in text.splitlines()]
        assert all((out / line["runDir"] / "run.json").is_file() for line in index)
        lines.append(len(index))

    summary = await full_eval(out, on_progress=progress)
    assert lines == list(range(1, 13))
    assert [(r.task_id, r.agent, r.run) for r in read_index(out)] == [
        (r.task_id, r.agent, r.run) for r in summary.records
    ]  # rewritten in plan order with the summary


async def test_a_cancelled_eval_resumes_to_the_files_of_one_never_stopped(tmp_path: Path) -> None:
    await full_eval(tmp_path / "reference")
    out = tmp_path / "ev"
    await cancelled_after(out, 5)
    before = read_summary(out)
    assert before["cancelled"] is True and before["finished"] >= 5
    snapshots: list[EvalProgress] = []
    summary = await evaluate(make_env(), None, AGENTS, resume=out, on_progress=snapshots.append)
    kept = before["finished"]
    assert summary.resumed == Resumed(kept, 12 - kept)
    assert summary.eval_id == before["evalId"] == read_summary(out)["evalId"]
    assert (snapshots[0].kept, snapshots[0].done, snapshots[0].left) == (kept, kept, 12 - kept)
    assert snapshots[-1].done == 12 and snapshots[-1].kept == kept
    same_eval(tmp_path / "reference", out)


async def test_resuming_a_finished_eval_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    first = await full_eval(out)
    files = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.rglob("*") if p.is_file()}
    again = await evaluate(make_env(), None, AGENTS, resume=out)
    assert again.resumed == Resumed(12, 0, finished=True)
    assert again.to_dict() == first.to_dict()
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in files} == files
    assert {p for p in out.rglob("*") if p.is_file()} == set(files)


def _break(out: Path) -> dict[str, Any]:
    """Leave ``out`` the way kills leave an eval; what was broken, for the asserts."""
    index = (out / "runs" / "index.jsonl").read_text().splitlines()
    (out / "summary.json").unlink()
    records = [json.loads(line) for line in index]
    torn = [out / r["runDir"] for r in records[1:3]]
    for run_dir in torn:
        (run_dir / "run.json").unlink()  # killed before its last file
    (torn[1] / "result.json").unlink()
    cut = records[3]
    run = json.loads((out / cut["runDir"] / "run.json").read_text())
    (out / cut["runDir"] / "run.json").write_text(
        json.dumps(run | {"terminationReason": "cancelled"})
    )
    twin = out / "runs" / (records[4]["runId"] + "x")
    shutil.copytree(out / records[4]["runDir"], twin)  # the same rollout finished twice
    (out / "runs" / "run_empty").mkdir()  # killed between mkdir and the trace
    unindexed = records[5]
    kept = [line for i, line in enumerate(index) if i != 5][:8]
    (out / "runs" / "index.jsonl").write_text("\n".join(kept) + '\n   {"task": "T-')
    return {"torn": torn, "cut": out / cut["runDir"], "twin": twin, "unindexed": unindexed}


async def test_torn_cut_short_and_doubled_rollouts_are_removed_and_run_again(
    tmp_path: Path,
) -> None:
    await full_eval(tmp_path / "reference")
    out = tmp_path / "ev"
    await full_eval(out)
    broken = _break(out)
    summary = await evaluate(make_env(), None, AGENTS, resume=out)
    assert summary.resumed == Resumed(9, 3)  # 2 torn + 1 cut short run again
    for gone in [*broken["torn"], broken["cut"], broken["twin"], out / "runs" / "run_empty"]:
        assert not gone.exists()
    assert (out / broken["unindexed"]["runDir"]).is_dir()  # complete, though not indexed: kept
    same_eval(tmp_path / "reference", out)


async def test_an_eval_without_its_index_keeps_every_complete_rollout(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    await full_eval(tmp_path / "reference")
    await full_eval(out)
    (out / "summary.json").unlink()
    (out / "runs" / "index.jsonl").unlink()
    summary = await evaluate(make_env(), None, AGENTS, resume=out)
    assert summary.resumed == Resumed(12, 0)
    same_eval(tmp_path / "reference", out)


async def test_arguments_that_change_the_plan_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    await cancelled_after(out, 3)
    env = make_env()
    refused: list[tuple[dict[str, Any], str]] = [
        ({"runs": 5}, "runs="),
        ({"max_tool_calls": 7}, "max_tool_calls="),
        ({"token_limit": 10}, "token_limit="),
        ({"prices": {"*": {"input": 1, "output": 1}}}, "prices="),
        ({"out_dir": tmp_path / "elsewhere"}, "out_dir="),
        ({"eval_id": "eval_other"}, "eval_id="),
    ]
    for kwargs, name in refused:
        with pytest.raises(silo.SiloError) as info:
            await evaluate(env, None, AGENTS, resume=out, **kwargs)
        assert info.value.code == "resume_conflict", kwargs
        assert info.value.message.startswith(f"{name} "), info.value.message
    with pytest.raises(silo.SiloError, match="tasks=") as info:
        await evaluate(env, ["T-2"], AGENTS, resume=out)
    assert info.value.details["planned"] == '["T-1","T-2"]'
    with pytest.raises(silo.SiloError, match="agents="):
        await evaluate(env, None, {"good": good_agent, "worse": bad_agent}, resume=out)
    with pytest.raises(silo.SiloError, match="agents="):  # same labels, another function
        await evaluate(env, None, {"good": good_agent, "bad": bad_agent}, resume=out)
    assert read_summary(out)["cancelled"] is True  # nothing ran
    # The plan's own values, and another concurrency, are fine.
    summary = await evaluate(
        env, ["T-1", "T-2"], AGENTS, runs=3, concurrency=5, max_tool_calls=100, resume=out
    )
    assert summary.complete and summary.config["concurrency"] == 5


async def test_an_unknown_directory_is_eval_not_found(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / "eval.json").write_text("{")
    for name in ("missing", "empty", "damaged"):
        with pytest.raises(silo.SiloError) as info:
            await evaluate(make_env(), None, AGENTS, resume=tmp_path / name)
        assert info.value.code == "eval_not_found"
    (tmp_path / "newer").mkdir()
    plan = {"format": "silo_async.eval-plan", "formatVersion": 2}
    (tmp_path / "newer" / "eval.json").write_text(json.dumps(plan))
    with pytest.raises(silo.SiloError) as info:
        await evaluate(make_env(), None, AGENTS, resume=tmp_path / "newer")
    assert info.value.code == "run_format_unsupported"


async def test_a_refused_executor_leaves_no_eval_directory(tmp_path: Path) -> None:
    class Refusing:
        def prepare(self, job: Any) -> Any:
            return self

        async def run(self, books: Any, report: Any) -> None:
            raise silo.SiloError("executor_unavailable", "nothing to run on")

    with pytest.raises(silo.SiloError):
        await evaluate(make_env(), None, AGENTS, out_dir=tmp_path / "ev", executor=Refusing())
    assert not (tmp_path / "ev").exists()


# The CLI ------------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


PLAN = ["--task", "TASK-001", "--task", "TASK-002", "--agent", f"solver={SOLVER}"]
PLAN += ["--agent", NOOP, "--runs", "2", "--concurrency", "2"]


def test_cli_resume_continues_from_the_plan_alone(project: Path) -> None:
    assert cli("eval", "--env", "crm", *PLAN, "--out", "reference").exit_code == 0
    assert cli("eval", "--env", "crm", *PLAN, "--out", "ev").exit_code == 0
    index = (project / "ev" / "runs" / "index.jsonl").read_text().splitlines()
    (project / "ev" / "runs" / "index.jsonl").write_text("\n".join(index[:3]) + "\n")
    for line in index[3:]:
        shutil.rmtree(project / "ev" / json.loads(line)["runDir"])
    (project / "ev" / "summary.json").unlink()
    result = cli("eval", "--resume", "ev", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["resumed"] == {"kept": 3, "rerun": 5}
    assert data["complete"] is True and data["outDir"] == "ev"
    assert "Resuming eval" in result.stderr and "3 of 8 rollouts kept, 5 to run" in result.stderr
    same_eval(project / "reference", project / "ev")
    text = cli("eval", "--resume", "ev")
    assert text.exit_code == 0
    assert text.stdout.startswith("Nothing to resume: eval ") and "8 of 8 rollouts" in text.stdout
    as_json = cli("eval", "--resume", "ev", "--json")
    assert as_json.exit_code == 0 and as_json.stderr.startswith("Nothing to resume: ")
    assert json.loads(as_json.stdout) == {
        **read_summary(project / "ev"),
        "outDir": "ev",
        "resumed": {"kept": 8, "rerun": 0},
    }


def test_cli_resume_refuses_flags_that_change_the_plan(project: Path) -> None:
    assert cli("eval", "--env", "crm", *PLAN, "--out", "ev").exit_code == 0
    (project / "ev" / "summary.json").unlink()
    for flags, named in [
        (["--runs", "3"], "--runs"),
        (["--timeout-ms", "5000"], "--timeout-ms"),
        (["--task", "TASK-001"], "--task/--tasks"),
        (["--tasks", "all"], "--task/--tasks"),
        (["--agent", f"solver={SOLVER}"], "--agent/--model"),
        (["--env", "crm2"], "--env"),
        (["--out", "elsewhere"], "--out"),
    ]:
        result = cli("eval", "--resume", "ev", *flags)
        assert result.exit_code == 1, flags
        assert result.stderr.startswith(f"error: resume_conflict: {named} "), result.stderr
    same = cli("eval", "--resume", "ev", "--env", "crm", *PLAN, "--concurrency", "5", "--json")
    assert same.exit_code == 0, same.output
    assert json.loads(same.stdout)["config"]["concurrency"] == 5


def test_cli_resume_of_what_is_no_eval(project: Path) -> None:
    result = cli("eval", "--resume", "nowhere")
    assert result.exit_code == 1
    assert result.stderr.startswith('error: eval_not_found: No eval to resume in "nowhere"')
    (project / "plain").mkdir()
    result = cli("eval", "--resume", "plain")
    assert result.exit_code == 1 and "has no eval.json" in result.stderr
    missing = cli("eval", *PLAN)
    assert missing.exit_code == 2 and "Missing option '--env'" in missing.stderr


async def test_cli_resume_of_a_code_first_eval_says_to_resume_from_python(
    project: Path,
) -> None:
    await cancelled_after(project / "ev", 3)
    result = cli("eval", "--resume", "ev")
    assert result.exit_code == 1
    assert result.stderr.startswith('error: resume_conflict: The environment "items" of eval ')
    assert (
        "silo.resume(EVAL_DIR, env=...)" in result.stderr and "pass the same env=" in result.stderr
    )
    os.rename(project / "ev", project / "ev2")  # the directory is all a resume needs
    # The environment is given, and "bad" (a closure); "good" is importable: made again.
    with pytest.raises(silo.SiloError, match=r'Agent "bad" .* agents=') as missing:
        await silo.resume(project / "ev2", env=make_env())
    assert missing.value.code == "resume_conflict"
    summary = await silo.resume(project / "ev2", env=make_env(), agents={"bad": bad_agent})
    assert summary.complete and summary.resumed is not None and summary.resumed.kept >= 3
