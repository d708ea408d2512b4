"""Task.from_dict: what loads, and a precise task_invalid message for everything that does not."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

import silo_async as silo

GOOD: dict[str, Any] = {
    "id": "TASK-1",
    "title": "Block a customer",
    "instruction": "Block CUS-001.",
    "verifierId": "VER-1",
}
SOURCE = 'Task file "tasks/x.json"'


def error(data: Any) -> silo.SiloError:
    with pytest.raises(silo.SiloError) as info:
        silo.Task.from_dict(data, source=SOURCE)
    assert info.value.code == "task_invalid"
    return info.value


def test_a_valid_task_round_trips() -> None:
    task = silo.Task.from_dict({**GOOD, "difficulty": "hard"})
    assert task == silo.Task("TASK-1", "Block a customer", "Block CUS-001.", "VER-1", "hard")
    assert silo.Task.from_dict(task.to_dict()) == task


def test_required_values_are_kept_as_written_and_difficulty_is_trimmed() -> None:
    task = silo.Task.from_dict({**GOOD, "title": " T ", "difficulty": " easy "})
    assert (task.title, task.difficulty) == (" T ", "easy")


@pytest.mark.parametrize("difficulty", [None, "", "  "])
def test_null_or_blank_difficulty_is_unspecified(difficulty: str | None) -> None:
    assert silo.Task.from_dict({**GOOD, "difficulty": difficulty}).difficulty == "unspecified"
    assert silo.Task.from_dict(GOOD).difficulty == "unspecified"


def test_unknown_keys_are_ignored() -> None:
    # Silo's own task files carry "entities"; files from a newer version may carry more.
    extra = {"entities": ["CUS-001"], "tags": {"area": "crm"}, "verifier": "x", "notes": 3}
    assert silo.Task.from_dict({**GOOD, **extra}) == silo.Task.from_dict(GOOD)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (5, "a number"),
        (2.5, "a number"),
        (True, "a boolean"),
        (["t"], "an array"),
        ({"en": "t"}, "an object"),
        (datetime.date(2026, 1, 1), "a date"),
    ],
)
def test_a_required_field_of_the_wrong_type_is_named_with_its_type(value: Any, kind: str) -> None:
    err = error({**GOOD, "title": value})
    assert err.message == f'{SOURCE} has "title" as {kind}; it must be a non-empty string.'
    assert err.details == {"source": SOURCE, "field": "title"}


@pytest.mark.parametrize("value", ["absent", None, "", " \n"])
def test_absent_null_and_blank_required_fields_are_missing(value: str | None) -> None:
    data = {k: v for k, v in GOOD.items() if k != "instruction"}
    if value != "absent":
        data["instruction"] = value
    err = error(data)
    assert err.message == f'{SOURCE} is missing a non-empty "instruction".'
    assert err.details == {"source": SOURCE, "field": "instruction"}


@pytest.mark.parametrize("spelt", ["verifier_id", "VerifierId", "verifierID", "verifier-id"])
def test_a_misspelt_required_key_is_named(spelt: str) -> None:
    data = {k: v for k, v in GOOD.items() if k != "verifierId"}
    err = error({**data, spelt: "VER-1"})
    assert err.message == (
        f'{SOURCE} is missing "verifierId" (found "{spelt}"; spell the key "verifierId").'
    )
    assert err.details["field"] == "verifierId"


def test_fields_are_checked_in_silo_order() -> None:
    err = error({"title": 1, "instruction": 2, "verifierId": 3})
    assert err.details["field"] == "id"
    err = error({**GOOD, "instruction": 2, "verifierId": 3})
    assert err.details["field"] == "instruction"


@pytest.mark.parametrize(("value", "kind"), [(3, "a number"), (["hard"], "an array")])
def test_a_difficulty_that_is_not_a_string_is_an_error(value: Any, kind: str) -> None:
    err = error({**GOOD, "difficulty": value})
    assert err.message == (
        f'{SOURCE} has "difficulty" as {kind}; it must be a string such as "easy", "medium" '
        'or "hard" (leave it out for "unspecified").'
    )
    assert err.details == {"source": SOURCE, "field": "difficulty"}


def test_a_misspelt_difficulty_key_is_an_error_not_unspecified() -> None:
    err = error({**GOOD, "Difficulty": "hard"})
    assert err.message == f'{SOURCE} has "Difficulty"; spell the key "difficulty".'
    assert err.details["field"] == "difficulty"


def test_a_near_miss_beside_the_real_key_is_just_an_unknown_key() -> None:
    task = silo.Task.from_dict({**GOOD, "verifier_id": "OTHER", "difficulty": "easy", "DIFF": 1})
    assert (task.verifier_id, task.difficulty) == ("VER-1", "easy")


@pytest.mark.parametrize("data", [[GOOD], "TASK-1", None, 3])
def test_not_an_object(data: Any) -> None:
    err = error(data)
    assert err.message == f"{SOURCE} is not a JSON object."
    assert err.details == {"source": SOURCE}


def test_default_source_names_the_task() -> None:
    with pytest.raises(silo.SiloError) as info:
        silo.Task.from_dict({**GOOD, "id": 7})
    assert info.value.message == 'task has "id" as a number; it must be a non-empty string.'
