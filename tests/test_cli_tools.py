"""``silo-async tool`` and ``silo-async verifier``: scaffold (add) and list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_support import cli


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    assert cli("init", "demo").exit_code == 0
    return tmp_path / ".silo" / "environments" / "demo"


def test_tool_add_text(project: Path) -> None:
    result = cli("tool", "add", "get_profits", "--env", "demo", "--description", "Profit lines.")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Created tools/get_profits.py",
        "Registered get_profits in tools/__init__.py",
        "Next: implement the tool body in tools/get_profits.py (look for TODO).",
    ]
    assert "from .get_profits import get_profits" in (project / "tools" / "__init__.py").read_text()
    assert "Profit lines." in (project / "tools" / "get_profits.py").read_text()


def test_tool_add_json_and_list() -> None:
    result = cli("tool", "add", "get-profits", "--env", "demo", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "ok": True,
        "action": "add",
        "name": "get-profits",
        "created": "tools/get_profits.py",
        "registeredIn": "tools/__init__.py",
        "identifier": "get_profits",
    }
    listed = cli("tool", "list", "--env", "demo")
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.startswith("get-profits\tTODO: describe what get-profits does.")
    tools = json.loads(cli("tool", "list", "--env", "demo", "--json").stdout)
    assert [t["name"] for t in tools] == ["get-profits"]
    assert set(tools[0]) == {"name", "description", "inputSchema"}


def test_empty_lists() -> None:
    assert cli("tool", "list", "--env", "demo").stdout == "No tools.\n"
    assert cli("verifier", "list", "--env", "demo").stdout == "No verifiers.\n"
    assert json.loads(cli("tool", "list", "--env", "demo", "--json").stdout) == []
    assert json.loads(cli("verifier", "list", "--env", "demo", "--json").stdout) == []


def test_verifier_add_text_json_and_list() -> None:
    result = cli("verifier", "add", "VER-001", "--env", "demo", "--task", "TASK-001")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "Created verifiers/ver_001.py",
        "Registered ver_001 in verifiers/__init__.py",
        "Next: replace the failing TODO check in verifiers/ver_001.py.",
        'Task "TASK-001" does not exist yet: silo-async task add TASK-001 --env demo '
        '--title "..." --instruction "..." --verifier VER-001',
    ]
    out = cli(
        "verifier", "add", "VER-002", "--env=demo", "--task=TASK-002", "--name=Totals", "--json"
    )
    assert json.loads(out.stdout) == {
        "ok": True,
        "action": "add",
        "id": "VER-002",
        "created": "verifiers/ver_002.py",
        "registeredIn": "verifiers/__init__.py",
        "identifier": "ver_002",
    }
    listed = cli("verifier", "list", "--env", "demo").stdout.splitlines()
    assert "VER-002\tTASK-002\tTotals" in listed
    assert any(line.startswith("VER-001\tTASK-001\t") for line in listed)
    as_json = json.loads(cli("verifier", "list", "--env", "demo", "--json").stdout)
    assert {"id": "VER-002", "taskId": "TASK-002", "name": "Totals"} in as_json


def test_verifier_add_needs_task() -> None:
    result = cli("verifier", "add", "VER-001", "--env", "demo")
    assert result.exit_code == 2
    assert "Missing option '--task'" in result.stderr


def test_state_option_is_used_and_checked(project: Path) -> None:
    (project / "state.py").write_text("from typing import Any\n\nWorld = dict[str, Any]\n")
    result = cli("tool", "add", "t1", "--env", "demo", "--state", "World")
    assert result.exit_code == 0, result.output
    assert "from ..state import World" in (project / "tools" / "t1.py").read_text()
    bad = cli("tool", "add", "t2", "--env", "demo", "--state", "not-an-identifier")
    assert bad.exit_code == 1
    assert bad.stderr.startswith("error: unsafe_name: ")


def test_scaffold_errors_keep_their_codes(project: Path) -> None:
    assert cli("tool", "add", "t1", "--env", "demo").exit_code == 0
    assert cli("verifier", "add", "V1", "--env", "demo", "--task", "T1").exit_code == 0
    cases = [
        (cli("tool", "add", "t1", "--env", "demo"), "tool_already_exists"),
        (cli("verifier", "add", "V1", "--env", "demo", "--task", "T1"), "verifier_already_exists"),
        (cli("tool", "add", "../t", "--env", "demo"), "unsafe_name"),
        (cli("verifier", "add", "V2", "--env", "demo", "--task", "../T"), "unsafe_name"),
        (cli("tool", "add", "t9", "--env", "ghost"), "environment_not_found"),
    ]
    for result, code in cases:
        assert result.exit_code == 1, result.output
        assert result.stderr.startswith(f"error: {code}: "), result.stderr
