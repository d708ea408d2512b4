"""Input validation: Silo's message format, every violation, fast path agreeing with jsonschema."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import silo_async as silo
from silo_async._input import InputRejectedError, copy_input
from silo_async._schema import NOT_FLAT, SchemaValidator

OPP = {
    "type": "object",
    "properties": {"opportunityId": {"type": "string"}},
    "required": ["opportunityId"],
    "additionalProperties": False,
}

NESTED = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 500},
        "status": {"enum": ["open", "won", "lost"]},
        "owner": {
            "type": "object",
            "properties": {"id": {"type": "string"}, "team": {"type": ["string", "null"]}},
            "required": ["id"],
            "additionalProperties": False,
        },
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"qty": {"type": "number"}, "sku": {"type": "string"}},
                "required": ["qty"],
                "additionalProperties": False,
            },
            "maxItems": 3,
        },
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "flag": {"const": True},
        "mixed": {"enum": [1, "one", None]},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def test_design_example_message_is_exact() -> None:
    v = SchemaValidator(OPP, "get_opportunity")
    assert v.problems({"opportunityID": "OPP-004"}) == [
        '"opportunityId" is required',
        '"opportunityID" is not a parameter; expected one of: opportunityId',
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({}, ['"name" is required']),
        ({"name": 3}, ['"name" must be string, received number']),
        ({"name": "x", "limit": "10"}, ['"limit" must be integer, received string']),
        ({"name": "x", "limit": True}, ['"limit" must be integer, received boolean']),
        ({"name": None}, ['"name" must be string, received null']),  # required: null refused
        ({"name": "x", "limit": 0}, ['"limit" must be >= 1, received 0']),
        ({"name": "x", "status": "pending"}, ['"status" must be one of: open, won, lost']),
        ({"name": "x", "owner": {}}, ['"owner.id" is required']),
        (
            {"name": "x", "owner": {"id": "U1", "tema": "a"}},
            ['"owner.tema" is not a parameter; expected one of: id, team'],
        ),
        (
            {"name": "x", "lines": [{"qty": 1}, {"qty": "2"}]},
            ['"lines[1].qty" must be number, received string'],
        ),
        ({"name": "x", "lines": [{}]}, ['"lines[0].qty" is required']),
        (
            {"name": "x", "code": "abc"},
            ['"code" must match the pattern ^[A-Z]{3}$, received "abc"'],
        ),
        ({"name": "x", "flag": False}, ['"flag" must be true']),
        ({"name": "x", "mixed": 2}, ['"mixed" must be one of: 1, one, null']),
        ([], ["arguments must be an object, received array"]),
    ],
)
def test_messages(value: Any, expected: list[str]) -> None:
    assert SchemaValidator(NESTED, "t").problems(value) == expected


def test_every_violation_is_listed_in_silo_order() -> None:
    problems = SchemaValidator(NESTED, "t").problems(
        {"nme": "x", "limit": 0, "status": "x", "owner": {"team": 5}}
    )
    assert problems[0] == '"name" is required'
    assert problems[1].startswith('"nme" is not a parameter; expected one of: name, limit, status')
    assert set(problems[2:]) == {
        '"limit" must be >= 1, received 0',
        '"status" must be one of: open, won, lost',
        '"owner.id" is required',
        '"owner.team" must be string or null, received number',
    }


def test_no_parameters_schema_says_so() -> None:
    v = SchemaValidator({"type": "object", "additionalProperties": False}, "t")
    assert v.problems({"x": 1}) == ['"x" is not a parameter; this takes no parameters']


VALUES: list[Any] = [
    {"name": "a"},
    {"name": ""},
    {"name": "a", "limit": 1.0},
    {"name": "a", "limit": 1.5},
    {"name": "a", "limit": 501},
    {"name": "a", "status": "won", "mixed": 1},
    {"name": "a", "mixed": True},
    {"name": "a", "mixed": None},
    {"name": "a", "owner": {"id": "x", "team": None}},
    {"name": "a", "lines": [{"qty": 1, "sku": "s"}] * 4},
    {"name": "a", "lines": [{"qty": 1, "sku": 2}]},
    {"name": "a", "code": "ABC", "flag": True},
    {"name": "a", "flag": 1},
    {"name": "a", "extra": 1},
    "text",
    None,
]


@pytest.mark.parametrize("value", VALUES)
def test_fast_path_agrees_with_jsonschema(value: Any) -> None:
    fast = SchemaValidator(NESTED, "t")
    assert fast.is_valid(value) == Draft202012Validator(NESTED).is_valid(value)
    assert (fast.problems(value) == []) == fast.is_valid(value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {}},
        {"type": "object", "properties": {"a": {}}},
        {"type": "object", "properties": {"a": True, "b": {"items": {}}}, "required": []},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "integer"},
        },
        {},
        {"not": {"not": {}}},
    ],
)
def test_edge_schemas_compile_and_agree(schema: Any) -> None:
    v = SchemaValidator(schema, "t")
    values: list[Any] = [{}, {"a": "s"}, {"a": 1, "z": 2}, {"z": "s"}, [], None]
    for value in values:
        assert v.is_valid(value) == Draft202012Validator(v.schema).is_valid(value)


def test_unsupported_keywords_fall_back_to_jsonschema() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
        "$defs": {"x": {"type": "string"}},
    }
    v = SchemaValidator(schema, "t")
    assert v.is_valid({"a": 1}) and v.is_valid({"a": "s"})
    assert not v.is_valid({"a": 1.5})
    assert v.problems({"a": 1.5}) == ['"a" does not match any of the allowed forms']


def test_bad_schema_fails_at_definition_with_a_clear_error() -> None:
    with pytest.raises(
        silo.DefinitionError, match=r'Tool "broken" has an invalid input schema at properties/n'
    ):

        @silo.tool(
            name="broken", input_schema={"type": "object", "properties": {"n": {"type": "int"}}}
        )
        def broken(state: Any, args: Any) -> None: ...

    with pytest.raises(silo.DefinitionError, match="must be a JSON Schema object"):
        silo.tool(name="worse", input_schema=["nope"])(lambda s, a: None)  # type: ignore[call-overload]


# -- the one-pass copier of flat closed schemas ----------------------------------------------


FLAT = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": "^A-[0-9]+$"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 500},
        "ratio": {"type": "number", "exclusiveMaximum": 10},
        "status": {"enum": ["open", "won"]},
        "note": {"type": ["string", "null"], "maxLength": 5},
        "flag": {"type": "boolean"},
    },
    "required": ["id"],
    "additionalProperties": False,
}

_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**310), max_value=10**310),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(["open", "won", "A-1", "A-x", "lost"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
_inputs = st.one_of(
    st.dictionaries(
        st.sampled_from(["id", "limit", "ratio", "status", "note", "flag", "other"]), _values
    ),
    _values,
)


def _slow(validator: SchemaValidator, value: object) -> object:
    try:
        copied = copy_input(value)
    except InputRejectedError:
        return NOT_FLAT
    return copied if validator.predicate(copied) else NOT_FLAT


@settings(max_examples=200, deadline=None)
@given(_inputs)
def test_the_one_pass_copier_agrees_with_copy_then_check(value: object) -> None:
    validator = SchemaValidator(FLAT, "t")
    assert validator.copier is not None
    fast = validator.copier(value)
    slow = _slow(validator, value)
    if fast is not NOT_FLAT:
        assert slow is not NOT_FLAT and fast == slow and fast is not value
        assert isinstance(fast, dict) and isinstance(slow, dict)
        assert [type(v) for v in fast.values()] == [type(v) for v in slow.values()]
    elif isinstance(value, dict) and all(
        type(v) in (str, int, float, bool, type(None)) for v in value.values()
    ):
        assert slow is NOT_FLAT  # a flat input the copier refused is refused by the slow path too


def test_only_flat_closed_schemas_get_a_copier() -> None:
    assert SchemaValidator(FLAT, "t").copier is not None
    open_schema = {**FLAT, "additionalProperties": True}
    nested = {**FLAT, "properties": {"lines": {"type": "array", "items": {"type": "string"}}}}
    untyped = {**FLAT, "properties": {"x": {"description": "anything"}}}
    for schema in (open_schema, nested, untyped):
        assert SchemaValidator(schema, "t").copier is None
