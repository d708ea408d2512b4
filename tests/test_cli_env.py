"""``silo-async env list`` and ``silo-async env validate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_support import cli


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_env_list() -> None:
    assert (
        cli("env", "list").stdout == "No environments. Create one with `silo-async init <name>`.\n"
    )
    assert json.loads(cli("env", "list", "--json").stdout) == []
    for name in ("zeta", "Alpha"):
        assert cli("init", name).exit_code == 0
    assert cli("env", "list").stdout == "alpha\nzeta\n"
    assert json.loads(cli("env", "list", "--json").stdout) == ["alpha", "zeta"]


def test_validate_fresh_blank_is_ok_with_warnings() -> None:
    assert cli("init", "demo").exit_code == 0
    result = cli("env", "validate", "--env", "demo")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == "OK\tdemo\tdata=0 tasks=0 tools=0 verifiers=0"
    for line in lines[:-1]:
        level, code, message = line.split("\t")
        assert level == "WARNING"
        assert code and message
    assert any("\tno_tasks\t" in line for line in lines)


def test_validate_failure_exits_1_in_text_and_json(tmp_path: Path) -> None:
    assert cli("init", "demo").exit_code == 0
    env = tmp_path / ".silo" / "environments" / "demo"
    (env / "data" / "broken.json").write_text("{")
    result = cli("env", "validate", "--env", "demo")
    assert result.exit_code == 1
    assert "ERROR\tdata_invalid_json\t" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("FAILED\tdemo\t")
    as_json = cli("env", "validate", "--env", "demo", "--json")
    assert as_json.exit_code == 1
    report = json.loads(as_json.stdout)
    assert report["ok"] is False
    assert report["environment"] == "demo"
    assert set(report["counts"]) == {"data", "tasks", "tools", "verifiers"}
    assert {"level": "error", "code": "data_invalid_json"}.items() <= report["findings"][0].items()


def test_validate_missing_environment_is_an_error_not_a_finding() -> None:
    result = cli("env", "validate", "--env", "ghost")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: environment_not_found: ")
