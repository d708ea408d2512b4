"""``serve --protocol nemo-gym``: a resources server driven with NeMo Gym's own client and models.

NeMo Gym 0.7 needs Python >= 3.13.14; its virtualenv runs on the newest Python this machine
has (3.13.0, see the Makefile). Its agent's HTTP client (``nemo_gym.server_utils.request``)
carries the session cookie as Gym's Simple Agent does.
"""

from __future__ import annotations

from .harness_players import Plays
from .harness_support import ANSWER, CALLS, TASK_ID


def test_seed_call_verify_through_the_session_cookie_gives_the_worlds_reward(
    plays: Plays,
) -> None:
    play = plays.get("nemo-gym")
    played, run = play.output, play.run
    assert played["info"]["protocol"] == "nemo-gym"
    assert played["seed"] == {"status": 200, "body": {}, "cookie": ["silo_session"]}
    assert played["no_cookie"][0] == 400
    assert played["no_cookie"][1]["error"]["code"] == "session_not_found"
    first, refused, converted = played["calls"]
    assert first["status"] == 200 and first["body"]["total"] == 1
    assert refused["status"] == 400 and refused["body"]["code"] == "invalid_input"
    assert converted["status"] == 200
    verify = played["verify"]
    assert verify["status"] == 200
    assert verify["body"]["reward"] == played["verify_model"] == run["result"]["reward"] == 1.0
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
