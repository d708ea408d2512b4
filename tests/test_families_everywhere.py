"""Instances ``FAMILY#SEED`` are task ids everywhere (DESIGN.md section 18), and pure functions.

The same id gives the same instruction, world and grade in another process, on either backend,
with faults, when replayed, resumed or exported, and through TRL's and Inspect's adapters.
(Episodes and serve: tests/test_serve_http.py; Ray: tests/test_ray_executor.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import silo_async as silo
from silo_async.export import trajectories
from silo_async.testing import ScriptedAgent, ScriptedCall, gold_agent

from .family_worlds import TIER_AND_NOTE, environment

ROOT = Path(__file__).resolve().parent.parent
IDS = ["tier-and-note#3", "tier-and-note#11", "tier-and-note#40"]

#: In a fresh interpreter (another hash seed): each instance, and the bytes of its gold run.
SCRIPT = """
import json, sys, anyio, silo_async as silo
from silo_async.testing import gold_agent
from tests.family_worlds import environment
env = environment()
async def main():
    out = {}
    for task_id in sys.argv[2:]:
        task = env.task(task_id)
        result = await silo.run(env, task_id, gold_agent, runs_dir=sys.argv[1])
        out[task_id] = {
            "task": task.to_dict(), "split": silo.split_of(task),
            "result": (result.run_dir / "result.json").read_text(),
            "diff": (result.run_dir / "state-diff.json").read_text(),
        }
    print(json.dumps(out))
anyio.run(main)
"""


async def played(runs: Path, backend_ids: list[str]) -> dict[str, Any]:
    env = environment()
    out = {}
    for task_id in backend_ids:
        task = env.task(task_id)
        result = await silo.run(env, task_id, gold_agent, runs_dir=runs)
        assert result.run_dir is not None
        out[task_id] = {
            "task": task.to_dict(),
            "split": silo.split_of(task),
            "result": (result.run_dir / "result.json").read_text(),
            "diff": (result.run_dir / "state-diff.json").read_text(),
        }
    return out


def test_an_instance_is_the_same_in_another_process_and_on_either_backend(tmp_path: Path) -> None:
    here = anyio.run(played, tmp_path / "asyncio", IDS, backend="asyncio")
    on_trio = anyio.run(played, tmp_path / "trio", IDS, backend="trio")
    env = {**os.environ, "PYTHONHASHSEED": "4242", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "child"), *IDS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == here == on_trio
    assert all(json.loads(v["result"])["passed"] for v in here.values())


pytestmark = pytest.mark.anyio


async def test_faults_strike_an_instance_the_same_way_every_time() -> None:
    env = environment(TIER_AND_NOTE)
    faults = silo.Faults.parse("unavailable@0.5", seed=7)
    first = await silo.run(env, IDS[0], gold_agent, faults=faults)
    again = await silo.run(env, IDS[0], gold_agent, faults=faults)
    assert first.injected_faults == again.injected_faults
    assert first.result_dict() == again.result_dict()


async def test_an_instance_run_replays_identically(tmp_path: Path) -> None:
    env = environment(TIER_AND_NOTE)
    result = await silo.run(env, IDS[1], gold_agent, runs_dir=tmp_path)
    assert result.run_dir is not None
    report = await silo.replay(result.run_dir, env)
    assert report.identical, report
    assert report.replayed.passed is True


async def test_an_eval_of_instances_resumes_to_the_same_files(tmp_path: Path) -> None:
    from .resume_support import same_eval

    env = environment(TIER_AND_NOTE)
    agents = {"gold": gold_agent}
    whole = tmp_path / "whole"
    await silo.evaluate(
        env, None, agents, families={"tier-and-note": 4}, split="train", out_dir=whole,
        concurrency=1,
    )  # fmt: skip
    cut = tmp_path / "cut"
    with anyio.CancelScope() as scope:

        def progress(p: silo.EvalProgress) -> None:
            if p.done == 2:
                scope.cancel()

        await silo.evaluate(
            env, None, agents, families={"tier-and-note": 4}, split="train", out_dir=cut,
            on_progress=progress, concurrency=1,
        )  # fmt: skip
    resumed = await silo.evaluate(
        env, None, agents, families={"tier-and-note": 4}, split="train", resume=cut
    )
    assert resumed.resumed is not None and resumed.resumed.kept >= 2
    same_eval(whole, cut)


async def test_instance_runs_export_as_training_lines(tmp_path: Path) -> None:
    env = environment(TIER_AND_NOTE)
    out = tmp_path / "eval"
    await silo.evaluate(
        env, None, {"gold": gold_agent}, families={"tier-and-note": 2}, split="train", out_dir=out
    )
    lines = list(trajectories(eval_id=str(out), environment=env))
    assert [line["task"] for line in lines] == [
        t.id for t in env.instances("tier-and-note", 2, split="train")
    ]
    assert lines[0]["messages"][0]["content"] == env.task(lines[0]["task"]).instruction


def test_trl_serves_instances(tmp_path: Path) -> None:
    from silo_async.integrations.trl import environment_factory, reward

    env = environment(TIER_AND_NOTE)
    tasks = [t.id for t in env.instances("tier-and-note", 3, split="train")]
    cls = environment_factory(env, tasks)
    episode = cls()
    prompt = episode.reset(task=tasks[1])
    assert env.task(tasks[1]).instruction in prompt
    params = dict(env.task(tasks[1]).params or {})
    episode.set_tier(customerId=params["customerId"], tier=params["tier"])
    episode.add_note(customerId=params["customerId"], text="promoted")
    assert reward(["Done."], [episode]) == [1.0]


def test_inspect_samples_instances() -> None:
    pytest.importorskip("inspect_ai")
    from silo_async.integrations.inspect import silo_task

    env = environment(TIER_AND_NOTE)
    made = silo_task(env=env, tasks=",".join(IDS))
    assert [s.id for s in made.dataset] == IDS
    assert made.dataset[0].input == env.task(IDS[0]).prompt


async def test_a_scripted_agent_is_graded_the_same_on_both_backends() -> None:
    # (each backend runs this test: the same calls, the same result.json as a fresh run here)
    env = environment(TIER_AND_NOTE)
    p = dict(env.task(IDS[2]).params or {})
    calls = [ScriptedCall("set_tier", {"customerId": p["customerId"], "tier": p["tier"]})]
    result = await silo.run(env, IDS[2], ScriptedAgent(calls))
    assert [c.passed for c in result.checks][:1] == [True]
    assert not result.passed  # the note is missing
