"""``silo-async task``: list, show, add, update (merge), remove; id forms; store errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result

from .cli_support import cli


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    assert cli("init", "demo").exit_code == 0
    return tmp_path / ".silo" / "environments" / "demo"


def add(task_id: str = "TASK-001", *extra: str) -> Result:
    return cli(
        "task",
        "add",
        "--env",
        "demo",
        "--id",
        task_id,
        "--title",
        "Block a customer",
        "--instruction",
        "Block customer CUS-001.",
        "--verifier",
        "VER-001",
        *extra,
    )


def test_empty_list() -> None:
    assert cli("task", "list", "--env", "demo").stdout == "No tasks.\n"
    assert json.loads(cli("task", "list", "--env", "demo", "--json").stdout) == []


def test_add_writes_camel_case_in_order(project: Path) -> None:
    result = add("TASK-001", "--difficulty", "easy")
    assert (result.exit_code, result.stdout) == (0, "Created tasks/TASK-001.json\n")
    text = (project / "tasks" / "TASK-001.json").read_text()
    assert list(json.loads(text)) == ["id", "title", "instruction", "verifierId", "difficulty"]
    assert json.loads(text)["difficulty"] == "easy"


def test_add_positional_id_and_json() -> None:
    result = cli(
        "task",
        "add",
        "TASK-002",
        "--env",
        "demo",
        "--title=T",
        "--instruction=I",
        "--verifier=VER-002",
        "--json",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "ok": True,
        "action": "add",
        "task": {
            "id": "TASK-002",
            "title": "T",
            "instruction": "I",
            "verifierId": "VER-002",
            "difficulty": "unspecified",
        },
        "file": "tasks/TASK-002.json",
    }


def test_id_forms() -> None:
    same = cli("task", "add", "T1", "--id", "T1", "--env", "demo", "--title", "t", "--instruction")
    assert same.exit_code == 2  # --instruction without value
    clash = cli("task", "add", "T1", "--id", "T2", "--env", "demo")
    assert clash.exit_code == 2
    assert 'Two different task ids: "T1" and --id "T2".' in clash.stderr
    none = cli("task", "add", "--env", "demo", "--title", "t")
    assert none.exit_code == 2
    assert "Missing task id: pass ID or --id ID." in none.stderr


def test_add_missing_field_is_task_invalid() -> None:
    result = cli("task", "add", "T1", "--env", "demo", "--title", "t", "--verifier", "V")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: task_invalid: ")
    assert '"instruction"' in result.stderr


def test_list_and_show() -> None:
    assert add("TASK-002").exit_code == 0
    assert add("TASK-001", "--difficulty", "hard").exit_code == 0
    listed = cli("task", "list", "--env", "demo").stdout.splitlines()
    assert listed == [
        "TASK-001\thard\tVER-001\tBlock a customer",
        "TASK-002\tunspecified\tVER-001\tBlock a customer",
    ]
    as_json = json.loads(cli("task", "list", "--env", "demo", "--json").stdout)
    assert [t["id"] for t in as_json] == ["TASK-001", "TASK-002"]
    shown = cli("task", "show", "TASK-001", "--env", "demo")
    assert json.loads(shown.stdout)["difficulty"] == "hard"
    assert shown.stdout.startswith('{\n  "id": "TASK-001",')


def test_update_merges_given_flags() -> None:
    assert add().exit_code == 0
    result = cli("task", "update", "TASK-001", "--env", "demo", "--title", "New title")
    assert (result.exit_code, result.stdout) == (0, "Updated tasks/TASK-001.json\n")
    task = json.loads(cli("task", "show", "TASK-001", "--env", "demo").stdout)
    assert task == {
        "id": "TASK-001",
        "title": "New title",
        "instruction": "Block customer CUS-001.",
        "verifierId": "VER-001",
        "difficulty": "unspecified",
    }
    out = cli(
        "task", "update", "--id", "TASK-001", "--env", "demo", "--difficulty", "easy", "--json"
    )
    data = json.loads(out.stdout)
    assert data["action"] == "update"
    assert data["task"]["difficulty"] == "easy"
    assert data["task"]["title"] == "New title"


def test_update_without_changes_is_usage_error() -> None:
    assert add().exit_code == 0
    result = cli("task", "update", "TASK-001", "--env", "demo")
    assert result.exit_code == 2
    assert "Nothing to update" in result.stderr


def test_update_to_blank_is_task_invalid() -> None:
    assert add().exit_code == 0
    result = cli("task", "update", "TASK-001", "--env", "demo", "--title", " ")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: task_invalid: ")


def test_remove() -> None:
    assert add().exit_code == 0
    result = cli("task", "remove", "TASK-001", "--env", "demo")
    assert (result.exit_code, result.stdout) == (0, "Removed tasks/TASK-001.json\n")
    assert add().exit_code == 0
    data = json.loads(cli("task", "remove", "TASK-001", "--env", "demo", "--json").stdout)
    assert data == {"ok": True, "action": "remove", "id": "TASK-001", "file": "tasks/TASK-001.json"}


def test_store_errors_keep_their_codes(project: Path) -> None:
    assert add().exit_code == 0
    cases = [
        (add(), "task_already_exists"),
        (cli("task", "show", "NOPE", "--env", "demo"), "task_not_found"),
        (cli("task", "update", "NOPE", "--env", "demo", "--title", "x"), "task_not_found"),
        (cli("task", "remove", "NOPE", "--env", "demo"), "task_not_found"),
        (add("../x"), "unsafe_name"),
        (cli("task", "list", "--env", "ghost"), "environment_not_found"),
    ]
    (project / "tasks" / "BROKEN.json").write_text("{")
    cases.append((cli("task", "show", "BROKEN", "--env", "demo"), "invalid_json"))
    for result, code in cases:
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith(f"error: {code}: "), result.stderr


def test_update_keeps_keys_silo_async_does_not_model(project: Path) -> None:
    """A Silo task file's ``entities`` (or any other tool's key) survives ``task update``."""
    assert add().exit_code == 0
    path = project / "tasks" / "TASK-001.json"
    on_disk = json.loads(path.read_text())
    path.write_text(json.dumps({**on_disk, "entities": {"customerId": "CUS-001"}}))
    assert cli("task", "update", "TASK-001", "--env", "demo", "--title", "New").exit_code == 0
    rewritten = json.loads(path.read_text())
    assert rewritten["title"] == "New" and rewritten["entities"] == {"customerId": "CUS-001"}
    assert list(rewritten)[-1] == "entities"  # silo_async's own keys first, in Silo's order
