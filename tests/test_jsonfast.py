"""The JSON fast paths give the very bytes of their readable references (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from silo_async._jsonfast import FastPathError, compact, pretty
from silo_async._jsonutil import compact_json, compact_reference, pretty_json, pretty_reference

#: Exactly what JSON holds: the data every run directory's documents are made of.
_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from([-0.0, 1e16, 1e-7, 5e-324, "\ud83d", "\u2028", "\x7f", "é\x00"])
)
_JSON = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=40,
)


class _Opaque:
    def __str__(self) -> str:
        return "<opaque>"


class _Dict(dict[str, Any]):
    pass


#: What JSON-like data also holds, which the fast path leaves to the reference.
_ODD = st.recursive(
    _JSON_SCALARS
    | st.sampled_from([float("nan"), float("inf"), _Opaque()])
    | st.builds(lambda: 10**5000)  # too long to print (hypothesis cannot show it either)
    | st.builds(lambda: _Dict(a=1)),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text() | st.integers() | st.none(), inner, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(_JSON)
def test_the_fast_pretty_path_writes_the_references_bytes_for_any_json(value: Any) -> None:
    fast = pretty(value)  # JSON data never leaves the fast path
    assert fast == pretty_reference(value)
    assert fast == json.dumps(value, indent=2, ensure_ascii=False) + "\n"


@settings(max_examples=300, deadline=None)
@given(_ODD)
def test_what_the_fast_path_declines_the_reference_writes(value: Any) -> None:
    try:
        fast = pretty(value)
    except FastPathError:
        fast = None
    if fast is not None:
        assert fast == pretty_reference(value)
    assert pretty_json(value) == pretty_reference(value)


def test_deep_or_circular_data_goes_to_the_reference() -> None:
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(FastPathError):
        pretty(deep)
    with pytest.raises(ValueError, match="nested too deeply"):
        pretty_json(deep)


@settings(max_examples=500, deadline=None)
@given(_JSON)
def test_the_fast_compact_path_writes_the_references_bytes_for_any_json(value: Any) -> None:
    fast = compact(value)
    assert fast == compact_reference(value)
    assert fast == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@settings(max_examples=300, deadline=None)
@given(_ODD)
def test_what_the_fast_compact_path_declines_the_reference_writes(value: Any) -> None:
    try:
        fast = compact(value)
    except FastPathError:
        fast = None
    if fast is not None:
        assert fast == compact_reference(value)
    assert compact_json(value) == compact_reference(value)
