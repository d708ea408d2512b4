"""The root command: help, version, typos, --backend, error formats and exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

import silo_async as silo
from silo_async.agents._load import AgentLoadError
from silo_async.cli._app import app
from silo_async.cli._errors import CliError, error_line

from .cli_support import cli

COMMANDS = ["init", "env", "data", "task", "tool", "verifier", "run"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_help_lists_every_command_with_one_line_in_workflow_order() -> None:
    result = cli("--help")
    assert result.exit_code == 0
    lines = result.stdout.split("Commands:")[1].strip().split("\n\n")[0].splitlines()
    listed = [line.split()[0] for line in lines]
    assert listed[: len(COMMANDS)] == COMMANDS  # later issues append their commands
    for line in lines:
        assert len(line.split(maxsplit=1)) == 2, f"no help text: {line!r}"
    assert "--backend [asyncio|trio]" in result.stdout
    assert "--version" in result.stdout
    assert "--traceback" in result.stdout
    assert "silo-async run --env demo --task TASK-001" in result.stdout  # examples
    assert not any(line.endswith("...") for line in lines)  # one-liners are not truncated


def test_no_command_prints_help_and_exits_0() -> None:
    result = cli()
    assert result.exit_code == 0
    assert "Commands:" in result.stdout


@pytest.mark.parametrize(
    ("group", "order"),
    [
        ("env", ["list", "validate"]),
        ("data", ["list", "show", "add", "update", "remove"]),
        ("task", ["list", "show", "sample", "add", "update", "remove"]),
        ("tool", ["list", "add"]),
        ("verifier", ["list", "add"]),
    ],
)
def test_every_subcommand_has_help(group: str, order: list[str]) -> None:
    result = cli(group, "--help")
    assert result.exit_code == 0
    lines = result.stdout.split("Commands:")[1].strip().splitlines()
    assert [line.split()[0] for line in lines] == order
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


def test_version() -> None:
    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"silo-async, version {silo.__version__}"


def test_typo_gets_a_suggestion_and_exit_2() -> None:
    result = cli("rnu")
    assert result.exit_code == 2
    assert "No such command 'rnu'. Did you mean 'run'?" in result.stderr
    result = cli("data", "lsit", "--env", "x")
    assert result.exit_code == 2
    assert "Did you mean 'list'?" in result.stderr


def test_unknown_backend_is_a_usage_error() -> None:
    result = cli("--backend", "curio", "env", "list")
    assert result.exit_code == 2
    assert "Invalid value for '--backend'" in result.stderr


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_backend_runs_commands(backend: str) -> None:
    result = cli("--backend", backend, "env", "list")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("No environments.")


def test_silo_error_is_one_line_on_stderr_exit_1() -> None:
    result = cli("task", "list", "--env", "missing", "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: environment_not_found: ")
    assert result.stderr.count("\n") == 1


def test_missing_required_option_is_usage_error_exit_2() -> None:
    result = cli("task", "list")
    assert result.exit_code == 2
    assert "Missing option '--env'" in result.stderr


def test_error_line_formats() -> None:
    assert error_line(silo.SiloError("task_not_found", "No.")) == "error: task_not_found: No."
    assert error_line(AgentLoadError("Not async.")) == "error: agent_invalid: Not async."
    missing = AgentLoadError("No file.", "agent_not_found")
    assert error_line(missing) == "error: agent_not_found: No file."
    assert error_line(CliError("run_not_found", "No run.")) == "error: run_not_found: No run."
    group = ExceptionGroup("wrapped", [silo.SiloError("unsafe_name", "Bad.")])
    assert error_line(group) == "error: unsafe_name: Bad."
    assert error_line(RuntimeError("bug")) is None


def test_unexpected_exceptions_are_one_line_naming_where(tmp_path: Path) -> None:
    @app.command("explode-for-test", hidden=True)
    def explode() -> None:
        raise RuntimeError("a bug")

    try:
        result = cli("explode-for-test")
        verbose = cli("--traceback", "explode-for-test")
    finally:
        app.commands.pop("explode-for-test")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: internal_error: unexpected RuntimeError: a bug (")
    assert f"{Path(__file__).name}:" in result.stderr
    assert "in explode; rerun with --traceback for details)" in result.stderr
    assert result.stderr.count("\n") == 1
    # --traceback lets it propagate untouched (click prints the traceback).
    assert isinstance(verbose.exception, RuntimeError)


def test_environment_code_failure_is_reported_with_its_location(tmp_path: Path) -> None:
    assert cli("init", "demo").exit_code == 0
    env = tmp_path / ".silo" / "environments" / "demo"
    with (env / "environment.py").open("a") as f:
        f.write("\n\ndef create_state():\n    raise ValueError('broken world')\n")
    result = cli("tool", "list", "--env", "demo")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: internal_error: unexpected ValueError: broken world (")
    assert ".silo/environments/demo/environment.py:" in result.stderr
    assert "in create_state;" in result.stderr


def test_click_exceptions_pass_through() -> None:
    @app.command("abort-for-test", hidden=True)
    def abort() -> None:
        raise click.BadParameter("nope", param_hint="'--x'")

    try:
        result = cli("abort-for-test")
    finally:
        app.commands.pop("abort-for-test")
    assert result.exit_code == 2


def test_python_dash_m(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "silo_async", "--version"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert silo.__version__ in done.stdout


def test_a_reader_that_goes_away_ends_the_command_quietly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`silo-async task list --json | head -c 1`: no traceback, no error line, SIGPIPE's status."""
    monkeypatch.chdir(tmp_path)
    assert cli("init", "demo").exit_code == 0
    for i in range(50):
        args = ["--title", "T", "--instruction", "I", "--verifier", "VER-001"]
        assert cli("task", "add", f"TASK-{i:03d}", "--env", "demo", *args).exit_code == 0
    command = [sys.executable, "-m", "silo_async", "task", "list", "--env", "demo", "--json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # long before the interpreter has started: the first write fails
        stderr = proc.stderr.read()
        assert proc.wait(timeout=60) == 141
    assert stderr == b""
