"""The CLI of conversational tasks: ``task add|show|update --user``, ``run``'s report (§13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .chat_world import SYNC_USER, TASKS, write_project
from .cli_support import cli


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_project(tmp_path, TASKS[1:])


def test_task_add_takes_a_user_inline_or_from_a_file_and_show_prints_it(project: Path) -> None:
    added = cli(
        "task", "add", "CHAT-ORDER", "--env", "bakery", "--title", "Take an order",
        "--instruction", "Serve the customer.", "--verifier", "VER-ORDER",
        "--user", json.dumps(TASKS[0].user),
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    shown = json.loads(cli("task", "show", "CHAT-ORDER", "--env", "bakery").stdout)
    assert shown == TASKS[0].to_dict() | {"title": "Take an order"}
    on_disk = project.parent / ".silo/environments/bakery/tasks/CHAT-ORDER.json"
    assert json.loads(on_disk.read_text())["user"] == TASKS[0].user
    user_file = project.parent / "user.json"
    user_file.write_text(json.dumps({**SYNC_USER, "maxTurns": 9}))
    updated = cli("task", "update", "CHAT-ORDER", "--env", "bakery", "--user", "user.json")
    assert updated.exit_code == 0, updated.output
    shown = json.loads(cli("task", "show", "CHAT-ORDER", "--env", "bakery", "--json").stdout)
    assert shown["user"]["maxTurns"] == 9 and shown["title"] == "Take an order"


def test_a_malformed_user_is_task_invalid_naming_the_field(project: Path) -> None:
    bad = {**SYNC_USER, "script": [{"when": ["offline"], "do": [{"tool": "refund_order"}]}]}
    result = cli(
        "task", "add", "CHAT-X", "--env", "bakery", "--title", "x", "--instruction", "y",
        "--verifier", "VER-SYNC", "--user", json.dumps(bad),
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith('error: task_invalid: Task "CHAT-X" has an invalid ')
    assert '"user.script[0].do[0].tool"' in result.stderr
    as_json = cli(
        "task", "add", "CHAT-X", "--env", "bakery", "--title", "x", "--instruction", "y",
        "--verifier", "VER-SYNC", "--user", '{"persona": "p", "opening": " "}', "--json",
    )  # fmt: skip
    assert as_json.exit_code == 1
    assert "user.opening" in as_json.stderr
    not_json = cli(
        "task", "add", "CHAT-X", "--env", "bakery", "--title", "x", "--instruction", "y",
        "--verifier", "VER-SYNC", "--user", "{opening",
    )  # fmt: skip
    assert not_json.exit_code == 1 and not_json.stderr.startswith("error: invalid_json: --user")
    assert not (project.parent / ".silo/environments/bakery/tasks/CHAT-X.json").exists()


def test_run_shows_the_conversation(project: Path) -> None:
    result = cli("run", "--env", "bakery", "--task", "CHAT-SYNC", "--agent",
                 f"{project.name}:solver")  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "User turns  2  (1 user tool call)" in out
    tail = out[out.index("Conversation:") :].splitlines()
    assert tail == [
        "Conversation:",
        "  User   My order won't go through, it's bo@example.com.",
        "  Agent  Please switch offline mode off.",
        "  User   OK, I switched offline mode off.  [did: set_offline_mode]",
        "  Agent  Your order is placed.",
        "  User   Great, bye!  (ended the conversation)",
    ]
    many = cli("run", "--env", "bakery", "--task", "CHAT-SYNC", "--runs", "2", "--agent",
               f"{project.name}:solver")  # fmt: skip
    assert many.exit_code == 0, many.output
    assert "run 1  PASS  reward 1.00 · 1 call · 2 user turns · completed" in many.stdout
