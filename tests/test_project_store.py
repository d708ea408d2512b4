"""The authoring store through the SDK: datasets and tasks, and their errors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.project import EnvironmentHandle, Project

pytestmark = pytest.mark.anyio


async def blank_env(tmp_path: Path, name: str = "shop") -> EnvironmentHandle:
    project = await Project.open(tmp_path)
    return await project.environments.create(name)


async def error_of(awaitable: Any) -> silo.SiloError:
    with pytest.raises(silo.SiloError) as info:
        await awaitable
    return info.value


TASK = {
    "id": "TASK-001",
    "title": "Ship it",
    "instruction": "Ship order ORD-1.",
    "verifierId": "VER-001",
    "difficulty": "easy",
}


@pytest.mark.parametrize(
    "value", [{"a": {"b": [1, 2.5, None]}}, [1, "two"], "text", 3, 0.5, True, None]
)
async def test_data_round_trip_any_json_value(tmp_path: Path, value: Any) -> None:
    env = await blank_env(tmp_path)
    assert await env.data.add("things", value) == "data/things.json"
    assert await env.data.get("things") == value
    text = (env.path / "data" / "things.json").read_text()
    assert text == json.dumps(value, indent=2, ensure_ascii=False) + "\n"


async def test_data_lifecycle_and_gitkeep(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    assert (env.path / "data" / ".gitkeep").exists()
    await env.data.add("orders", [{"id": "ORD-1"}])
    assert not (env.path / "data" / ".gitkeep").exists()
    await env.data.add("customers", {"C1": "Ann"})
    listing = await env.data.list()
    assert [d["name"] for d in listing] == ["customers", "orders"]
    assert listing[0]["file"] == "data/customers.json"
    assert listing[0]["bytes"] == (env.path / "data" / "customers.json").stat().st_size
    assert await env.data.update("orders", []) == "data/orders.json"
    assert await env.data.get("orders") == []
    assert await env.data.put("orders", [1]) == "data/orders.json"
    assert await env.data.put("fresh", {}) == "data/fresh.json"
    assert await env.data.remove("orders") == "data/orders.json"
    assert [d["name"] for d in await env.data.list()] == ["customers", "fresh"]


async def test_data_errors(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    await env.data.add("orders", [])
    err = await error_of(env.data.add("orders", [1]))
    assert err.code == "data_already_exists"
    assert err.message == (
        'Dataset "orders" already exists in environment "shop". '
        'Use "silo-async data update" to replace it.'
    )
    # Same name in another case is the same dataset (identical on macOS and Linux).
    assert (await error_of(env.data.add("ORDERS", [1]))).code == "data_already_exists"
    err = await error_of(env.data.update("missing", 1))
    assert err.code == "data_not_found"
    assert err.message == (
        'Dataset "missing" does not exist in environment "shop". '
        'Use "silo-async data add" to create it.'
    )
    err = await error_of(env.data.get("missing"))
    assert err.message == (
        'Dataset "missing" was not found in environment "shop". Available: orders.'
    )
    assert (await error_of(env.data.remove("missing"))).code == "data_not_found"
    assert (await error_of(env.data.add("../escape", 1))).code == "unsafe_name"
    err = await error_of(env.data.add("nan", math.nan))
    assert err.code == "invalid_json"
    assert not (env.path / "data" / "nan.json").exists()
    assert (await error_of(env.data.add("set", {1, 2}))).code == "invalid_json"
    (env.path / "data" / "broken.json").write_text("{oops")
    err = await error_of(env.data.get("broken"))
    assert err.code == "invalid_json"
    assert str(env.path / "data" / "broken.json") in err.message


async def test_tasks_lifecycle(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    assert await env.tasks.add(TASK) == "tasks/TASK-001.json"
    assert not (env.path / "tasks" / ".gitkeep").exists()
    on_disk = json.loads((env.path / "tasks" / "TASK-001.json").read_text())
    assert list(on_disk) == ["id", "title", "instruction", "verifierId", "difficulty"]
    await env.tasks.add(silo.Task("TASK-000", "First", "Do.", "VER-000"))
    assert [t.id for t in await env.tasks.list()] == ["TASK-000", "TASK-001"]
    assert (await env.tasks.get("TASK-001")).difficulty == "easy"
    # update is a whole replacement: the old difficulty does not survive.
    replaced = {k: v for k, v in TASK.items() if k != "difficulty"} | {"title": "New"}
    assert await env.tasks.update(replaced) == "tasks/TASK-001.json"
    task = await env.tasks.get("TASK-001")
    assert (task.title, task.difficulty) == ("New", "unspecified")
    assert await env.tasks.put({**TASK, "id": "TASK-002"}) == "tasks/TASK-002.json"
    assert await env.tasks.remove("TASK-000") == "tasks/TASK-000.json"
    assert [t.id for t in await env.tasks.list()] == ["TASK-001", "TASK-002"]


async def test_task_update_rewrites_the_file_it_came_from(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    (env.path / "tasks" / "custom-name.json").write_text(json.dumps(TASK))
    assert await env.tasks.update({**TASK, "title": "Changed"}) == "tasks/custom-name.json"
    assert sorted(p.name for p in (env.path / "tasks").glob("*.json")) == ["custom-name.json"]
    assert await env.tasks.remove("TASK-001") == "tasks/custom-name.json"


async def test_task_errors(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    await env.tasks.add(TASK)
    err = await error_of(env.tasks.add(TASK))
    assert err.code == "task_already_exists"
    assert err.message == (
        'Task "TASK-001" already exists in environment "shop" (tasks/TASK-001.json).'
    )
    err = await error_of(env.tasks.update({**TASK, "id": "TASK-404"}))
    assert err.code == "task_not_found"
    assert err.message == 'Task "TASK-404" does not exist in environment "shop".'
    err = await error_of(env.tasks.get("TASK-404"))
    assert err.message == (
        'Task "TASK-404" was not found in environment "shop". Available: TASK-001.'
    )
    assert (await error_of(env.tasks.remove("TASK-404"))).code == "task_not_found"
    err = await error_of(env.tasks.add({**TASK, "id": "TASK-9", "title": ""}))
    assert err.code == "task_invalid"
    assert err.message == 'Task "TASK-9" is missing a non-empty "title".'
    assert (await error_of(env.tasks.add({**TASK, "id": "../x"}))).code == "unsafe_name"
    # A file named like the new id (ignoring case) that holds another task is never overwritten.
    (env.path / "tasks" / "task-7.json").write_text(json.dumps({**TASK, "id": "OTHER"}))
    err = await error_of(env.tasks.add({**TASK, "id": "TASK-7"}))
    assert err.code == "task_already_exists"
    assert json.loads((env.path / "tasks" / "task-7.json").read_text())["id"] == "OTHER"


async def test_broken_task_files_surface_on_list(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    (env.path / "tasks" / "x.json").write_text("{")
    assert (await error_of(env.tasks.list())).code == "invalid_json"
    (env.path / "tasks" / "x.json").write_text(json.dumps({"id": "T", "title": "t"}))
    err = await error_of(env.tasks.list())
    assert err.code == "task_invalid"
    assert err.message == (
        'Task file "tasks/x.json" has 2 problems: (1) it is missing a non-empty "instruction". '
        '(2) it is missing a non-empty "verifierId".'
    )
    (env.path / "tasks" / "x.json").write_text("[]")
    err = await error_of(env.tasks.get("T"))  # x.json may be T's: the message names it
    assert err.message == (
        'Task "T" was not found in environment "shop". Available: none. Not readable: '
        "tasks/x.json (silo-async env validate names the problems)."
    )
    assert (await error_of(env.tasks.get("x"))).message == (
        'Task file "tasks/x.json" is not a JSON object.'
    )


async def test_operations_on_a_deleted_environment(tmp_path: Path) -> None:
    import shutil

    env = await blank_env(tmp_path)
    shutil.rmtree(env.path)
    assert (await error_of(env.data.list())).code == "environment_not_found"
    assert (await error_of(env.tasks.add(TASK))).code == "environment_not_found"
    assert (await error_of(env.validate())).code == "environment_not_found"


async def test_non_utf8_files_are_invalid_json(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    (env.path / "data" / "latin.json").write_bytes(b'{"name": "\xe9"}')
    err = await error_of(env.data.get("latin"))
    assert err.code == "invalid_json"
    (env.path / "silo.environment.json").write_bytes(b"\xff\xfe")
    assert (await error_of(env.load())).code == "invalid_json"


async def test_rewriting_a_task_keeps_other_tools_keys(tmp_path: Path) -> None:
    env = await blank_env(tmp_path)
    await env.tasks.add({**TASK, "entities": {"orderId": "ORD-1"}, "source": "silo"})
    on_disk = json.loads((env.path / "tasks" / "TASK-001.json").read_text())
    assert on_disk["entities"] == {"orderId": "ORD-1"} and on_disk["source"] == "silo"
    await env.tasks.update(silo.Task("TASK-001", "Changed", "Ship.", "VER-001"))
    on_disk = json.loads((env.path / "tasks" / "TASK-001.json").read_text())
    assert on_disk["title"] == "Changed" and on_disk["entities"] == {"orderId": "ORD-1"}
    await env.tasks.update({**TASK, "entities": {"orderId": "ORD-2"}})
    on_disk = json.loads((env.path / "tasks" / "TASK-001.json").read_text())
    assert on_disk["entities"] == {"orderId": "ORD-2"} and on_disk["source"] == "silo"
