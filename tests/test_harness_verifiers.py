"""verifiers 0.4 (v1 API): ``load_environment`` evaluated by verifiers' own runner.

In the verifiers virtualenv (it pins ``mcp==2.0.0`` and ``openai<3``), against a
``ScriptedModelServer``: every model call goes through verifiers' interception endpoint, every
tool call through the rollout's episode.
"""

from __future__ import annotations

from .harness_players import Plays
from .harness_support import ANSWER, CALLS


def test_verifiers_runner_plays_an_episode_per_rollout_rewarded_by_the_world(
    plays: Plays,
) -> None:
    play = plays.get("verifiers")
    played, run = play.output, play.run
    assert played["ok"] is True, played["errors"]
    assert played["rewards"] == {"silo": 1.0} and played["reward"] == 1.0
    assert played["metrics"] == {"passed": 1.0, "tool_calls": float(len(CALLS))}
    assert played["tools"][-1] == "submit" and "convert_lead" in played["tools"]
    assert played["model_requests"] == len(CALLS) + 1
    assert played["silo"]["runId"] == run["runId"]
    assert run["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["agentOutput"] == ANSWER
    assert run["result"]["toolErrors"] == 1
    assert run["result"]["modelSteps"] == len(CALLS) + 1
