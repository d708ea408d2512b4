"""Creating environments atomically, templates, and tool/verifier scaffolds."""

from __future__ import annotations

import ast
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.project import EnvironmentHandle, Project, _scaffold
from silo_async.templates import list_templates, template_dir

pytestmark = pytest.mark.anyio


async def error_of(awaitable: Any) -> silo.SiloError:
    with pytest.raises(silo.SiloError) as info:
        await awaitable
    return info.value


async def blank_env(tmp_path: Path, name: str = "shop") -> EnvironmentHandle:
    project = await Project.open(tmp_path)
    return await project.environments.create(name)


def tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_templates_listed_are_real_directories() -> None:
    templates = list_templates()
    assert templates[0].id == "blank"
    assert templates[0].label == "Blank"
    assert templates[0].description
    for info in templates:
        assert (template_dir(info.id) / "__init__.py").is_file()


def test_unknown_template_lists_real_ones() -> None:
    with pytest.raises(silo.SiloError) as info:
        template_dir("nope")
    available = [t.id for t in list_templates()]
    assert info.value.code == "template_not_found"
    assert info.value.message == f'Unknown template "nope". Available: {", ".join(available)}.'
    assert info.value.details["available"] == available


async def test_create_copies_blank_template(tmp_path: Path) -> None:
    env = await blank_env(tmp_path, "support-desk")
    assert env.path == tmp_path / ".silo" / "environments" / "support-desk"
    assert tree(env.path) == [
        "__init__.py",
        "data",
        "data/.gitkeep",
        "environment.py",
        "families",
        "families/__init__.py",
        "silo.environment.json",
        "state.py",
        "tasks",
        "tasks/.gitkeep",
        "tools",
        "tools/__init__.py",
        "verifiers",
        "verifiers/__init__.py",
    ]
    project = env.project
    assert await project.environments.list() == ["support-desk"]
    assert (await project.environments.open("SUPPORT-desk")).path == env.path


async def test_every_shipped_template_can_be_created(tmp_path: Path) -> None:
    project = await Project.open(tmp_path)
    for info in list_templates():
        env = await project.environments.create(f"from-{info.id}", template=info.id)
        manifest = json.loads((env.path / "silo.environment.json").read_text())
        assert manifest["template"] == info.id
        assert (env.path / "__init__.py").is_file()
        assert not list(env.path.rglob("__pycache__"))


async def test_collision_is_case_insensitive_and_suggests_free_name(tmp_path: Path) -> None:
    env = await blank_env(tmp_path, "support")
    marker = env.path / "data" / "keep.json"
    marker.write_text("1")
    project = env.project
    err = await error_of(project.environments.create("Support"))
    assert err.code == "environment_already_exists"
    assert err.message == (
        'Environment "Support" already exists as "support" (names are compared ignoring case). '
        'Try "Support-2".'
    )
    assert err.details["existing"] == "support"
    await project.environments.create("support-2")
    err = await error_of(project.environments.create("SUPPORT"))
    assert err.details["suggestion"] == "SUPPORT-3"
    # Nothing was overwritten or merged.
    assert marker.read_text() == "1"
    assert await project.environments.list() == ["support", "support-2"]


async def test_create_checks_name_and_template_first(tmp_path: Path) -> None:
    project = await Project.open(tmp_path)
    assert (await error_of(project.environments.create("../x"))).code == "unsafe_name"
    assert (await error_of(project.environments.create("a.b"))).code == "unsafe_name"
    err = await error_of(project.environments.create("ok", template="erp-9000"))
    assert err.code == "template_not_found"
    assert not (tmp_path / ".silo").exists()


@pytest.mark.parametrize("exc_type", [OSError, KeyboardInterrupt])
async def test_half_way_failure_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc_type: type[BaseException]
) -> None:
    copied: list[str] = []
    real_copy = shutil.copyfile

    def flaky_copy(src: Any, dst: Any) -> Any:
        if len(copied) == 3:
            raise exc_type("disk full")
        copied.append(str(dst))
        return real_copy(src, dst)

    monkeypatch.setattr(shutil, "copyfile", flaky_copy)
    project = await Project.open(tmp_path)
    with pytest.raises(exc_type):
        await project.environments.create("half")
    assert len(copied) == 3  # the failure really happened half-way
    assert tree(tmp_path / ".silo" / "environments") == []
    assert await project.environments.list() == []


async def test_failure_at_rename_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_rename(src: Any, dst: Any) -> None:
        raise PermissionError("read-only")

    monkeypatch.setattr(os, "rename", no_rename)
    project = await Project.open(tmp_path)
    with pytest.raises(PermissionError):
        await project.environments.create("late")
    assert tree(tmp_path / ".silo" / "environments") == []


async def test_tool_scaffold_writes_stub_and_registers(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    result = await env.tools.scaffold("get-customer", "Read one customer.")
    assert result.to_dict() == {
        "created": "tools/get_customer.py",
        "registeredIn": "tools/__init__.py",
        "identifier": "get_customer",
    }
    registry = (env.path / "tools" / "__init__.py").read_text()
    assert "from .get_customer import get_customer\n" in registry
    assert "tools: list[silo.Tool] = [\n    get_customer,\n]\n" in registry
    assert await env.tools.list() == [
        {
            "name": "get-customer",
            "description": "Read one customer.",
            "inputSchema": {
                "type": "object",
                "properties": {},
                "required": [],
                "additionalProperties": False,
            },
        }
    ]
    loaded = await env.load()
    [tool] = loaded.bind_tools(loaded.create_state())
    result_value, _ = await tool.invoke({})
    assert result_value.is_error
    assert result_value.output == {
        "code": "invalid_state",
        "message": 'Tool "get-customer" is not implemented yet.',
    }


async def test_tool_scaffold_default_description_and_quotes(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    await env.tools.scaffold("a1")
    await env.tools.scaffold("b2", "Say \"hi\" and 'bye'\nnewline")
    listing = {t["name"]: t["description"] for t in await env.tools.list()}
    assert listing == {"a1": "TODO: describe what a1 does.", "b2": "Say \"hi\" and 'bye'\nnewline"}


async def test_tool_scaffold_errors_leave_no_orphan(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    await env.tools.scaffold("lookup")
    err = await error_of(env.tools.scaffold("Lookup"))
    assert err.code == "tool_already_exists"
    assert err.message == '"tools/lookup.py" already exists in environment "shop".'
    registry = env.path / "tools" / "__init__.py"
    registry.write_text(registry.read_text() + "from .elsewhere import other\n")
    err = await error_of(env.tools.scaffold("other"))
    assert err.code == "already_registered"
    assert not (env.path / "tools" / "other.py").exists()
    registry.write_text("tools = list()\n")
    err = await error_of(env.tools.scaffold("third"))
    assert err.code == "registry_not_found"
    assert not (env.path / "tools" / "third.py").exists()
    registry.unlink()
    err = await error_of(env.tools.scaffold("fourth"))
    assert err.code == "registry_not_found"
    assert err.message == (
        'Environment "shop" has no tools/__init__.py to register in. '
        'Create one defining "tools = [...]".'
    )
    assert (await error_of(env.tools.scaffold("class"))).code == "unsafe_name"
    assert (await error_of(env.tools.scaffold("a/b"))).code == "unsafe_name"


async def test_state_type_detection(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    state = env.path / "state.py"
    state.write_text("from typing import Any\n\nclass ShopState(dict[str, Any]):\n    pass\n")
    await env.tools.scaffold("one")
    assert "from ..state import ShopState\n" in (env.path / "tools" / "one.py").read_text()
    registry = (env.path / "tools" / "__init__.py").read_text()
    err = await error_of(env.tools.scaffold("two", state_type="NoSuchState"))
    assert err.code == "state_type_not_found"  # a stub importing a missing name breaks everything
    assert 'defines no "NoSuchState" (state types there: ShopState)' in err.message
    assert not (env.path / "tools" / "two.py").exists()
    assert (env.path / "tools" / "__init__.py").read_text() == registry  # nothing written
    await env.tools.scaffold("two", state_type="ShopState")
    assert "from ..state import ShopState\n" in (env.path / "tools" / "two.py").read_text()
    assert (await error_of(env.tools.scaffold("three", state_type="1x"))).code == "unsafe_name"
    state.write_text("World = dict\n")
    err = await error_of(env.tools.scaffold("four"))
    assert err.code == "state_type_not_found"
    assert 'Could not find a "State" type in state.py of environment "shop"' in err.message
    state.write_text("def broken(:\n")
    assert (await error_of(env.tools.scaffold("five"))).code == "state_type_not_found"
    state.unlink()
    err = await error_of(env.verifiers.scaffold("VER-1", "TASK-1"))
    assert err.code == "state_type_not_found"
    assert err.message.startswith('Could not read state.py in environment "shop"')
    assert not (env.path / "tools" / "four.py").exists()


async def test_verifier_scaffold_registers_failing_stub(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    result = await env.verifiers.scaffold("VER-001", "TASK-001")
    assert result.to_dict() == {
        "created": "verifiers/ver_001.py",
        "registeredIn": "verifiers/__init__.py",
        "identifier": "ver_001",
    }
    assert await env.verifiers.list() == [
        {"id": "VER-001", "taskId": "TASK-001", "name": "TODO: name what VER-001 proves."}
    ]
    loaded = await env.load()
    [verifier] = loaded.verifiers
    outcome = await verifier.evaluate(
        {}, {}, silo.VerifierContext("", silo.Task("T", "t", "i", "V"))
    )
    assert not outcome.passed
    assert outcome.failed_required == ["TODO: define success condition"]
    assert outcome.checks[0].detail == 'Verifier "VER-001" is not implemented yet.'
    err = await error_of(env.verifiers.scaffold("ver-001", "TASK-001"))
    assert err.code == "verifier_already_exists"
    assert err.message == '"verifiers/ver_001.py" already exists in environment "shop".'
    assert (await error_of(env.verifiers.scaffold("V2", "../t"))).code == "unsafe_name"
    await env.verifiers.scaffold("002", "TASK-002", name="Checks two")
    assert [v["name"] for v in await env.verifiers.list()] == [
        "TODO: name what VER-001 proves.",
        "Checks two",
    ]
    registry = ast.parse((env.path / "verifiers" / "__init__.py").read_text())
    assert "verifier_002" in ast.unparse(registry)


async def test_generated_code_compiles_for_awkward_names(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    for name in ["3d.view", "x-y_z", "A.B.C"]:
        result = await env.tools.scaffold(name, "é ü \\ ' \"")
        compile((env.path / result.created).read_text(), result.created, "exec")
    assert sorted(t["name"] for t in await env.tools.list()) == ["3d.view", "A.B.C", "x-y_z"]


async def test_destination_appearing_during_copy_is_never_merged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _scaffold.copy_template
    destination = tmp_path / ".silo" / "environments" / "race"

    def racing_copy(source: Path, staging: Path) -> None:
        real(source, staging)
        if not destination.exists():  # copy_template recurses: race once
            destination.mkdir()
            (destination / "theirs.txt").write_text("theirs")

    monkeypatch.setattr(_scaffold, "copy_template", racing_copy)
    project = await Project.open(tmp_path)
    err = await error_of(project.environments.create("race"))
    assert err.code == "environment_already_exists"
    assert tree(tmp_path / ".silo" / "environments") == ["race", "race/theirs.txt"]


@pytest.mark.parametrize("template", [t.id for t in list_templates()])
async def test_every_template_validates_and_accepts_scaffolds(
    tmp_path: Path, template: str
) -> None:
    project = await Project.open(tmp_path)
    env = await project.environments.create("t", template=template)
    report = await env.validate()
    assert [f.code for f in report.findings if f.level == "error"] == []
    before = len(await env.tools.list())
    await env.tools.scaffold("zz_new_tool")
    await env.verifiers.scaffold("VER-ZZ", "TASK-ZZ")
    loaded = await env.load()
    assert len(loaded.bind_tools(loaded.create_state())) == before + 1
    assert loaded.verifiers[-1].id == "VER-ZZ"
