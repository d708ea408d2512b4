"""A task family's instance ``F#SEED`` is a task id in every harness, graded as ``run()`` grades it.

crm's ``hand-over-account#5`` is played with its gold calls through ``run()``, ``serve --task``
over MCP (stdio), OpenEnv (its WebSocket), NeMo Gym, verifiers and TRL
(``tests/harness_players.py``, each with its own released package): every harness builds the
instance itself from the id, and every play leaves the same checks, reward and
``state-diff.json`` bytes, and a ``run.json`` naming the instance's family, seed and split.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import silo_async as silo
from silo_async.project import load_environment

from .harness_players import PLAYERS, Plays
from .harness_support import ENV_NAME, Script

INSTANCE = "hand-over-account#5"


@pytest.fixture(scope="module")
def instance_plays(tmp_path_factory: pytest.TempPathFactory) -> Plays:
    """Every harness's play of the instance's gold calls, on one crm project."""
    plays = Plays(tmp_path_factory.mktemp("instance-plays"))
    env = load_environment(ENV_NAME, plays.project)
    calls = [(c.tool, dict(c.input)) for c in env.instance(INSTANCE).gold_calls()]
    plays.script = Script(INSTANCE, calls, "Done: the account and its open deal are handed over.")
    return plays


def _run_json(project: Path, run_id: str) -> dict[str, object]:
    path = project / ".silo" / "runs" / run_id / "run.json"
    loaded: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


#: Every harness but OpenEnv's ``/mcp`` sessions (the OpenEnv server of ``openenv`` again, with its
#: validator: slow) and Inspect's ``eval`` (its samples are tasks named as every adapter names
#: them: tests/test_families_everywhere.py builds them from instance ids in this process).
HARNESSES = [h for h in PLAYERS if h not in ("openenv-mcp", "inspect")]


@pytest.mark.parametrize("harness", HARNESSES)
def test_an_instance_is_graded_the_same_through_every_harness(
    harness: str, instance_plays: Plays
) -> None:
    expected = instance_plays.get("run").run
    run = instance_plays.get(harness).run
    assert run["calls"] == [(n, a) for n, a in instance_plays.script.calls]
    assert run["result"]["reward"] == expected["result"]["reward"] == 1.0
    assert run["result"]["checks"] == expected["result"]["checks"]
    assert "ACC-007 matches the gold solution" in [c["label"] for c in run["result"]["checks"]]
    assert run["diff"] == expected["diff"]  # state-diff.json, byte for byte
    task = load_environment(ENV_NAME, instance_plays.project).task(INSTANCE)
    recorded = _run_json(instance_plays.project, run["runId"])
    assert recorded["taskId"] == INSTANCE
    assert recorded["task"] == task.to_dict()
    assert (recorded["family"], recorded["seed"], recorded["split"]) == (
        "hand-over-account",
        5,
        silo.split_of(task),
    )
