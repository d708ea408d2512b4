"""What a new user trips over: subdirectories, broken JSON files, damaged runs, wording."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from silo_async.cli._app import app
from silo_async.cli._examples import EXAMPLES
from tests.test_cli_run import GOOD, TOOL, VERIFIER, write

from .cli_support import cli

ENV = Path(".silo") / "environments" / "shop"


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A runnable one-task project in tmp_path, with ./silo_agent.py passing the task."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # agent loading extends sys.path
    steps = [
        ["init", "shop"],
        ["data", "add", "customers", "--env", "shop", "--data", '{"CUS-001": {"status": "ok"}}'],
        ["tool", "add", "block_customer", "--env", "shop"],
        ["verifier", "add", "VER-001", "--env", "shop", "--task", "TASK-001"],
        ["task", "add", "TASK-001", "--env=shop", "--title=T", "--instruction=I", "--verifier"],
    ]
    steps[-1].append("VER-001")
    for step in steps:
        assert cli(*step).exit_code == 0, step
    write(tmp_path / ENV / "tools" / "block_customer.py", TOOL)
    write(tmp_path / ENV / "verifiers" / "ver_001.py", VERIFIER)
    write(tmp_path / "silo_agent.py", GOOD)
    return tmp_path


def run_once() -> str:
    """Run TASK-001 with the default agent; return the run id."""
    result = cli("run", "--env", "shop", "--task", "TASK-001", "--json")
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["runId"])


# --- from a subdirectory of the project ----------------------------------------------------


def test_commands_work_on_the_current_directory_and_point_at_the_project_above(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in Silo, the project is the current directory; a subdirectory gets directions."""
    sub = project / "src" / "deeper"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    hint = f"The nearest project is {project}: run silo-async from there (cd ../..)."
    listed = cli("env", "list")
    assert (listed.stdout, listed.stderr) == (
        "No environments. Create one with `silo-async init <name>`.\n",
        hint + "\n",
    )
    ran = cli("run", "--env", "shop", "--task", "TASK-001")
    assert ran.exit_code == 1
    assert ran.stderr == (
        f'error: environment_not_found: Environment "shop" was not found: there is no .silo/ '
        f"in {sub}. {hint}\n"
    )
    assert not (sub / ".silo").exists()
    created = cli("init", "other")  # a separate project, here, as Silo does: said out loud
    assert created.exit_code == 0
    assert (sub / ".silo" / "environments" / "other").is_dir()
    assert created.stderr == f"note: started a separate project here; {project} holds another.\n"


def test_an_explicit_agent_path_is_relative_to_the_current_directory() -> None:
    Path("agents").mkdir()
    write(Path("agents") / "idle.py", "async def agent(ctx):\n    return ''\n")
    result = cli("run", "--env", "shop", "--task", "TASK-001", "--agent", "agents/idle.py")
    assert result.exit_code == 1 and "Result      FAIL" in result.stdout
    missing = cli("run", "--env", "shop", "--task", "TASK-001", "--agent", "idle.py")
    assert missing.stderr.startswith('error: agent_not_found: Agent file "idle.py" was not found')


# --- a broken data file -------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--env", "shop", "--task", "TASK-001"],
        ["run", "--env", "shop", "--task", "TASK-001", "--runs", "2", "--json"],
        ["tool", "list", "--env", "shop"],
        ["eval", "--env", "shop", "--json"],
    ],
)
def test_a_truncated_data_file_is_invalid_json_naming_the_file(
    project: Path, command: list[str]
) -> None:
    (project / ENV / "data" / "customers.json").write_text('{"CUS-001": {"sta', encoding="utf-8")
    result = cli(*command)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(
        'error: invalid_json: Dataset file "data/customers.json" in environment "shop" is not '
        "valid JSON: "
    )
    assert "unexpected" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_verifier_list_does_not_need_valid_data(project: Path) -> None:
    (project / ENV / "data" / "customers.json").write_text("{", encoding="utf-8")
    result = cli("verifier", "list", "--env", "shop")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("VER-001\tTASK-001\t")


# --- damaged run directories --------------------------------------------------------------


@pytest.mark.parametrize("command", ["show", "replay"])
def test_a_damaged_result_file_is_named(project: Path, command: str) -> None:
    run_id = run_once()
    (project / ".silo" / "runs" / run_id / "result.json").write_text('{"pa', encoding="utf-8")
    args = ["runs", "show", run_id] if command == "show" else ["replay", run_id]
    result = cli(*args)
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f'error: run_invalid: Run "{run_id}" in .silo/runs/{run_id} cannot be read'
    )
    assert "result.json is not valid JSON" in result.stderr
    assert "unexpected" not in result.stderr


def test_a_result_file_missing_a_key_is_reported(project: Path) -> None:
    run_id = run_once()
    (project / ".silo" / "runs" / run_id / "result.json").write_text("{}", encoding="utf-8")
    result = cli("runs", "show", run_id, "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "cannot be read" in result.stderr
    assert "(no 'passed')" in result.stderr


# --- runs list ----------------------------------------------------------------------------


def test_runs_list_with_an_unknown_eval_is_an_error() -> None:
    result = cli("runs", "list", "--eval", "nope")
    assert result.exit_code == 1
    assert result.stderr == (
        'error: eval_not_found: Eval "nope" was not found in .silo/evals nor among the evals '
        "written with --out from here (silo-async evals list).\n"
    )


def test_runs_list_says_which_environment_has_no_runs() -> None:
    run_once()
    result = cli("runs", "list", "--env", "nope")
    assert result.exit_code == 0
    assert result.stdout == 'No runs of environment "nope" recorded yet.\n'


def test_one_call_is_singular(project: Path) -> None:
    run_id = run_once()
    assert "  1 call  completed" in cli("runs", "list").stdout
    assert "Trace (1 tool call)\n" in cli("runs", "show", run_id).stdout


def test_root_help_says_commands_work_on_the_current_directory() -> None:
    text = " ".join(cli("--help").stdout.split())
    assert "Commands work on the project in the current directory: its .silo/" in text


# --- --help -------------------------------------------------------------------------------


def _leaves(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        path = f"{prefix} {name}".strip()
        if isinstance(command, click.Group):
            found.extend(_leaves(command, path))
        else:
            found.append((path, command))
    return found


@pytest.mark.parametrize(("path", "command"), _leaves(app), ids=[p for p, _ in _leaves(app)])
def test_every_help_ends_with_examples_that_parse(path: str, command: click.Command) -> None:
    result = cli(*path.split(), "--help")
    assert result.exit_code == 0
    assert "\n  Examples:\n" in result.stdout, path
    examples = EXAMPLES[path]
    Path("customers.json").write_text("{}", encoding="utf-8")  # --file must exist to parse
    for example in examples:
        words = shlex.split(example)
        assert words[: 1 + len(path.split())] == ["silo-async", *path.split()], example
        # Parsing checks every option and argument exists and every required one is given.
        command.make_context(path, words[1 + len(path.split()) :])
    shown = result.stdout.split("Examples:\n")[1].replace(" \\\n", " ")
    assert [" ".join(line.split()) for line in shown.splitlines()] == list(examples)


def test_group_listings_are_not_truncated() -> None:
    for group in ("env", "data", "task", "tool", "verifier", "runs"):
        listing = cli(group, "--help").stdout.split("Commands:\n")[1]
        assert not any(line.endswith("...") for line in listing.splitlines()), group


# --- task add -----------------------------------------------------------------------------


def test_task_add_names_every_missing_flag_at_once() -> None:
    result = cli("task", "add", "TASK-002", "--env", "shop")
    assert result.exit_code == 1
    assert result.stderr == (
        'error: task_invalid: Task "TASK-002" is missing a non-empty "title" (--title), '
        '"instruction" (--instruction) and "verifierId" (--verifier).\n'
    )
    one = cli("task", "add", "TASK-002", "--env", "shop", "--title", "t", "--verifier", "V")
    assert one.stderr == (
        'error: task_invalid: Task "TASK-002" is missing a non-empty "instruction" '
        "(--instruction).\n"
    )
    assert not (Path(ENV) / "tasks" / "TASK-002.json").exists()


# --- options before the subcommand ---------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "full", "option"),
    [
        (["task", "--env", "shop", "list"], "silo-async task list", "--env"),
        (["--json", "env", "list"], "silo-async env list", "--json"),
        (["runs", "--json", "list"], "silo-async runs list", "--json"),
        (["--env", "shop", "run", "--task", "TASK-001"], "silo-async run", "--env"),
    ],
)
def test_an_option_before_its_subcommand_says_where_it_goes(
    args: list[str], full: str, option: str
) -> None:
    result = CliRunner().invoke(app, args, prog_name="silo-async")
    assert result.exit_code == 2
    error = result.stderr.splitlines()[-1]
    assert f"it belongs to '{full}'" in error
    assert error.endswith(f"Options go after the command: {full} {option} ...")
    assert "Did you mean" not in error


def test_an_option_no_subcommand_has_keeps_clicks_message() -> None:
    result = cli("task", "--bogus", "list")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: usage_error: No such option '--bogus'. See '")
    assert result.stderr.endswith(" task --help'.\n") and result.stderr.count("\n") == 1


def test_runs_list_points_at_eval_runs_when_only_evals_ran() -> None:
    assert cli("eval", "--env", "shop", "--json").exit_code == 0
    (eval_id,) = [p.name for p in (Path(".silo") / "evals").iterdir()]
    result = cli("runs", "list", "--env", "shop")
    assert result.exit_code == 0
    assert result.stdout == (
        'No runs of environment "shop" recorded yet.\n'
        f"Evals keep their own runs; the latest: silo-async runs list --eval {eval_id} --env shop\n"
    )
    listed = cli("runs", "list", "--eval", eval_id, "--env", "shop")
    assert listed.stdout.count(" shop  TASK-001 ") == 1
    assert cli("runs", "list", "--json").stdout == "[]\n"  # JSON stays a plain list


# --- --json keeps stdout one JSON document -------------------------------------------------

CHATTY = """
print("loading the agent")


async def agent(ctx):
    print("thinking about", ctx.task)
    await ctx.call_tool("block_customer", {"customerId": "CUS-001"})
    return "done"
"""


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--env", "shop", "--task", "TASK-001", "--agent", "chatty.py", "--json"],
        ["run", "--env=shop", "--task=TASK-001", "--agent", "chatty.py", "--runs=2", "--json"],
        ["eval", "--env", "shop", "--agent", "chatty.py", "--json"],
    ],
)
def test_prints_of_an_agent_go_to_stderr_under_json(project: Path, command: list[str]) -> None:
    write(project / "chatty.py", CHATTY)
    result = cli(*command)
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # nothing but the document
    assert "loading the agent\n" in result.stderr
    assert "thinking about I\n" in result.stderr


def test_prints_of_an_agent_stay_on_stdout_without_json(project: Path) -> None:
    write(project / "chatty.py", CHATTY)
    result = cli("run", "--env", "shop", "--task", "TASK-001", "--agent", "chatty.py")
    assert result.stdout.startswith("loading the agent\nthinking about I\nTask ")


# --- not found: say what exists -----------------------------------------------------------


def test_show_and_remove_of_a_missing_task_or_dataset_list_what_exists() -> None:
    shown = cli("task", "show", "TASK-01", "--env", "shop")
    assert shown.exit_code == 1
    assert shown.stderr == (
        'error: task_not_found: Task "TASK-01" was not found in environment "shop". '
        "Available: TASK-001.\n"
    )
    removed = cli("data", "remove", "customer", "--env", "shop")
    assert removed.stderr == (
        'error: data_not_found: Dataset "customer" was not found in environment "shop". '
        "Available: customers.\n"
    )


def test_eval_of_an_environment_without_tasks_is_a_plain_error(project: Path) -> None:
    assert cli("init", "empty").exit_code == 0
    result = cli("eval", "--env", "empty")
    assert result.exit_code == 1
    assert result.stderr == (
        'error: task_not_found: Environment "empty" has no tasks to evaluate; add one with '
        '"silo-async task add".\n'
    )
    assert not (project / ".silo" / "evals").exists()


def test_a_dataset_name_with_json_suffix_means_the_dataset(project: Path) -> None:
    added = cli("data", "add", "orders.json", "--env", "shop", "--data", "[1]")
    assert added.stdout == "Created data/orders.json\n"
    assert not (project / ENV / "data" / "orders.json.json").exists()
    assert cli("data", "show", "customers.JSON", "--env", "shop").exit_code == 0
    assert cli("data", "update", "orders.json", "--env", "shop", "--data", "[2]").exit_code == 0
    removed = cli("data", "remove", "orders.json", "--env", "shop")
    assert removed.stdout == "Removed data/orders.json\n"


def test_verifier_add_for_a_task_not_yet_written_says_how_to_add_it() -> None:
    result = cli("verifier", "add", "VER-002", "--env", "shop", "--task", "TASK-002")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == (
        'Task "TASK-002" does not exist yet: silo-async task add TASK-002 --env shop '
        '--title "..." --instruction "..." --verifier VER-002'
    )


def test_verifier_add_for_the_task_it_is_named_by_adds_no_hint(project: Path) -> None:
    # Start over from an empty registry: TASK-001 already names VER-001.
    (project / ENV / "verifiers" / "ver_001.py").unlink()
    (project / ENV / "verifiers" / "__init__.py").write_text("verifiers = []\n", encoding="utf-8")
    result = cli("verifier", "add", "VER-001", "--env", "shop", "--task", "TASK-001")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].startswith("Next: ")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["run", "--env", "shop", "--task", "TASK-001", "--backend", "trio"],
            "error: usage_error: No such option '--backend' for 'silo-async run': it is an "
            "option of 'silo-async' itself. Put it before the command: "
            "silo-async --backend asyncio|trio run ...",
        ),
        (
            ["env", "list", "--traceback"],
            "error: usage_error: No such option '--traceback' for 'silo-async env list': it is "
            "an option of 'silo-async' itself. Put it before the command: "
            "silo-async --traceback env list ...",
        ),
    ],
)
def test_a_root_option_after_the_command_says_it_goes_before(
    args: list[str], expected: str
) -> None:
    result = CliRunner().invoke(app, args, prog_name="silo-async")
    assert result.exit_code == 2
    assert result.stderr == expected + "\n"  # one line, no usage block


def test_data_from_a_file_with_a_bom_is_accepted_and_written_without_it(project: Path) -> None:
    (project / "bom.json").write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert cli("data", "add", "bom", "--env", "shop", "--file", "bom.json").exit_code == 0
    assert (project / ENV / "data" / "bom.json").read_bytes() == b'{\n  "a": 1\n}\n'


def test_data_from_a_file_that_is_not_utf8_is_invalid_json(project: Path) -> None:
    (project / "latin.json").write_bytes(b'{"a": "\xe9"}')
    result = cli("data", "add", "latin", "--env", "shop", "--file", "latin.json")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        'error: invalid_json: Content of --file "latin.json" is not UTF-8 text: '
    )


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--env", "shop", "--task", "TASK-001", "--agent", " "],
        ["eval", "--env", "shop", "--agent", "silo_agent.py", "--agent", ""],
    ],
)
def test_an_empty_agent_is_a_usage_error(args: list[str]) -> None:
    result = cli(*args)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: usage_error: Invalid value for '--agent': the value is empty; pass PATH.py, "
        "PATH.py:name or package.module:name. See '"
    )
    assert result.stderr.count("\n") == 1


def test_outside_any_project_the_error_names_the_directory(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    monkeypatch.chdir(elsewhere)
    result = cli("task", "list", "--env", "shop")
    assert result.exit_code == 1
    assert result.stderr == (
        f'error: environment_not_found: Environment "shop" was not found: there is no .silo/ in '
        f"{elsewhere}. Run this from your project, or create the environment here with "
        '"silo-async init shop".\n'
    )
    assert cli("task", "list", "--env", "../x").stderr.startswith("error: unsafe_name: ")


def test_runs_show_and_replay_accept_a_unique_end_or_start_of_the_id() -> None:
    run_id = run_once()
    assert run_id in cli("runs", "show", run_id[-10:]).stdout
    assert cli("replay", run_id[-6:]).exit_code == 0
    other = run_once()
    common = "run_2"
    assert run_id.startswith(common) and other.startswith(common)
    ambiguous = cli("runs", "show", common)
    assert ambiguous.exit_code == 1
    assert ambiguous.stderr == (
        f'error: run_ambiguous: Run "{common}" is ambiguous: 2 runs match ({run_id}, {other}).\n'
    )
    too_short = cli("runs", "show", run_id[-3:])
    assert too_short.stderr.startswith(
        f'error: run_not_found: Run "{run_id[-3:]}" was not found in '
    )


def test_runs_list_aligns_its_columns(project: Path) -> None:
    run_once()
    write(project / "a_much_longer_agent_name.py", "async def agent(ctx):\n    return ''\n")
    agent = ["--agent", "a_much_longer_agent_name.py"]
    assert cli("run", "--env", "shop", "--task", "TASK-001", *agent).exit_code == 1
    lines = cli("runs", "list").stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].index(" PASS ") == lines[1].index(" FAIL ")
    assert lines[0].index("completed") == lines[1].index("completed")


def test_an_unconventional_difficulty_is_kept_with_a_warning(project: Path) -> None:
    result = cli("task", "update", "TASK-001", "--env", "shop", "--difficulty", "meduim")
    assert result.exit_code == 0
    assert result.stdout == "Updated tasks/TASK-001.json\n"
    assert result.stderr == (
        'warning: difficulty "meduim" is not one of easy, medium, hard (kept as given).\n'
    )
    saved = json.loads((project / ENV / "tasks" / "TASK-001.json").read_text(encoding="utf-8"))
    assert saved["difficulty"] == "meduim"
    assert cli("task", "update", "TASK-001", "--env", "shop", "--difficulty", "hard").stderr == ""


def test_verifier_add_for_a_task_graded_by_another_says_how_to_switch() -> None:
    result = cli("verifier", "add", "VER-NEW", "--env", "shop", "--task", "TASK-001")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == (
        'Task "TASK-001" is graded by "VER-001"; to grade it with this one: '
        "silo-async task update TASK-001 --env shop --verifier VER-NEW"
    )
