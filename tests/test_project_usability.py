"""Project-layer behaviour the CLI relies on: the project above, refusing broken data early."""

from __future__ import annotations

from pathlib import Path

import pytest

import silo_async as silo
from silo_async.project import enclosing_project, load_environment
from silo_async.project._scaffold import create_environment
from silo_async.project._store import TaskStore


def test_enclosing_project_is_the_nearest_silo_directory_above(tmp_path: Path) -> None:
    (tmp_path / ".silo").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert enclosing_project(deep) == tmp_path
    (tmp_path / "a" / ".silo").mkdir()  # the nearest project wins
    assert enclosing_project(deep) == tmp_path / "a"
    assert enclosing_project(tmp_path / "a") == tmp_path  # strictly above the start


def test_enclosing_project_ignores_a_file_named_silo(tmp_path: Path) -> None:
    start = tmp_path / "x" / "y"
    start.mkdir(parents=True)
    (tmp_path / "x" / ".silo").touch()
    assert enclosing_project(start) in (
        None,
        *[p for p in tmp_path.parents if (p / ".silo").is_dir()],
    )


def test_load_environment_names_a_data_file_that_is_not_json(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "shop")
    (env_dir / "data" / "orders.json").write_bytes(b'{"ORD-1": ')
    with pytest.raises(silo.SiloError) as info:
        load_environment("shop", tmp_path)
    assert info.value.code == "invalid_json"
    assert info.value.message.startswith(
        'Dataset file "data/orders.json" in environment "shop" is not valid JSON: '
    )
    assert info.value.details == {"environment": "shop", "file": "data/orders.json"}


def test_load_environment_accepts_valid_data(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "shop")
    (env_dir / "data" / "orders.json").write_text('{"ORD-1": {"total": 3}}', encoding="utf-8")
    env = load_environment("shop", tmp_path)
    assert env.create_state() == {"orders": {"ORD-1": {"total": 3}}}


def _task_error(tmp_path: Path, text: str) -> tuple[silo.SiloError, silo.SiloError]:
    """The errors of the loader and of the task store for one hand-written task file."""
    env_dir = tmp_path / ".silo" / "environments" / "shop"
    if not env_dir.exists():
        create_environment(tmp_path, "shop")
    (env_dir / "tasks" / "x.json").write_text(text, encoding="utf-8")
    with pytest.raises(silo.SiloError) as loaded:
        load_environment("shop", tmp_path)
    with pytest.raises(silo.SiloError) as listed:
        TaskStore(env_dir, "shop").list()
    return loaded.value, listed.value


GOOD_FIELDS = '"id": "T1", "instruction": "i", "verifierId": "V"'


def test_a_task_field_of_the_wrong_type_is_not_called_missing(tmp_path: Path) -> None:
    loaded, listed = _task_error(tmp_path, '{"title": 5, ' + GOOD_FIELDS + "}")
    assert loaded.code == listed.code == "task_invalid"
    assert loaded.message == (
        'Task file "tasks/x.json" in environment "shop" has "title" as a number; '
        "it must be a non-empty string."
    )
    assert listed.message == (
        'Task file "tasks/x.json" has "title" as a number; it must be a non-empty string.'
    )
    assert loaded.details["field"] == "title"


def test_a_misspelt_task_key_is_named(tmp_path: Path) -> None:
    text = '{"id": "T1", "title": "t", "instruction": "i", "verifier_id": "V"}'
    loaded, listed = _task_error(tmp_path, text)
    expected = 'is missing "verifierId" (found "verifier_id"; spell the key "verifierId").'
    assert loaded.message.endswith(expected)
    assert listed.message.endswith(expected)


def test_blank_and_null_task_fields_stay_missing(tmp_path: Path) -> None:
    for value in ('""', "null"):
        loaded, _ = _task_error(tmp_path, '{"title": ' + value + ", " + GOOD_FIELDS + "}")
        assert loaded.message.endswith('is missing a non-empty "title".')


def test_an_unparsable_task_file_is_named_relative_to_the_environment(tmp_path: Path) -> None:
    loaded, listed = _task_error(tmp_path, '{"id": "T1", "ti')
    assert loaded.code == listed.code == "invalid_json"
    assert loaded.message.startswith(
        'Task file "tasks/x.json" in environment "shop" is not valid JSON: '
    )
    assert listed.message.startswith('Task file "tasks/x.json" is not valid JSON: ')
    assert str(tmp_path) not in loaded.message + listed.message
    assert loaded.details == {"environment": "shop", "file": "tasks/x.json", "id": "x"}


@pytest.mark.anyio
async def test_sdk_task_add_with_a_wrong_type_says_so(tmp_path: Path) -> None:
    project = await silo.Project.open(tmp_path)
    env = await project.environments.create("shop")
    with pytest.raises(silo.SiloError) as info:
        await env.tasks.add({"id": "T1", "title": ["t"], "instruction": "i", "verifierId": "V"})
    assert info.value.message == 'Task "T1" has "title" as an array; it must be a non-empty string.'


def test_a_task_difficulty_that_is_not_a_string_is_named_not_dropped(tmp_path: Path) -> None:
    loaded, listed = _task_error(tmp_path, '{"title": "t", "difficulty": 2, ' + GOOD_FIELDS + "}")
    assert loaded.message == (
        'Task file "tasks/x.json" in environment "shop" has "difficulty" as a number; it must '
        'be a string such as "easy", "medium" or "hard" (leave it out for "unspecified").'
    )
    assert listed.message.startswith('Task file "tasks/x.json" has "difficulty" as a number')
    assert loaded.details == {
        "environment": "shop",
        "file": "tasks/x.json",
        "field": "difficulty",
        "id": "T1",
        "verifierId": "V",
    }


def test_a_misspelt_difficulty_key_is_named(tmp_path: Path) -> None:
    loaded, listed = _task_error(
        tmp_path, '{"title": "t", "Difficulty": "hard", ' + GOOD_FIELDS + "}"
    )
    expected = 'has "Difficulty"; spell the key "difficulty".'
    assert loaded.message.endswith(expected)
    assert listed.message.endswith(expected)


def test_unknown_task_keys_still_load(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "shop")
    text = '{"title": "t", "entities": ["CUS-1"], "owner": null, ' + GOOD_FIELDS + "}"
    (env_dir / "tasks" / "x.json").write_text(text, encoding="utf-8")
    assert [t.title for t in TaskStore(env_dir, "shop").list()] == ["t"]
    assert load_environment("shop", tmp_path).tasks[0].id == "T1"
