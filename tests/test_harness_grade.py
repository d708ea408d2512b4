"""One grade everywhere (DESIGN §16): the same task and the same calls give the same reward and a
byte-identical ``state-diff.json`` through ``run()``, MCP and every harness.

Each harness is driven with its own released package (in its own virtualenv where its
dependencies clash with ours) and a scripted model (``tests/harness_players.py``); ``run()``
with a scripted agent is the reference.
"""

from __future__ import annotations

import pytest

from .harness_players import PLAYERS, Plays
from .harness_support import CALLS


@pytest.mark.parametrize("harness", [h for h in PLAYERS if h != "run"])
def test_the_same_calls_give_the_same_grade_through_every_harness(
    harness: str,
    plays: Plays,
) -> None:
    expected = plays.get("run").run
    run = plays.get(harness).run
    assert run["runId"] != expected["runId"]
    assert run["calls"] == expected["calls"] == [(n, a) for n, a in CALLS]
    assert run["result"]["reward"] == expected["result"]["reward"] == 1.0
    assert run["result"]["checks"] == expected["result"]["checks"]
    assert run["result"]["agentOutput"] == expected["result"]["agentOutput"]
    assert run["diff"] == expected["diff"]  # state-diff.json, byte for byte
