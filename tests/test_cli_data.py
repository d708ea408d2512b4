"""``silo-async data``: list, show, add, update, remove; content flags; store errors."""

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


def test_empty_list() -> None:
    result = cli("data", "list", "--env", "demo")
    assert (result.exit_code, result.stdout) == (0, "No datasets.\n")
    assert json.loads(cli("data", "list", "--env", "demo", "--json").stdout) == []


def test_add_inline_then_list_show(project: Path) -> None:
    result = cli(
        "data", "add", "customers", "--env", "demo", "--data", '{"CUS-1": {"id": "CUS-1"}}'
    )
    assert (result.exit_code, result.stdout) == (0, "Created data/customers.json\n")
    assert json.loads((project / "data" / "customers.json").read_text()) == {
        "CUS-1": {"id": "CUS-1"}
    }
    listed = cli("data", "list", "--env", "demo")
    size = (project / "data" / "customers.json").stat().st_size
    assert listed.stdout == f"customers\tdata/customers.json\t{size}B\n"
    assert json.loads(cli("data", "list", "--env=demo", "--json").stdout) == [
        {"name": "customers", "file": "data/customers.json", "bytes": size}
    ]
    shown = cli("data", "show", "customers", "--env", "demo")
    assert shown.stdout == '{\n  "CUS-1": {\n    "id": "CUS-1"\n  }\n}\n'
    assert cli("data", "show", "customers", "--env", "demo", "--json").stdout == shown.stdout


def test_add_from_file_and_json_output(tmp_path: Path) -> None:
    (tmp_path / "seed.json").write_text("[1, 2, 3]")
    result = cli("data", "add", "numbers", "--env", "demo", "--file", "seed.json", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "ok": True,
        "action": "add",
        "name": "numbers",
        "file": "data/numbers.json",
    }


@pytest.mark.parametrize("value", ["42", '"text"', "null", "[]", '{"a": {"b": [1, {"c": 2}]}}'])
def test_any_json_value_is_accepted(value: str) -> None:
    assert cli("data", "add", "x", "--env", "demo", "--data", value).exit_code == 0
    assert json.loads(cli("data", "show", "x", "--env", "demo").stdout) == json.loads(value)


def test_update_and_remove() -> None:
    assert cli("data", "add", "x", "--env", "demo", "--data", "1").exit_code == 0
    result = cli("data", "update", "x", "--env", "demo", "--data", "2")
    assert (result.exit_code, result.stdout) == (0, "Updated data/x.json\n")
    assert cli("data", "show", "x", "--env", "demo").stdout == "2\n"
    updated = json.loads(
        cli("data", "update", "x", "--env", "demo", "--data", "3", "--json").stdout
    )
    assert updated == {"ok": True, "action": "update", "name": "x", "file": "data/x.json"}
    result = cli("data", "remove", "x", "--env", "demo")
    assert (result.exit_code, result.stdout) == (0, "Removed data/x.json\n")
    assert cli("data", "add", "y", "--env", "demo", "--data", "1").exit_code == 0
    removed = json.loads(cli("data", "remove", "y", "--env", "demo", "--json").stdout)
    assert removed == {"ok": True, "action": "remove", "name": "y", "file": "data/y.json"}


def test_both_or_neither_content_flag_is_usage_error(tmp_path: Path) -> None:
    (tmp_path / "seed.json").write_text("1")
    both = cli("data", "add", "x", "--env", "demo", "--data", "1", "--file", "seed.json")
    assert both.exit_code == 2
    assert "Pass either --file or --data, not both." in both.stderr
    neither = cli("data", "add", "x", "--env", "demo")
    assert neither.exit_code == 2
    assert "Missing --file PATH or --data JSON." in neither.stderr


def test_missing_file_is_usage_error() -> None:
    result = cli("data", "add", "x", "--env", "demo", "--file", "nope.json")
    assert result.exit_code == 2
    assert "nope.json" in result.stderr


@pytest.mark.parametrize("bad", ["{oops", "NaN", "[1,]", ""])
def test_unparsable_content_names_parser_message(bad: str) -> None:
    result = cli("data", "add", "x", "--env", "demo", "--data", bad)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: invalid_json: Content of --data is not valid JSON: ")
    assert result.stderr.count("\n") == 1


def test_unparsable_file_names_file(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"a": }')
    result = cli("data", "add", "x", "--env", "demo", "--file", "bad.json")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        'error: invalid_json: Content of --file "bad.json" is not valid JSON: Expecting value:'
    )


def test_store_errors_keep_their_codes() -> None:
    assert cli("data", "add", "x", "--env", "demo", "--data", "1").exit_code == 0
    cases = [
        (["data", "add", "x", "--data", "1"], "data_already_exists"),
        (["data", "update", "nope", "--data", "1"], "data_not_found"),
        (["data", "remove", "nope"], "data_not_found"),
        (["data", "show", "nope"], "data_not_found"),
        (["data", "add", "../evil", "--data", "1"], "unsafe_name"),
        (["data", "add", "x", "--data", "1", "--env", "ghost"], "environment_not_found"),
    ]
    for args, code in cases:
        args = [*args, "--env", "demo"] if "--env" not in args else args
        result = cli(*args)
        assert result.exit_code == 1, (args, result.output)
        assert result.stderr.startswith(f"error: {code}: "), (args, result.stderr)
        assert result.stdout == ""


def test_invalid_json_on_disk_is_reported(project: Path) -> None:
    (project / "data" / "broken.json").write_text("{nope")
    result = cli("data", "show", "broken", "--env", "demo")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: invalid_json: ")


def test_missing_name_is_usage_error() -> None:
    result = cli("data", "show", "--env", "demo")
    assert result.exit_code == 2
    assert "Missing argument 'NAME'" in result.stderr
