"""``serve --protocol nemo-gym``: a resources server driven with NeMo Gym's own client and models.

NeMo Gym 0.7 needs Python >= 3.13.14; its virtualenv runs on the newest Python this machine
has (3.13.0, see the Makefile). Its agent's HTTP client (``nemo_gym.server_utils.request``)
carries the session cookie as Gym's Simple Agent does.
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
    serving,
)
from .peers import peer_python


def test_seed_call_verify_through_the_session_cookie_gives_the_worlds_reward(
    tmp_path: Path,
) -> None:
    python = peer_python("nemo-gym")
    project = make_crm_project(tmp_path / "project")
    before = run_ids(project)
    spec = {"task": TASK_ID, "calls": CALLS, "answer": ANSWER}
    with serving(project, "nemo-gym") as info:
        assert info["protocol"] == "nemo-gym"
        played = run_peer(python, "nemo_gym_play.py", info["url"], json.dumps(spec), cwd=tmp_path)
    assert played["seed"] == {"status": 200, "body": {}, "cookie": ["silo_session"]}
    assert played["no_cookie"][0] == 400
    assert played["no_cookie"][1]["error"]["code"] == "session_not_found"
    first, refused, converted = played["calls"]
    assert first["status"] == 200 and first["body"]["total"] == 1
    assert refused["status"] == 400 and refused["body"]["code"] == "invalid_input"
    assert converted["status"] == 200
    verify = played["verify"]
    run = read_run(project, verify["body"]["silo_run_id"])
    assert len(run_ids(project) - before) == 2  # and the typed seed's, closed unplayed
    assert verify["status"] == 200
    assert verify["body"]["reward"] == played["verify_model"] == 1.0
    assert verify["body"]["task"] == TASK_ID and "response" in verify["body"]
    assert played["verify_again"] == {"status": 200, "reward": 1.0}  # graded once
    assert played["unknown_task"][0] == 404
    assert played["typed"] == [
        "seed: ok",
        "repeated seed: ok",
        "close: ok",
        "repeated close: ok",
        "close never seeded: ok",
        "seed after close: refused",
        "seed after close: refused",
    ]
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["agentOutput"] == ANSWER
