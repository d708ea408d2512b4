"""Safe names: what becomes a path or generated code is checked first."""

from __future__ import annotations

import pytest

from silo_async import SiloError
from silo_async.project import suggest_free_name
from silo_async.project._names import (
    check_environment_name,
    check_identifier,
    check_safe_name,
    python_identifier,
    snake_stem,
)


@pytest.mark.parametrize(
    "name",
    [
        "../x",
        "a/b",
        "a\\b",
        "",
        ".hidden",
        "-x",
        "_x",
        "con",
        "CON",
        "lpt1",
        "nul.json",
        "x.",
        "a b",
        "é",
        "x" * 101,
        "..",
        "a:b",
    ],
)
def test_unsafe_resource_names_are_rejected(name: str) -> None:
    with pytest.raises(SiloError) as info:
        check_safe_name(name, "dataset")
    assert info.value.code == "unsafe_name"
    assert info.value.details == {"kind": "dataset", "name": name}
    assert f'Invalid dataset name "{name}"' in info.value.message


@pytest.mark.parametrize("name", ["customers", "TASK-001", "v1.2_x", "9lives"])
def test_safe_resource_names_pass(name: str) -> None:
    assert check_safe_name(name, "task id") == name


@pytest.mark.parametrize("name", ["support.desk", "../up", "a/b", "", "con", "-x", None, 3])
def test_environment_names_are_letters_digits_dash_underscore(name: object) -> None:
    with pytest.raises(SiloError) as info:
        check_environment_name(name)
    assert info.value.code == "unsafe_name"
    assert "Use only letters, numbers, hyphens and underscores" in info.value.message


def test_environment_name_ok() -> None:
    assert check_environment_name("support-desk_2") == "support-desk_2"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("get-profits", "get_profits"),
        ("VER-001", "ver_001"),
        ("Get.Profits", "get_profits"),
        ("a--b", "a_b"),
    ],
)
def test_snake_stem(name: str, expected: str) -> None:
    assert snake_stem(name) == expected


def test_identifier_prefixes_leading_digit() -> None:
    assert python_identifier("3d-view", "tool", "tool_") == "tool_3d_view"
    assert python_identifier("001", "verifier id", "verifier_") == "verifier_001"


@pytest.mark.parametrize("name", ["class", "Import", "for-", "tools", "silo", "annotations"])
def test_identifier_rejects_keywords_and_names_generated_code_binds(name: str) -> None:
    with pytest.raises(SiloError) as info:
        python_identifier(name, "tool", "tool_")
    assert info.value.code == "unsafe_name"


@pytest.mark.parametrize("name", ["1State", "my-state", "class", ""])
def test_state_type_must_be_identifier(name: str) -> None:
    with pytest.raises(SiloError) as info:
        check_identifier(name)
    assert info.value.code == "unsafe_name"
    assert "Python identifier" in info.value.message


def test_suggest_free_name_is_case_insensitive_and_strips_counter() -> None:
    assert suggest_free_name("support", ["Support"]) == "support-2"
    assert suggest_free_name("support", ["support", "SUPPORT-2"]) == "support-3"
    assert suggest_free_name("support-2", ["support-2"]) == "support-3"
    assert suggest_free_name("fresh", ["support"]) == "fresh"


def test_public_names_resolve() -> None:
    import silo_async.project as project

    for name in project.__all__:
        assert getattr(project, name) is not None
    assert project.check_environment_name("ok-1") == "ok-1"
