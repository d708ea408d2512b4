"""``silo-async init``: non-interactive, --json, --list-templates and the interactive prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from silo_async.cli import _init
from silo_async.cli._app import app
from silo_async.templates import list_templates


def cli(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=input)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_init, "_stdin_is_terminal", lambda: True)


def env_dir(tmp_path: Path, name: str) -> Path:
    return tmp_path / ".silo" / "environments" / name


def test_init_blank_text(tmp_path: Path) -> None:
    result = cli("init", "demo", "--template", "blank")
    assert result.exit_code == 0, result.output
    directory = env_dir(tmp_path, "demo")
    assert result.stdout == f'Created environment "demo" from Blank at {directory}\n'
    manifest = json.loads((directory / "silo.environment.json").read_text())
    assert manifest["name"] == "demo"
    assert manifest["template"] == "blank"


def test_init_defaults_to_blank_and_json(tmp_path: Path) -> None:
    result = cli("init", "demo", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "ok": True,
        "name": "demo",
        "template": "blank",
        "directory": str(env_dir(tmp_path, "demo")),
    }


def test_init_flag_equals_value_form(tmp_path: Path) -> None:
    assert cli("init", "demo", "--template=blank").exit_code == 0
    assert env_dir(tmp_path, "demo").is_dir()


def test_init_collision_is_case_insensitive() -> None:
    assert cli("init", "support").exit_code == 0
    result = cli("init", "Support", "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: environment_already_exists: ")
    assert "Support" in result.stderr


def test_init_unknown_template() -> None:
    result = cli("init", "demo", "--template", "nope")
    assert result.exit_code == 1
    assert result.stderr.startswith('error: template_not_found: Unknown template "nope".')


def test_init_unsafe_name(tmp_path: Path) -> None:
    result = cli("init", "../escape")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: unsafe_name: ")
    assert not (tmp_path / ".silo" / "escape").exists()


def test_list_templates_text_and_json() -> None:
    templates = list_templates()
    result = cli("init", "--list-templates")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == [t.id for t in templates]
    assert lines[0].startswith("blank\tBlank\t")
    data = json.loads(cli("init", "--list-templates", "--json").stdout)
    assert data[0] == {"id": "blank", "label": "Blank", "description": templates[0].description}


def test_no_name_without_terminal_is_usage_error() -> None:
    result = cli("init")
    assert result.exit_code == 2
    assert "Missing environment NAME" in result.stderr


def test_no_name_with_json_never_prompts(terminal: None) -> None:
    assert cli("init", "--json").exit_code == 2


def test_interactive_prompt_creates(tmp_path: Path, terminal: None) -> None:
    result = cli("init", input="demo\nblank\n")
    assert result.exit_code == 0, result.output
    assert "Environment name" in result.stdout
    assert "Templates:" in result.stdout
    assert f'Created environment "demo" from Blank at {env_dir(tmp_path, "demo")}' in result.stdout


def test_interactive_validates_and_suggests_free_name(tmp_path: Path, terminal: None) -> None:
    assert cli("init", "support").exit_code == 0
    # A bad name, then a taken one (any case), then Enter accepts the suggestion.
    result = cli("init", input="bad name!\nSUPPORT\n\n\n")
    assert result.exit_code == 0, result.output
    assert 'Invalid environment name "bad name!"' in result.stdout
    assert 'Environment "SUPPORT" already exists. Press Enter for "SUPPORT-2"' in result.stdout
    assert env_dir(tmp_path, "SUPPORT-2").is_dir()


def test_interactive_suggestion_skips_taken_numbers(tmp_path: Path, terminal: None) -> None:
    for name in ("support", "support-2"):
        assert cli("init", name).exit_code == 0
    result = cli("init", input="support-2\n\nblank\n")
    assert result.exit_code == 0, result.output
    assert 'Press Enter for "support-3"' in result.stdout
    assert env_dir(tmp_path, "support-3").is_dir()


def test_interactive_template_choice_is_validated(tmp_path: Path, terminal: None) -> None:
    result = cli("init", input="demo\nnope\nblank\n")
    assert result.exit_code == 0, result.output
    assert "nope" in result.stdout  # click re-asks after an invalid choice
    assert env_dir(tmp_path, "demo").is_dir()


def test_interactive_with_template_flag_skips_template_prompt(terminal: None) -> None:
    result = cli("init", "--template", "blank", input="demo\n")
    assert result.exit_code == 0, result.output
    assert "Templates:" not in result.stdout
