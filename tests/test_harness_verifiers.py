"""verifiers 0.4 (v1 API): ``load_environment`` evaluated by verifiers' own runner.

In the verifiers virtualenv (it pins ``mcp==2.0.0`` and ``openai<3``), against a
``ScriptedModelServer``: every model call goes through verifiers' interception endpoint, every
tool call through the rollout's episode.
"""

from __future__ import annotations

import json
from pathlib import Path

from .harness_support import (
    ANSWER,
    CALLS,
    TASK_ID,
    make_crm_project,
    read_run,
    run_ids,
    run_peer,
)
from .peers import peer_python


def test_verifiers_runner_plays_an_episode_per_rollout_rewarded_by_the_world(
    tmp_path: Path,
) -> None:
    python = peer_python("verifiers")
    project = make_crm_project(tmp_path / "project")
    before = run_ids(project)
    spec = {"task": TASK_ID, "calls": CALLS, "answer": ANSWER}
    played = run_peer(
        python,
        "verifiers_play.py",
        str(project),
        str(tmp_path / "out"),
        json.dumps(spec),
        cwd=tmp_path,
    )
    assert played["ok"] is True, played["errors"]
    assert played["rewards"] == {"silo": 1.0} and played["reward"] == 1.0
    assert played["metrics"] == {"passed": 1.0, "tool_calls": float(len(CALLS))}
    assert played["tools"][-1] == "submit" and "convert_lead" in played["tools"]
    assert played["model_requests"] == len(CALLS) + 1
    (run_id,) = run_ids(project) - before
    assert played["silo"]["runId"] == run_id
    run = read_run(project, run_id)
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["agentOutput"] == ANSWER
    assert run["result"]["toolErrors"] == 1
    assert run["result"]["modelSteps"] == len(CALLS) + 1
