"""JSON helpers: the shared compact encoder, strict equality and world snapshots."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silo_async._jsonutil import Packed, changes, compact_json, json_equal, pack, pretty_json, thaw


class _Opaque:
    def __str__(self) -> str:
        return "<opaque>"


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        'naïve ☃ \n "quoted" \\ \u2028',
        0,
        -12,
        10**30,
        1.5,
        1e-7,
        True,
        None,
        [],
        {},
        {"b": [1, {"c": None}], "a": (1, 2), "é": "ü"},
        {"obj": _Opaque(), "nested": [_Opaque()]},
    ],
)
def test_compact_json_matches_the_standard_library(value: Any) -> None:
    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    assert compact_json(value) == expected


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.builds(lambda: 10**5000)  # too long to print: written as null
    | st.sampled_from([-0.0, "\ud83d", "\u2028", _Opaque()])
)
_KEYS = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
_DATA = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(_KEYS, inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_DATA)
def test_pretty_json_writes_what_the_standard_library_writes(value: Any) -> None:
    # The fast encoder's output, or its hand-over to json.dumps for whatever it does not take
    # (tuples, non-string keys, NaN, unknown objects, unprintable integers).
    options: dict[str, Any] = {"indent": 2, "ensure_ascii": False, "default": str}
    try:
        expected = json.dumps(value, allow_nan=False, **options)
    except ValueError:  # strict JSON: what JSON cannot hold is written as null
        expected = pretty_json_of_finite(value, options)
    assert pretty_json(value) == expected + "\n"


def pretty_json_of_finite(value: Any, options: dict[str, Any]) -> str:
    """What the standard library writes of ``value`` with NaN, ±Infinity, huge ints as null."""
    from silo_async._jsonutil import _finite

    return json.dumps(_finite(value), **options)


def test_pretty_json_rejects_a_circular_structure_with_a_value_error() -> None:
    loop: list[Any] = []
    loop.append({"me": loop})
    with pytest.raises(ValueError, match="Circular reference"):
        pretty_json(loop)
    expected = '{\n  "ok": [\n    1,\n    {}\n  ],\n  "e": []\n}\n'
    assert pretty_json({"ok": [1, {}], "e": []}) == expected  # and the encoder still works


def test_compact_json_rejects_a_circular_structure_with_a_value_error() -> None:
    loop: dict[str, Any] = {}
    loop["me"] = loop
    with pytest.raises(ValueError, match="Circular reference"):
        compact_json(loop)
    assert compact_json({"ok": [1]}) == '{"ok":[1]}'  # the shared encoder still works


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"a": 1, "b": "x"}, {"b": "x", "a": 1}, True),
        ({"a": 1}, {"a": 1.0}, False),
        ({"a": True}, {"a": 1}, False),
        ({"a": "1"}, {"a": 1}, False),
        ({"a": None}, {"b": None}, False),
        ({"a": [1, (2, {"c": 3})]}, {"a": ([1, [2, {"c": 3}]])}, True),
        ({"a": [1]}, {"a": {"0": 1}}, False),
        ({"a": [1, 2]}, {"a": [1]}, False),
        ({"a": float("nan")}, {"a": float("nan")}, False),  # distinct NaN objects
        ([{"id": "A", "tags": []}], [{"id": "A", "tags": []}], True),
    ],
)
def test_json_equal(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal


@pytest.mark.parametrize(
    "world",
    [
        {"rows": [{"id": "A", "n": 1.5, "ok": True, "tags": ("x",)}], "blob": b"\x00", "s": {1}},
        {"rows": [{"id": "A", "obj": _Opaque()}]},  # not plain data: deep-copied instead
    ],
)
def test_snapshot_thaws_fresh_copies_of_the_world_as_it_was(world: dict[str, Any]) -> None:
    snapshot = pack(world)
    before = repr(world)
    world["rows"][0]["id"] = "changed"
    world["rows"].append({"id": "B"})
    first, second = thaw(snapshot), thaw(snapshot)
    assert first is not second and first["rows"] is not second["rows"]
    first["rows"].clear()
    assert len(second["rows"]) == 1 and second["rows"][0]["id"] == "A"
    if "obj" not in before:
        assert repr(second) == before  # plain data comes back exactly, tuples and all


def unchanged(snapshot: Packed, world: Any) -> set[Any]:
    """The top-level keys of a dict world that :func:`changes` finds still exactly as packed."""
    found = changes(snapshot, world)
    if found is None:
        return set()
    assert isinstance(snapshot, dict)
    return {key for key in world if key in snapshot and key not in found[1]}


def test_snapshot_lists_the_top_level_keys_left_exactly_as_they_were() -> None:
    world: dict[str, Any] = {
        "rows": [{"id": "A", "n": 1}],
        "count": 1,
        "flag": True,
        "gone": [],
        "same": {"x": [1, 2]},
    }
    snapshot = pack(world)
    assert unchanged(snapshot, world) == set(world)
    world["rows"][0]["n"] = 2
    world["count"] = 1.0  # equal in Python, not in JSON
    world["flag"] = 1
    del world["gone"]
    world["new"] = 5
    assert unchanged(snapshot, world) == {"same"}
    assert unchanged(snapshot, [world]) == set()  # not the dict it was
    assert unchanged(pack([1, 2]), [1, 2]) == set()  # only dict worlds are split by key
    assert unchanged(pack({"obj": _Opaque()}), {"obj": _Opaque()}) == set()
