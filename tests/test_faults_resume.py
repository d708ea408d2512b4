"""A faulted eval survives being killed (DESIGN sections 14 and 15).

The fault plan, its seed and ``--baseline`` are part of the eval's plan (``eval.json``): a resume
meets the same faults and runs the same baseline, so a resumed faulted eval equals one never
interrupted, file by file; a resume asked for another plan or seed is ``resume_conflict``. A
torn directory says in its ``run_start`` whether it met the fault plan, so a baseline rollout is
never taken for a faulted one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.eval import EvalProgress, evaluate, read_summary

from .cli_support import cli
from .resume_support import drive, same_eval
from .test_faults import patient
from .worlds import ENV, blocker

pytestmark = pytest.mark.anyio

SPEC = "unavailable@0.4,latency=1ms@0.3"
AGENTS: dict[str, Any] = {"patient": patient, "hasty": blocker}
TASKS = ["TASK-BLOCK", "TASK-ANSWER"]
ROOT = Path(__file__).resolve().parent.parent
SOLVER = str(ROOT / "examples" / "agents" / "crm_solver.py")


async def faulted_eval(out: Path, **kwargs: Any) -> silo.EvalSummary:
    plan = silo.Faults.parse(SPEC, seed=7)
    return await evaluate(
        ENV, TASKS, AGENTS, runs=3, concurrency=2, out_dir=out, faults=plan, baseline=True,
        **kwargs,
    )  # fmt: skip


async def test_eval_json_holds_the_fault_plan_its_seed_and_the_baseline(tmp_path: Path) -> None:
    await faulted_eval(tmp_path / "ev")
    plan = json.loads((tmp_path / "ev" / "eval.json").read_text())
    assert plan["faults"] == [
        {"kind": "unavailable", "p": 0.4, "tools": [], "ms": None},
        {"kind": "latency", "p": 0.3, "tools": [], "ms": 1},
    ]
    assert (plan["faultSeed"], plan["baseline"]) == (7, True)
    await evaluate(ENV, TASKS, AGENTS, out_dir=tmp_path / "plain")
    plain = json.loads((tmp_path / "plain" / "eval.json").read_text())
    assert (plain["faults"], plain["faultSeed"], plain["baseline"]) == (None, 0, False)


async def test_a_cancelled_faulted_eval_resumes_to_the_files_of_one_never_stopped(
    tmp_path: Path,
) -> None:
    reference = await faulted_eval(tmp_path / "reference")
    assert sum(r.injected_faults for r in reference.records) > 0  # the plan strikes
    out = tmp_path / "ev"
    with anyio.CancelScope() as scope:

        def progress(p: EvalProgress) -> None:
            if p.done >= 5:
                scope.cancel()

        await faulted_eval(out, on_progress=progress)
    assert scope.cancelled_caught and read_summary(out)["cancelled"] is True
    # Left out, the faults, the seed and the baseline are the plan's.
    summary = await evaluate(ENV, None, AGENTS, resume=out)
    assert summary.complete and summary.robustness is not None
    assert summary.resumed is not None and summary.resumed.kept >= 5
    same_eval(tmp_path / "reference", out)


async def test_torn_faulted_and_baseline_rollouts_are_told_apart(tmp_path: Path) -> None:
    await faulted_eval(tmp_path / "reference")
    out = tmp_path / "ev"
    await faulted_eval(out)
    (out / "summary.json").unlink()
    lines = [json.loads(x) for x in (out / "runs" / "index.jsonl").read_text().splitlines()]
    # A faulted rollout and the baseline rollout of the same (task, agent, run), both torn:
    # only their run_start says which is which.
    torn = [lines[0], next(x for x in lines if x.get("baseline") and x["run"] == 1)]
    assert (torn[0]["task"], torn[0]["agent"]) == (torn[1]["task"], torn[1]["agent"])
    for line in torn:
        (out / line["runDir"] / "run.json").unlink()
    index = [x for x in lines if x not in torn]
    (out / "runs" / "index.jsonl").write_text("".join(json.dumps(x) + "\n" for x in index))
    summary = await evaluate(ENV, None, AGENTS, resume=out)
    assert summary.resumed is not None and summary.resumed.rerun == 2
    same_eval(tmp_path / "reference", out)


async def test_another_fault_plan_or_seed_is_a_resume_conflict(tmp_path: Path) -> None:
    out = tmp_path / "ev"
    await faulted_eval(out)
    (out / "summary.json").unlink()
    for other, setting in [
        (silo.Faults.parse("unavailable@0.5", seed=7), "faults"),
        (silo.Faults.parse(SPEC, seed=8), "faultSeed"),
        (silo.Faults.parse(SPEC), "faultSeed"),  # seed 0 is a seed too
    ]:
        with pytest.raises(silo.SiloError) as info:
            await evaluate(ENV, None, AGENTS, resume=out, faults=other)
        assert info.value.code == "resume_conflict"
        assert info.value.details["setting"] == setting, info.value.message
        assert info.value.message.startswith("faults= differs from the plan")
    plain = tmp_path / "plain"
    await evaluate(ENV, TASKS, AGENTS, out_dir=plain)
    (plain / "summary.json").unlink()
    with pytest.raises(silo.SiloError, match="faults= differs"):
        await evaluate(ENV, None, AGENTS, resume=plain, faults=SPEC)
    alone = tmp_path / "alone"  # the faults without their baseline
    await evaluate(ENV, TASKS, AGENTS, out_dir=alone, faults=SPEC)
    (alone / "summary.json").unlink()
    with pytest.raises(silo.SiloError, match="baseline= differs"):
        await evaluate(ENV, None, AGENTS, resume=alone, faults=SPEC, baseline=True)
    # The plan's own faults and seed are fine.
    again = await evaluate(ENV, None, AGENTS, resume=out, faults=silo.Faults.parse(SPEC, seed=7))
    assert again.complete


@pytest.fixture
def crm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    return tmp_path


PLAN = [
    "eval", "--env", "crm", "--task", "TASK-001", "--task", "TASK-004",
    "--agent", f"solver={SOLVER}", "--agent", f"no_retries={SOLVER}:no_retries",
    "--runs", "2", "--concurrency", "3",
    "--faults", "unavailable@0.3", "--fault-seed", "5", "--baseline",
]  # fmt: skip


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_killed_faulted_eval_resumes_on_the_cli_to_an_uninterrupted_one(crm: Path) -> None:
    assert cli(*PLAN, "--out", "reference").exit_code == 0
    assert drive(crm, [*PLAN, "--out", "ev"], {"at": "call", "n": 9}) == -9  # SIGKILL
    for flags, named in [
        (["--faults", "unavailable@0.2"], "--faults"),
        (["--faults", "unavailable@0.3"], "--fault-seed"),  # the seed is then 0
        (["--fault-seed", "6"], "--fault-seed"),
    ]:
        refused = cli("eval", "--resume", "ev", *flags)
        assert refused.exit_code == 1, refused.output
        assert refused.stderr.startswith(f"error: resume_conflict: {named} differs"), flags
    resumed = cli("eval", "--resume", "ev", "--faults", "unavailable@0.3", "--fault-seed", "5")
    assert resumed.exit_code == 0, resumed.output
    assert "Robustness (--faults unavailable@0.3, seed 5; without vs with)" in resumed.stdout
    same_eval(crm / "reference", crm / "ev")
