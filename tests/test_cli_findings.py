"""The smaller findings of "trust at a glance": each as a general behaviour of the CLI."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from .cli_support import cli

ROOT = Path(__file__).resolve().parent.parent
NOOP = str(ROOT / "examples" / "agents" / "noop.py")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli("init", "crm1", "--template", "crm").exit_code == 0
    return tmp_path


def test_tasks_takes_all_or_ids_and_points_at_task(project: Path) -> None:
    picked = cli("eval", "--env", "crm1", "--tasks", "TASK-003,TASK-001", "--agent", NOOP, "--json")
    assert picked.exit_code == 0, picked.output
    assert json.loads(picked.stdout)["config"]["tasks"] == ["TASK-003", "TASK-001"]
    every = cli("eval", "--env", "crm1", "--tasks", "all", "--agent", NOOP, "--json")
    assert len(json.loads(every.stdout)["config"]["tasks"]) == 11
    empty = cli("eval", "--env", "crm1", "--tasks", ",", "--agent", NOOP)
    assert empty.exit_code == 2 and "repeat --task ID" in empty.stderr
    both = cli("eval", "--env", "crm1", "--tasks", "TASK-001", "--task", "TASK-002")
    assert both.exit_code == 2 and "--task ID (repeatable) or --tasks" in both.stderr


def test_numbers_that_are_not_numbers_say_so(project: Path) -> None:
    runs = cli("run", "--env", "crm1", "--task", "TASK-001", "--runs", "abc")
    assert runs.exit_code == 2
    assert "'abc' is not a whole number (for example 5)." in runs.stderr
    assert "integer range" not in runs.stderr
    rate = cli("eval", "--env", "crm1", "--agent", NOOP, "--fail-under", "most")
    assert rate.exit_code == 2 and "'most' is not a number (for example 0.8)." in rate.stderr
    low = cli("run", "--env", "crm1", "--task", "TASK-001", "--runs", "0")
    assert low.exit_code == 2 and "0 is not in the range x>=1" in low.stderr


def test_a_name_taken_in_another_case_names_the_environment_in_the_way(project: Path) -> None:
    other = cli("init", "CRM1")
    assert other.exit_code == 1
    assert other.stderr.strip() == (
        'error: environment_already_exists: Environment "CRM1" already exists as "crm1" '
        '(names are compared ignoring case). Try "CRM1-2".'
    )
    same = cli("init", "crm1")
    assert 'Environment "crm1" already exists. Try "crm1-2".' in same.stderr


def test_new_environments_get_the_usual_permissions(project: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    env_dir = project / ".silo" / "environments" / "crm1"
    assert stat.S_IMODE(env_dir.stat().st_mode) == 0o777 & ~umask  # not drwx------
    assert not list(env_dir.parent.glob(".staging-*"))


def test_one_broken_task_file_does_not_hide_the_rest(project: Path) -> None:
    tasks = project / ".silo" / "environments" / "crm1" / "tasks"
    (tasks / "TASK-001.json").write_text('{"id": ')
    result = cli("env", "validate", "--env", "crm1")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith('ERROR\tinvalid_json\tTask file "tasks/TASK-001.json"')
    summary = lines[-1].split("\t")
    assert summary[:2] == ["FAILED", "crm1"]
    assert summary[2] == "data=12 tasks=11 tools=51 verifiers=11"


def test_run_with_a_broken_data_file_names_the_file(project: Path) -> None:
    data = project / ".silo" / "environments" / "crm1" / "data" / "accounts.json"
    data.write_text('{"broken')
    result = cli("run", "--env", "crm1", "--task", "TASK-001", "--agent", NOOP)
    assert result.exit_code == 1
    assert "data/accounts.json" in result.stderr and "environment.py" not in result.stderr
