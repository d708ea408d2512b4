"""Loading environment directories: private module names, manifest rules, contract, tasks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.project import load_environment
from silo_async.project._scaffold import create_environment

TOOL = """\
import silo_async as silo


@silo.tool(name="lookup", description="d", input_schema={"type": "object"})
def accounts(state, input):
    return "VALUE"
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


def env_with_accounts(cwd: Path, name: str, value: str) -> Path:
    env_dir = create_environment(cwd, name)
    write(env_dir / "tools" / "accounts.py", TOOL.replace("VALUE", value))
    write(
        env_dir / "tools" / "__init__.py", "from .accounts import accounts\n\ntools = [accounts]\n"
    )
    return env_dir


def call_first_tool(env: silo.Environment) -> Any:
    bound = env.bind_tools(env.create_state())
    return bound[0].tool.fn(None, {})


def code_of(fn: Any, *args: Any) -> str:
    with pytest.raises(silo.SiloError) as info:
        fn(*args)
    return info.value.code


def error_of(fn: Any, *args: Any) -> silo.SiloError:
    with pytest.raises(silo.SiloError) as info:
        fn(*args)
    return info.value


def test_hyphenated_blank_environment_loads(tmp_path: Path) -> None:
    create_environment(tmp_path, "support-desk")
    env = load_environment("support-desk", tmp_path)
    assert isinstance(env, silo.Environment)
    assert env.name == "support-desk"
    assert env.tasks == () and env.verifiers == ()
    assert env.create_state() == {}
    assert env.bind_tools(env.create_state()) == []


def test_name_is_matched_ignoring_case(tmp_path: Path) -> None:
    create_environment(tmp_path, "support-desk")
    assert load_environment("Support-DESK", tmp_path).name == "support-desk"


def test_two_environments_with_same_inner_modules_do_not_clash(tmp_path: Path) -> None:
    env_dir_a = env_with_accounts(tmp_path, "env-a", "from a")
    env_with_accounts(tmp_path, "env-b", "from b")
    a = load_environment("env-a", tmp_path)
    b = load_environment("env-b", tmp_path)
    assert call_first_tool(a) == "from a"
    assert call_first_tool(b) == "from b"
    # Loading again re-imports afresh; objects from earlier loads keep working.
    write(env_dir_a / "tools" / "accounts.py", TOOL.replace("VALUE", "edited a"))
    assert call_first_tool(load_environment("env-a", tmp_path)) == "edited a"
    assert call_first_tool(a) == "from a"
    assert not any(p.name == "__pycache__" for p in tmp_path.rglob("*"))


def test_edit_is_picked_up_by_a_new_process(tmp_path: Path) -> None:
    env_dir = env_with_accounts(tmp_path, "edit-me", "v1")
    script = (
        "import sys\n"
        "from silo_async.project import load_environment\n"
        "env = load_environment('edit-me', sys.argv[1])\n"
        "print(env.bind_tools(env.create_state())[0].tool.fn(None, {}))\n"
    )

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path)],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    assert run() == "v1"
    tool_file = env_dir / "tools" / "accounts.py"
    stat = tool_file.stat()
    # Same size and same mtime: a bytecode cache keyed on them would hide this edit.
    tool_file.write_text(TOOL.replace("VALUE", "v2"), encoding="utf-8")
    os.utime(tool_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert run() == "v2"


def test_missing_environment_lists_available(tmp_path: Path) -> None:
    err = error_of(load_environment, "nope", tmp_path)
    assert err.code == "environment_not_found"
    assert err.message == 'Environment "nope" was not found. Run "silo-async init" to create one.'
    create_environment(tmp_path, "Beta")
    create_environment(tmp_path, "alpha")
    err = error_of(load_environment, "nope", tmp_path)
    assert err.message == (
        'Environment "nope" was not found in .silo/environments. Available: alpha, beta.'
    )
    assert err.details["available"] == ["alpha", "beta"]


def test_unsafe_environment_name_never_touches_the_disk(tmp_path: Path) -> None:
    assert code_of(load_environment, "../escape", tmp_path) == "unsafe_name"


def test_manifest_missing_or_not_an_object_uses_defaults(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "plain")
    (env_dir / "silo.environment.json").unlink()
    assert load_environment("plain", tmp_path).name == "plain"
    (env_dir / "silo.environment.json").write_text("[1, 2]")
    assert load_environment("plain", tmp_path).name == "plain"


def test_manifest_written_by_init(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "made", tools=["crm-pack"])
    text = (env_dir / "silo.environment.json").read_text()
    assert (
        text
        == json.dumps(
            {
                "name": "made",
                "template": "blank",
                "templateVersion": silo.__version__,
                "entrypoint": "__init__.py",
                "tools": ["crm-pack"],
            },
            indent=2,
        )
        + "\n"
    )


def test_manifest_invalid_json(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "broken")
    (env_dir / "silo.environment.json").write_text("{nope")
    err = error_of(load_environment, "broken", tmp_path)
    assert err.code == "invalid_json"
    assert str(env_dir / "silo.environment.json") in err.message


@pytest.mark.parametrize("entrypoint", ["../outside.py", "/etc/passwd", "tools/../../x.py"])
def test_entrypoint_outside_environment(tmp_path: Path, entrypoint: str) -> None:
    env_dir = create_environment(tmp_path, "esc")
    (env_dir / "silo.environment.json").write_text(json.dumps({"entrypoint": entrypoint}))
    err = error_of(load_environment, "esc", tmp_path)
    assert err.code == "entrypoint_outside_environment"
    assert err.message == (
        f'Environment "esc" declares entrypoint "{entrypoint}", which resolves outside the '
        "environment directory."
    )


def test_entrypoint_symlink_outside_environment(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "link")
    outside = tmp_path / "outside.py"
    outside.write_text("")
    (env_dir / "entry.py").symlink_to(outside)
    (env_dir / "silo.environment.json").write_text(json.dumps({"entrypoint": "entry.py"}))
    assert code_of(load_environment, "link", tmp_path) == "entrypoint_outside_environment"


def test_custom_entrypoint_inside_environment(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "custom")
    write(
        env_dir / "main.py",
        """\
        from . import create_state, bind_tools
        verifiers = []
        """,
    )
    (env_dir / "silo.environment.json").write_text(json.dumps({"entrypoint": "./main.py"}))
    assert load_environment("custom", tmp_path).create_state() == {}
    (env_dir / "silo.environment.json").write_text(json.dumps({"entrypoint": "missing.py"}))
    err = error_of(load_environment, "custom", tmp_path)
    assert err.code == "runtime_contract_invalid"
    assert '"missing.py"' in err.message


def test_contract_names_everything_missing(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "empty")
    (env_dir / "__init__.py").write_text("verifiers = 'not a list'\n")
    err = error_of(load_environment, "empty", tmp_path)
    assert err.code == "runtime_contract_invalid"
    assert err.message == (
        'Environment "empty" does not export create_state(), bind_tools(), a verifiers list. '
        "A runnable environment must export create_state, bind_tools and verifiers."
    )
    assert err.details["missing"] == ["create_state()", "bind_tools()", "a verifiers list"]


def test_verifier_entries_must_be_verifiers(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "odd")
    (env_dir / "verifiers" / "__init__.py").write_text("verifiers = ['VER-001']\n")
    err = error_of(load_environment, "odd", tmp_path)
    assert err.code == "runtime_contract_invalid"
    assert "verifiers[0]" in err.message


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    env_dir = env_with_accounts(tmp_path, "syntax", "x")
    (env_dir / "tools" / "accounts.py").write_text("import silo_async\n\ndef broken(:\n")
    err = error_of(load_environment, "syntax", tmp_path)
    assert err.code == "runtime_contract_invalid"
    assert err.message.startswith(
        'Environment "syntax" could not be imported: tools/accounts.py:3: SyntaxError:'
    )
    assert err.details["file"] == "tools/accounts.py"


def test_exception_at_import_names_file_and_hides_private_module_name(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "boom")
    (env_dir / "environment.py").write_text("x = 1\nraise RuntimeError('boom at import')\n")
    err = error_of(load_environment, "boom", tmp_path)
    assert err.message == (
        'Environment "boom" could not be imported: environment.py:2: RuntimeError: boom at import'
    )
    (env_dir / "environment.py").write_text("from .nothing_here import create_state\n")
    err = error_of(load_environment, "boom", tmp_path)
    assert "environment.py:1: ModuleNotFoundError" in err.message
    assert "_silo_env_" not in err.message
    assert "boom.nothing_here" in err.message


def test_bad_tool_schema_is_reported_at_load(tmp_path: Path) -> None:
    env_dir = env_with_accounts(tmp_path, "schema", "x")
    bad = TOOL.replace('{"type": "object"}', '{"type": "objekt"}')
    (env_dir / "tools" / "accounts.py").write_text(bad)
    err = error_of(load_environment, "schema", tmp_path)
    assert err.code == "runtime_contract_invalid"
    assert "tools/accounts.py:4" in err.message
    assert 'Tool "lookup" has an invalid input schema' in err.message
    assert isinstance(err.__cause__, silo.DefinitionError)


def task_doc(task_id: str, **extra: Any) -> dict[str, Any]:
    doc = {"id": task_id, "title": "T", "instruction": "Do it.", "verifierId": "VER-1"}
    doc.update(extra)
    return doc


def test_tasks_discovered_sorted_by_id_extra_keys_dropped(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "tasks")
    tasks = env_dir / "tasks"
    (tasks / "b.json").write_text(json.dumps(task_doc("TASK-002", entities=["X"])))
    (tasks / "a.json").write_text(json.dumps(task_doc("TASK-010", difficulty=" hard ")))
    (tasks / "c.json").write_text(json.dumps(task_doc("TASK-001")))
    (tasks / "notes.txt").write_text("ignored")
    env = load_environment("tasks", tmp_path)
    assert [t.id for t in env.tasks] == ["TASK-001", "TASK-002", "TASK-010"]
    assert env.task("TASK-010").difficulty == "hard"
    assert env.task("TASK-001").difficulty == "unspecified"


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        ("{nope", "invalid_json", "is not valid JSON"),
        (
            "[1]",
            "task_invalid",
            'Task file "tasks/x.json" in environment "t" is not a JSON object.',
        ),
        (
            json.dumps({"id": "T-1", "title": "x", "instruction": " ", "verifierId": "V"}),
            "task_invalid",
            'Task file "tasks/x.json" in environment "t" is missing a non-empty "instruction".',
        ),
    ],
)
def test_task_file_errors(tmp_path: Path, content: str, code: str, message: str) -> None:
    env_dir = create_environment(tmp_path, "t")
    (env_dir / "tasks" / "x.json").write_text(content)
    err = error_of(load_environment, "t", tmp_path)
    assert err.code == code
    assert message in err.message


def test_missing_field_details_name_file_and_field(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "t")
    (env_dir / "tasks" / "x.json").write_text(json.dumps({"id": "T-1", "title": "x"}))
    err = error_of(load_environment, "t", tmp_path)
    problems = err.details.pop("problems")
    assert err.details == {
        "environment": "t",
        "file": "tasks/x.json",
        "field": "instruction",
        "id": "T-1",
        "verifierId": None,
    }
    assert [p["field"] for p in problems] == ["instruction", "verifierId"]


def test_duplicate_task_ids_name_both_files(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "dup")
    (env_dir / "tasks" / "one.json").write_text(json.dumps(task_doc("TASK-1")))
    (env_dir / "tasks" / "two.json").write_text(json.dumps(task_doc("TASK-1")))
    err = error_of(load_environment, "dup", tmp_path)
    assert err.code == "task_invalid"
    assert err.message == (
        'Task id "TASK-1" is declared twice in environment "dup": tasks/one.json and '
        "tasks/two.json."
    )
    assert err.details["files"] == ["tasks/one.json", "tasks/two.json"]
