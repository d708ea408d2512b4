"""State diff: Silo's shape, with removed keys, nulls and type changes reported."""

from __future__ import annotations

from typing import Any

from silo_async import state_diff


def test_collections_keyed_by_string_id_and_index() -> None:
    before = {
        "orders": {"O1": {"n": 1}, "O2": {"n": 2}},
        "audit": [{"id": "A1"}, {"id": "A2"}],
        "numbers": [1, 2],
        "seq": {"AUD": 2},
    }
    after = {
        "orders": {"O1": {"n": 1}, "O3": {"n": 3}, "O2": {"n": 5}},
        "audit": [{"id": "A1"}, {"id": "A2"}, {"id": "A3"}],
        "numbers": [1, 2, 3],
        "seq": {"AUD": 3},
    }
    assert state_diff(before, after) == {
        "scalars": [],
        "collections": {
            "orders": {
                "added": ["O3"],
                "removed": [],
                "changed": ["O2"],
                "fields": {"O2": [{"path": "n", "from": 2, "to": 5}]},
            },
            "audit": {"added": ["A3"], "removed": [], "changed": []},
            "numbers": {"added": ["2"], "removed": [], "changed": []},
            "seq": {
                "added": [],
                "removed": [],
                "changed": ["AUD"],
                "fields": {"AUD": [{"path": "", "from": 2, "to": 3}]},
            },
        },
    }


def test_scalars_including_silo_blind_spots() -> None:
    before = {"now": "09:00", "gone": 1, "nulled": "x", "retyped": 5, "same": {"a": 1, "b": 2}}
    after = {
        "now": "10:00",
        "nulled": None,
        "retyped": {"v": 5},
        "same": {"b": 2, "a": 1},
        "new": True,
    }
    assert state_diff(before, after) == {
        "scalars": [
            {"field": "now", "from": "09:00", "to": "10:00"},
            {"field": "nulled", "from": "x", "to": None},
            {"field": "retyped", "from": 5, "to": {"v": 5}},
            {"field": "new", "to": True},
            {"field": "gone", "from": 1},
        ],
        "collections": {},
    }


def test_types_matter_but_key_order_does_not() -> None:
    before = {"flags": {"a": {"x": 1, "y": True}}}
    assert state_diff(before, {"flags": {"a": {"y": True, "x": 1}}}) == {
        "scalars": [],
        "collections": {},
    }
    changed = state_diff(before, {"flags": {"a": {"x": True, "y": True}}})
    assert changed["collections"]["flags"]["changed"] == ["a"]


def test_collection_removed_rows() -> None:
    diff = state_diff({"items": [{"id": "I1"}, {"id": "I2"}]}, {"items": [{"id": "I2"}]})
    assert diff["collections"]["items"] == {"added": [], "removed": ["I1"], "changed": []}


def test_diff_values_are_copies() -> None:
    after = {"v": {"deep": [1]}}
    diff = state_diff({"v": 1}, after)
    after["v"]["deep"].append(2)
    assert diff["scalars"][0]["to"] == {"deep": [1]}


def test_a_large_collection_packed_row_by_row_diffs_as_a_whole_one_does() -> None:
    """Rows packed one by one (256+): only changed rows are read again, the diff is the same."""
    from silo_async._diff import pack_diff, unpack_diff
    from silo_async._jsonutil import ROWS_FROM, changes, compact_json, pack

    rows = {f"R{n:04d}": {"id": f"R{n:04d}", "n": n, "tags": ["a"]} for n in range(ROWS_FROM + 50)}
    before: dict[str, Any] = {"rows": rows, "small": {"S1": {"v": 1}}, "count": 1}
    packed = pack(before)
    assert isinstance(packed, dict) and isinstance(packed["rows"], dict)  # row by row
    copied = {"rows": {k: dict(v) for k, v in rows.items()}, "small": {"S1": {"v": 1}}, "count": 1}
    assert changes(packed, copied) == ({}, {})  # equal data, other objects: nothing changed
    after: dict[str, Any] = {
        "rows": {k: dict(v) for k, v in rows.items()},
        "small": {"S1": {"v": 1}},
        "count": 2,
    }
    after["rows"]["R0007"]["n"] = -7
    after["rows"]["R0009"] = {"n": 9, "tags": ["a"], "id": "R0009"}  # same JSON, keys reordered
    del after["rows"]["R0003"]
    after["rows"]["R9999"] = {"id": "R9999", "n": 0, "tags": []}
    found = changes(packed, after)
    assert found is not None
    old, new = found
    assert sorted(old["rows"]) == ["R0003", "R0007", "R0009"]  # only rows that may differ
    assert sorted(new["rows"]) == ["R0007", "R0009", "R9999"]
    assert "small" not in old and "small" not in new
    assert unpack_diff(pack_diff(old, new)) == compact_json(state_diff(before, after))
