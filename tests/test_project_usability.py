"""Project-layer behaviour the CLI relies on: finding the project, refusing broken data early."""

from __future__ import annotations

from pathlib import Path

import pytest

import silo_async as silo
from silo_async.project import find_project_root, load_environment
from silo_async.project._scaffold import create_environment


def test_find_project_root_walks_up_to_the_nearest_silo_directory(tmp_path: Path) -> None:
    (tmp_path / ".silo").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project_root(deep) == tmp_path
    assert find_project_root(tmp_path) == tmp_path
    (tmp_path / "a" / ".silo").mkdir()  # the nearest project wins
    assert find_project_root(deep) == tmp_path / "a"


def test_find_project_root_without_a_project_is_the_start(tmp_path: Path) -> None:
    start = tmp_path / "x"
    start.mkdir()
    (tmp_path / "x" / ".silo").touch()  # a file named .silo is not a project
    assert find_project_root(start) == start


def test_load_environment_names_a_data_file_that_is_not_json(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "shop")
    (env_dir / "data" / "orders.json").write_bytes(b'{"ORD-1": ')
    with pytest.raises(silo.SiloError) as info:
        load_environment("shop", tmp_path)
    assert info.value.code == "invalid_json"
    assert info.value.message.startswith(
        'Dataset file "data/orders.json" in environment "shop" is not valid JSON: '
    )
    assert info.value.message.endswith('replace it with "silo-async data update orders".')
    assert info.value.details == {"environment": "shop", "file": "data/orders.json"}


def test_load_environment_accepts_valid_data(tmp_path: Path) -> None:
    env_dir = create_environment(tmp_path, "shop")
    (env_dir / "data" / "orders.json").write_text('{"ORD-1": {"total": 3}}', encoding="utf-8")
    env = load_environment("shop", tmp_path)
    assert env.create_state() == {"orders": {"ORD-1": {"total": 3}}}
