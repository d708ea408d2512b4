"""State diff: Silo's shape, with removed keys, nulls and type changes reported."""

from __future__ import annotations

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
