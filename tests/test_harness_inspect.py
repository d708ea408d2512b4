"""Inspect AI: ``silo_async/silo_task`` found through the entry point, played with mockllm."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from .harness_players import Plays
from .harness_support import ANSWER, CALLS, TASK_ID, new_run, run_ids, run_peer
from .peers import require_module


def test_the_registered_task_plays_one_episode_per_sample_and_scores_its_reward(
    plays: Plays,
) -> None:
    play = plays.get("inspect")
    played, run = play.output, play.run
    assert played["id"] == TASK_ID
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


def test_a_reply_without_a_tool_call_is_the_answer_and_every_tool_is_shown(
    plays: Plays,
    tmp_path: Path,
) -> None:
    require_module("inspect_ai")
    project = plays.project
    before = run_ids(project)
    spec = {
        "task_args": {"env": "crm", "tasks": TASK_ID},
        "log_dir": str(tmp_path / "logs"),
        "calls": [],
        "text": "I will not do that.",
    }
    played = run_peer(Path(sys.executable), "inspect_play.py", json.dumps(spec), cwd=project)
    run = new_run(project, before)
    assert run["result"]["agentOutput"] == "I will not do that."
    assert run["result"]["toolCalls"] == 0
    assert played["score"] == run["result"]["reward"]
    names = [t["name"] for t in played["tools"]]
    assert names[-1] == "submit" and "convert_lead" in names
    convert = next(t for t in played["tools"] if t["name"] == "convert_lead")
    assert "leadId" in convert["required"]


def test_an_unknown_environment_or_task_fails_at_task_creation(plays: Plays) -> None:
    require_module("inspect_ai")
    import silo_async as silo
    from silo_async.integrations.inspect import silo_task

    with pytest.raises(silo.SiloError) as info:
        silo_task(project=plays.project, env="crm", tasks=["TASK-999"])
    assert info.value.code == "task_not_found"
    with pytest.raises(ValueError, match="env=NAME"):
        silo_task(project=plays.project)
