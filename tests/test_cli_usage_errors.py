"""Usage errors are one line too: ``error: usage_error: <what> See '<command> --help'.``, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from silo_async.cli._app import app
from silo_async.cli._types import Number, WholeNumber


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["reprot"], "No such command 'reprot'. Did you mean 'report'? See 'silo-async --help'."),
        (["rnu"], "No such command 'rnu'. Did you mean 'run'? See 'silo-async --help'."),
        (
            ["run", "--env", "e", "--task", "T", "--agnet", "x.py"],
            "No such option '--agnet'. Did you mean '--agent'? See 'silo-async run --help'.",
        ),
        (["task", "list"], "Missing option '--env'. See 'silo-async task list --help'."),
        (
            ["--backend", "curio", "env", "list"],
            "Invalid value for '--backend': 'curio' is not one of 'asyncio', 'trio'. "
            "See 'silo-async --help'.",
        ),
        (
            ["data", "add", "x", "--env", "e", "--file", "missing.json"],
            "Invalid value for '--file': File 'missing.json' does not exist. "
            "See 'silo-async data add --help'.",
        ),
        (
            ["run", "--env", "e", "--task", "T", "--model", "openai/m", "--agent", "a.py"],
            "use --agent or --model, not both. See 'silo-async run --help'.",
        ),
    ],
)
def test_a_usage_error_is_one_coded_line_naming_the_help(args: list[str], line: str) -> None:
    result = CliRunner().invoke(app, args, prog_name="silo-async")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == f"error: usage_error: {line}\n"


def test_a_group_without_its_subcommand_still_shows_its_help() -> None:
    result = CliRunner().invoke(app, ["env"], prog_name="silo-async")
    assert result.exit_code == 2
    assert "Commands:" in result.output and "validate" in result.output


def test_the_installed_command_prints_the_same_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "silo_async", "run", "--evn", "demo"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: usage_error: No such option '--evn'.")
    assert done.stderr.count("\n") == 1


def _commands(group: click.Group, path: str = "silo-async") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        found.append((f"{path} {name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{path} {name}")
    return found


def test_every_number_option_says_in_words_what_it_wanted() -> None:
    plain = [
        f"{path} {param.opts[0]}"
        for path, command in _commands(app)
        for param in command.params
        if isinstance(param.type, click.IntRange | click.FloatRange)
        and not isinstance(param.type, WholeNumber | Number)
    ]
    assert plain == [], "use cli._types.WholeNumber / Number for these options"


def test_serve_numbers_are_whole_numbers() -> None:
    result = CliRunner().invoke(
        app, ["serve", "--env", "e", "--task", "T", "--port", "abc"], prog_name="silo-async"
    )
    assert result.exit_code == 2
    assert "'abc' is not a whole number (for example 5)." in result.stderr
