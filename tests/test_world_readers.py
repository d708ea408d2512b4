"""silo_async.world input readers: one house style of message, and nothing but ToolError."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import silo_async as silo
from silo_async import world as w
from silo_async.world import fields


def _error(reader: Callable[..., Any], value: Any, *args: Any, **kwargs: Any) -> silo.ToolError:
    with pytest.raises(silo.ToolError) as caught:
        reader({"x": value}, "x", *args, **kwargs)
    return caught.value


@pytest.mark.parametrize(
    ("reader", "value", "kwargs", "message"),
    [
        (fields.read_string, 5, {}, '"x" must be a string; received 5.'),
        (fields.read_string, "   ", {}, '"x" must not be empty; received "   ".'),
        (fields.read_int, 2.5, {}, '"x" must be a whole number; received 2.5.'),
        (fields.read_int, True, {}, '"x" must be a whole number; received true.'),
        (fields.read_int, "3", {}, '"x" must be a whole number; received "3".'),
        (fields.read_int, 900, {"maximum": 500}, '"x" must be at most 500; received 900.'),
        (fields.read_int, 0, {"minimum": 1}, '"x" must be at least 1; received 0.'),
        (fields.read_number, float("nan"), {}, '"x" must be a finite number; received NaN.'),
        (fields.read_number, float("inf"), {}, '"x" must be a finite number; received Infinity.'),
        (fields.read_number, [1], {}, '"x" must be a number; received a list of 1 item.'),
        (fields.read_money, 0, {}, '"x" must be a positive amount; received 0.'),
        (fields.read_money, -1, {"allow_zero": True}, '"x" must not be negative; received -1.'),
        (fields.read_money, 0.001, {}, '"x" must be at least 0.01; received 0.001.'),
        (fields.read_bool, 1, {}, '"x" must be true or false; received 1.'),
        (fields.read_date, "2026-02-30", {}, '"x" must be a real calendar date in YYYY-MM-DD form; '
         'received "2026-02-30".'),
        (fields.read_date, "20260511", {}, '"x" must be a real calendar date in YYYY-MM-DD form; '
         'received "20260511".'),
        (fields.read_strings, ["a", ""], {}, '"x" must be a non-empty list of non-empty strings; '
         "received a list of 2 items."),
        (fields.read_strings, ["a", "a"], {}, '"x" must not repeat a; received a list of 2 items.'),
        (fields.read_objects, [1], {}, '"x" must be a non-empty list of objects; received a '
         "list of 1 item."),
    ],
)  # fmt: skip
def test_house_style_messages(
    reader: Callable[..., Any], value: Any, kwargs: dict[str, Any], message: str
) -> None:
    error = _error(reader, value, **kwargs)
    assert error.code == "invalid_input"
    assert error.message == message
    assert error.details["field"] == "x"


def test_enum_lists_the_allowed_values() -> None:
    error = _error(fields.read_enum, "shut", ["open", "closed"])
    assert error.message == '"x" must be one of: open, closed; received "shut".'
    assert error.details == {"field": "x", "received": "shut", "allowed": ["open", "closed"]}


def test_bounds_are_in_the_details() -> None:
    assert _error(fields.read_int, 900, maximum=500).details == {
        "field": "x",
        "received": 900,
        "maximum": 500,
    }


def test_required_and_default() -> None:
    with pytest.raises(silo.ToolError, match=r'^"name" is required\.$'):
        fields.read_string({}, "name")
    with pytest.raises(silo.ToolError, match=r'^"name" is required\.$'):
        fields.read_string({"name": None}, "name")
    assert fields.read_string({}, "name", "anon") == "anon"
    assert fields.read_int({"n": None}, "n", 7) == 7


def test_values_come_back_clean() -> None:
    assert fields.read_string({"x": "  hi  "}, "x") == "hi"
    assert fields.read_int({"x": 3.0}, "x") == 3
    assert type(fields.read_int({"x": 3.0}, "x")) is int
    assert fields.read_money({"x": 1.005}, "x") == 1.01
    assert fields.read_money({"x": 12.0}, "x") == 12
    assert type(fields.read_money({"x": 12.0}, "x")) is int
    assert fields.read_money({"x": 0}, "x", allow_zero=True) == 0
    assert fields.read_strings({"x": [" a ", "b"]}, "x") == ["a", "b"]
    assert fields.read_strings({"x": ["a", "a"]}, "x", unique=False) == ["a", "a"]
    assert fields.read_date({"x": "2028-02-29"}, "x") == "2028-02-29"


def test_nested_fields_are_named_by_path() -> None:
    with pytest.raises(silo.ToolError) as caught:
        fields.read_int({"quantity": -2}, "quantity", minimum=1, path="lines[1]")
    assert caught.value.message == '"lines[1].quantity" must be at least 1; received -2.'


def test_huge_and_long_values_are_described_not_printed() -> None:
    error = _error(fields.read_int, 10**5000)
    assert error.message == '"x" must be at most 9007199254740991; received an integer of about ' \
        "5001 digits."  # fmt: skip
    error = _error(fields.read_enum, "y" * 10_000, ["a"])
    assert len(error.message) < 200


def test_require_some() -> None:
    with pytest.raises(silo.ToolError) as caught:
        w.fields.require_some({"a": None}, ["a", "b"])
    assert caught.value.message == "Nothing to change: give at least one of a, b."
    w.fields.require_some({"b": 0}, ["a", "b"])


NASTY: list[Any] = [
    None, True, False, 0, -1, 2**53, 2**53 + 1, 10**400, -(10**400), 10**5000, 1.5, 1e308, 1e-320,
    float("nan"), float("inf"), float("-inf"), "", " ", "x" * 5000, "2026-02-30", "12", [], [1],
    ["a", "a"], [None], [{}], {}, {"a": 1}, [[1]],
]  # fmt: skip


def _label(value: Any) -> str:
    if isinstance(value, int) and value.bit_length() > 64:
        return f"int of {value.bit_length()} bits"
    return repr(value)[:20]


READERS: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = [
    (fields.read_string, (), {}),
    (fields.read_int, (), {}),
    (fields.read_int, (), {"minimum": 1, "maximum": 500}),
    (fields.read_number, (), {}),
    (fields.read_number, (), {"minimum": 0, "maximum": 1}),
    (fields.read_money, (), {}),
    (fields.read_money, (), {"allow_zero": True}),
    (fields.read_bool, (), {}),
    (fields.read_enum, (["a", "b"],), {}),
    (fields.read_date, (), {}),
    (fields.read_strings, (), {}),
    (fields.read_objects, (), {}),
]


@pytest.mark.parametrize("value", NASTY, ids=_label)
def test_lookups_raise_only_tool_errors_that_are_valid_json(value: Any) -> None:
    state = {"vendors": {"VEN-001": {"id": "VEN-001"}}}
    for call in (
        lambda: w.records.require_record(state, "vendors", value),
        lambda: w.records.check_references(state, {"vendorId": value}, {"vendorId": "vendors"}),
        lambda: w.tools.paginate([1, 2, 3], {"limit": value, "offset": value}),
    ):
        try:
            call()
        except silo.ToolError as error:
            json.dumps(error.to_output(), allow_nan=False)
            assert error.code in ("not_found", "invalid_input")


@pytest.mark.parametrize("value", NASTY, ids=_label)
def test_readers_raise_only_tool_errors_that_are_valid_json(value: Any) -> None:
    for reader, args, kwargs in READERS:
        try:
            got = reader({"x": value}, "x", *args, **kwargs)
        except silo.ToolError as error:
            json.dumps(error.to_output(), allow_nan=False)  # always writable, never NaN
            assert error.code == "invalid_input"
        else:
            json.dumps(got, allow_nan=False)
            if isinstance(got, int | float) and not isinstance(got, bool):
                assert abs(got) <= w.fields.MAX_INTEGER
