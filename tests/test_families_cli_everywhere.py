"""Instance ids ``F#SEED`` on every command that takes a task: ``eval --task`` (beside
``--family``), ``runs export``, ``eval --resume``, ``run --faults``, ``replay``, ``audit --task``.

One crm project for the module; each command builds the instances itself from their ids.
(``run --task`` and ``task show --task``: tests/test_families_disk.py and
tests/test_families_cli.py; ``serve --task``: tests/test_families_harnesses.py.)
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import anyio
import pytest

import silo_async as silo
from silo_async.testing import gold_agent

from .cli_support import cli
from .harness_support import make_crm_project
from .resume_support import same_eval

GOLD = "silo_async.testing:gold_agent"
INSTANCE = "hand-over-account#5"
#: An instance named by --task, then the first two test instances of win-lead.
PLAN = ["--env", "crm", "--task", INSTANCE, "--family", "win-lead", "--count", "2"]
PLAN += ["--agent", GOLD, "--concurrency", "1"]


@pytest.fixture(scope="module")
def crm_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the crm template as environment ``crm``."""
    return make_crm_project(tmp_path_factory.mktemp("families-cli") / "project")


@pytest.fixture
def project(crm_project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(crm_project)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    return crm_project


def test_eval_plays_named_instances_with_a_familys_exports_and_resumes_them(
    project: Path, tmp_path: Path
) -> None:
    env = silo.load_environment("crm")
    expected = [INSTANCE] + [t.id for t in env.instances("win-lead", 2, split="test")]
    reference, cut = tmp_path / "reference", tmp_path / "cut"
    result = cli("eval", *PLAN, "--out", str(reference), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [t["task"]["id"] for t in data["tasks"]] == expected
    groups = [(f["family"], f["split"], f["instances"]) for f in data["families"]]
    split = silo.split_of(env.task(INSTANCE))
    assert groups == [("hand-over-account", split, 1), ("win-lead", "test", 2)]
    assert all(f["agents"][GOLD]["passRate"] == 1.0 for f in data["families"])

    exported = cli("runs", "export", "--eval", str(reference))
    assert exported.exit_code == 0, exported.output
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [line["task"] for line in lines] == expected
    assert [line["reward"] for line in lines] == [1.0, 1.0, 1.0]
    assert lines[0]["messages"][0]["content"] == env.task(INSTANCE).instruction

    assert cli("eval", *PLAN, "--out", str(cut)).exit_code == 0
    index = (cut / "runs" / "index.jsonl").read_text().splitlines()
    (cut / "runs" / "index.jsonl").write_text(index[0] + "\n")
    for line in index[1:]:
        shutil.rmtree(cut / json.loads(line)["runDir"])
    (cut / "summary.json").unlink()
    resumed = cli("eval", "--resume", str(cut), "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["resumed"] == {"kept": 1, "rerun": 2}
    same_eval(reference, cut)


def test_an_instance_run_with_faults_strikes_alike_and_replays_identically(project: Path) -> None:
    flags = ["--faults", "unavailable@0.5", "--fault-seed", "7", "--json"]
    runs = [cli("run", "--env", "crm", "--task", INSTANCE, "--agent", GOLD, *flags) for _ in "ab"]
    first, again = (json.loads(r.stdout) for r in runs)
    assert first["task"]["id"] == INSTANCE and first["task"]["seed"] == 5
    assert first["injectedFaults"] == again["injectedFaults"] >= 1
    assert first["checks"] == again["checks"] and first["reward"] == again["reward"]
    replayed = cli("replay", first["runId"], "--json")
    assert replayed.exit_code == 0, replayed.output
    report = json.loads(replayed.stdout)
    assert report["taskId"] == INSTANCE and report["identical"] is True
    assert report["callsReplayed"] == report["callsMatching"] == 3


def test_audit_takes_an_instance_id(project: Path) -> None:
    result = cli("audit", "--env", "crm", "--task", INSTANCE, "--json")
    assert result.exit_code == 0, result.output
    [audited] = json.loads(result.stdout)["tasks"]
    assert audited["task"] == INSTANCE and audited["verdict"] == "sound"
    assert audited["solver"]["passed"] is True
    assert not any(probe["passed"] for probe in audited["probes"].values())


def test_a_family_alone_plays_ten_test_instances_from_seed_zero(project: Path) -> None:
    # --count 10, --split test, --start 0 by default; no hand-written task beside them.
    env = silo.load_environment("crm")
    expected = [t.id for t in env.instances("win-lead", 10, split="test", start=0)]
    result = cli("eval", "--env", "crm", "--family", "win-lead", "--agent", GOLD, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [t["task"]["id"] for t in data["tasks"]] == expected
    assert [(f["family"], f["split"], f["instances"]) for f in data["families"]] == [
        ("win-lead", "test", 10)
    ]
    summary = anyio.run(
        lambda: silo.evaluate(
            env, None, {"gold": gold_agent}, families={"win-lead": 10}, report=False
        )
    )
    assert [t.id for t in summary.tasks] == expected


@pytest.mark.parametrize("command", [["remove"], ["update", "--title", "New"]])
def test_an_instance_has_no_file_to_update_or_remove(project: Path, command: list[str]) -> None:
    result = cli("task", command[0], INSTANCE, "--env", "crm", *command[1:])
    assert result.exit_code == 1
    assert result.stderr.startswith(f'error: task_not_found: Task "{INSTANCE}" was not found')
    assert "names an instance of a task family, generated by the family in families/" in (
        result.stderr
    )
