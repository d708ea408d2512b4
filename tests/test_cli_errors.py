"""Every SiloError code is reachable from the CLI and printed as ``error: <code>: <message>``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

import silo_async as silo

from .cli_support import cli


def nothing(env: Path) -> None:
    return None


def write_manifest_entrypoint(env: Path) -> None:
    manifest = json.loads((env / "silo.environment.json").read_text())
    manifest["entrypoint"] = "../outside.py"
    (env / "silo.environment.json").write_text(json.dumps(manifest))


def drop_bind_tools(env: Path) -> None:
    init = env / "__init__.py"
    init.write_text(init.read_text().replace("def bind_tools", "def _not_bind_tools"))


def add_dataset(env: Path) -> None:
    (env / "data" / "x.json").write_text("1")


def add_task(env: Path) -> None:
    task = {"id": "T1", "title": "t", "instruction": "i", "verifierId": "V1"}
    (env / "tasks" / "T1.json").write_text(json.dumps(task))


def add_tool_file(env: Path) -> None:
    (env / "tools" / "t1.py").write_text("")


def add_verifier_file(env: Path) -> None:
    (env / "verifiers" / "v1.py").write_text("")


def drop_tool_registry(env: Path) -> None:
    (env / "tools" / "__init__.py").unlink()


def bind_name_in_registry(env: Path) -> None:
    registry = env / "tools" / "__init__.py"
    registry.write_text(registry.read_text() + "\nt1 = None\n")


def drop_state_type(env: Path) -> None:
    (env / "state.py").write_text("# no State here\n")


CASES: dict[str, tuple[Callable[[Path], None], list[str]]] = {
    "environment_not_found": (nothing, ["task", "list", "--env", "ghost"]),
    "environment_already_exists": (nothing, ["init", "DEMO"]),
    "template_not_found": (nothing, ["init", "other", "--template", "nope"]),
    "entrypoint_outside_environment": (
        write_manifest_entrypoint,
        ["tool", "list", "--env", "demo"],
    ),
    "runtime_contract_invalid": (drop_bind_tools, ["verifier", "list", "--env", "demo"]),
    "data_not_found": (nothing, ["data", "show", "x", "--env", "demo"]),
    "data_already_exists": (add_dataset, ["data", "add", "x", "--env", "demo", "--data", "2"]),
    "invalid_json": (nothing, ["data", "add", "x", "--env", "demo", "--data", "{"]),
    "task_not_found": (nothing, ["task", "show", "T1", "--env", "demo"]),
    "task_already_exists": (
        add_task,
        ["task", "add", "T1", "--env", "demo", "--title=t", "--instruction=i", "--verifier=V1"],
    ),
    "task_invalid": (nothing, ["task", "add", "T1", "--env", "demo", "--title", "t"]),
    "tool_already_exists": (add_tool_file, ["tool", "add", "t1", "--env", "demo"]),
    "verifier_already_exists": (
        add_verifier_file,
        ["verifier", "add", "v1", "--env", "demo", "--task", "T1"],
    ),
    "registry_not_found": (drop_tool_registry, ["tool", "add", "t1", "--env", "demo"]),
    "already_registered": (bind_name_in_registry, ["tool", "add", "t1", "--env", "demo"]),
    "state_type_not_found": (drop_state_type, ["tool", "add", "t1", "--env", "demo"]),
    "unsafe_name": (nothing, ["data", "show", "../x", "--env", "demo"]),
}


def test_cases_cover_every_code() -> None:
    assert set(CASES) == set(silo.ERROR_CODES)


@pytest.mark.parametrize("code", sorted(CASES))
@pytest.mark.parametrize("as_json", [False, True])
def test_code_is_printed_on_stderr_with_exit_1(
    code: str, as_json: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("init", "demo").exit_code == 0
    setup, args = CASES[code]
    setup(tmp_path / ".silo" / "environments" / "demo")
    result = cli(*args, *(["--json"] if as_json else []))
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {code}: "), result.stderr
    assert result.stderr.count("\n") == 1
