"""Inspect AI: ``silo_async/silo_task`` found through the entry point, played with mockllm."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .harness_support import ANSWER, CALLS, TASK_ID, make_crm_project, new_run, run_ids
from .peers import require_module

require_module("inspect_ai")


SCRIPT = Path(__file__).parent / "peer_scripts" / "inspect_play.py"


def play_inspect(project: Path, log_dir: Path, **script: Any) -> dict[str, Any]:
    """``inspect eval silo_async/silo_task -T env=crm -T tasks=TASK-001`` run from the project.

    In a child whose working directory is the project, as a user runs it: Inspect names a
    task by its installed package, and in this checkout a build's ``silo_async.egg-info``
    would hide the installed distribution's metadata.
    """
    spec = {"task_args": {"env": "crm", "tasks": TASK_ID}, "log_dir": str(log_dir), **script}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), json.dumps(spec)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    played: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return played


def test_the_registered_task_plays_one_episode_per_sample_and_scores_its_reward(
    tmp_path: Path,
) -> None:
    project = make_crm_project(tmp_path / "project")
    before = run_ids(project)
    played = play_inspect(project, tmp_path / "logs", calls=CALLS, answer=ANSWER)
    assert played["status"] == "success", played["error"]
    assert played["id"] == TASK_ID
    run = new_run(project, before)
    assert played["score"] == run["result"]["reward"] == 1.0
    assert played["answer"] == ANSWER
    assert played["metadata"]["passed"] is True
    assert played["metadata"]["runId"] == run["runId"]
    assert played["metadata"]["checks"] == run["result"]["checks"]
    # Every call reached silo, the one Inspect's own schema check would have refused included:
    # silo's message is what the model read.
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["toolErrors"] == 1
    (refused,) = played["toolErrors"]
    assert json.loads(refused)["code"] == "invalid_input"
    assert '"qury" is not a parameter' in json.loads(refused)["message"]
    assert run["result"]["modelSteps"] == len(CALLS) + 1


def test_a_reply_without_a_tool_call_is_the_answer(tmp_path: Path) -> None:
    project = make_crm_project(tmp_path / "project")
    before = run_ids(project)
    played = play_inspect(project, tmp_path / "logs", calls=[], text="I will not do that.")
    run = new_run(project, before)
    assert run["result"]["agentOutput"] == "I will not do that."
    assert run["result"]["toolCalls"] == 0
    assert played["score"] == run["result"]["reward"]


def test_the_model_sees_every_tool_with_its_schema_and_submit_last(tmp_path: Path) -> None:
    project = make_crm_project(tmp_path / "project")
    played = play_inspect(project, tmp_path / "logs", calls=[], text="nothing")
    names = [t["name"] for t in played["tools"]]
    assert names[-1] == "submit" and "convert_lead" in names
    convert = next(t for t in played["tools"] if t["name"] == "convert_lead")
    assert "leadId" in convert["required"]


def test_an_unknown_environment_or_task_fails_at_task_creation(tmp_path: Path) -> None:
    import silo_async as silo
    from silo_async.integrations.inspect import silo_task

    project = make_crm_project(tmp_path / "project")
    with pytest.raises(silo.SiloError) as info:
        silo_task(project=project, env="crm", tasks=["TASK-999"])
    assert info.value.code == "task_not_found"
    with pytest.raises(ValueError, match="env=NAME"):
        silo_task(project=project)
