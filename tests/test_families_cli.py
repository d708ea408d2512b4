"""The task family commands (DESIGN.md section 18): task list --families, task sample, task show.

Run on a project made from the crm template, whose families are its registry's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import silo_async as silo

from .cli_support import cli

FAMILY = "hand-over-account"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the crm template as ``crm`` (made once: the commands only read it)."""
    root = tmp_path_factory.mktemp("families-cli")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert cli("init", "crm", "--template", "crm").exit_code == 0
    return root


@pytest.fixture(autouse=True)
def inside(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "path", list(sys.path))


def test_task_list_families(project: Path) -> None:
    result = cli("task", "list", "--env", "crm", "--families", "--json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert {
        "id": FAMILY,
        "title": "Hand an account and its open deals over",
        "difficulty": "medium",
    } in listed
    text = cli("task", "list", "--env", "crm", "--families")
    assert f"{FAMILY}\tmedium\tHand an account and its open deals over" in text.stdout.splitlines()
    # Without --families the list is still the hand-written tasks.
    plain = json.loads(cli("task", "list", "--env", "crm", "--json").stdout)
    assert all("#" not in t["id"] for t in plain) and plain


def test_task_sample_prints_what_an_eval_plays(project: Path) -> None:
    result = cli(
        "task", "sample", "--env", "crm", "--family", FAMILY, "--count", "3",
        "--split", "train", "--start", "5", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    env = silo.load_environment("crm")
    expected = env.instances(FAMILY, 3, split="train", start=5)
    assert lines == [
        {
            "id": t.id,
            "split": "train",
            "instruction": t.instruction,
            "params": dict(t.params or {}),
        }
        for t in expected
    ]
    text = cli("task", "sample", "--env", "crm", "--family", FAMILY, "--count", "2")
    assert [line.split("\t")[1] for line in text.stdout.splitlines()] == ["test", "test"]


def test_task_show_prints_an_instance_with_its_gold_calls(project: Path) -> None:
    result = cli("task", "show", "--env", "crm", "--task", f"{FAMILY}#17", "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    task = silo.load_environment("crm").task(f"{FAMILY}#17")
    assert list(shown) == ["id", "split", "instruction", "params", "gold"]
    assert (shown["id"], shown["split"]) == (task.id, silo.split_of(task))
    assert shown["params"] == dict(task.params or {})
    assert shown["gold"][0] == {
        "tool": "reassign_account",
        "input": {
            "accountId": shown["params"]["accountId"],
            "newOwnerId": shown["params"]["newOwnerId"],
            "actorId": shown["params"]["actorId"],
        },
    }
    text = cli("task", "show", "--env", "crm", "--task", f"{FAMILY}#17")
    assert text.stdout.startswith(f"{FAMILY}#17\t")
    assert "gold:\n  reassign_account {" in text.stdout


def test_a_hand_written_task_shows_as_before_with_either_spelling(project: Path) -> None:
    first = cli("task", "show", "TASK-001", "--env", "crm")
    second = cli("task", "show", "--task", "TASK-001", "--env", "crm")
    assert first.exit_code == second.exit_code == 0
    assert first.stdout == second.stdout
    assert json.loads(first.stdout)["id"] == "TASK-001"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["task", "show", "--env", "crm", "--task", f"{FAMILY}#01"], "error: task_not_found: "),
        (["task", "sample", "--env", "crm", "--family", "nope"], 'has no task family "nope"'),
    ],
)
def test_unknown_instances_and_families_are_task_not_found(args: list[str], fragment: str) -> None:
    result = cli(*args)
    assert result.exit_code == 1
    assert fragment in result.stderr
