"""silo_async.world seeding, money and grading helpers."""

from __future__ import annotations

import json
import random
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest

from silo_async import world as w


def _data(tmp_path: Path, **files: Any) -> Path:
    for name, content in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(content), encoding="utf-8")
    return tmp_path


def _seed_dir(tmp_path: Path) -> Path:
    return _data(
        tmp_path,
        users=[{"id": "USR-001", "teamId": "T-1"}, {"id": "USR-002", "teamId": None}],
        teams=[{"id": "T-1", "memberIds": ["USR-001", "USR-002"]}],
        orders=[{"id": "SO-001", "lines": [{"userId": "USR-002"}, {"userId": "USR-001"}]}],
        auditLog=[{"id": "AUD-0001"}],
        clock={"now": "2026-03-16T09:00:00Z"},
        sequences={"USR": 2, "SO": 1, "AUD": 1},
    )


REFS: list[w.records.Reference] = [
    ("users", "teamId", "teams"),
    ("teams", "memberIds", "users"),
    ("orders", "lines.userId", "users"),
]


def test_seed_layout_and_independent_clones(tmp_path: Path) -> None:
    seed = w.Seed(_seed_dir(tmp_path), references=REFS)
    world = seed.clone()
    assert list(world["users"]) == ["USR-001", "USR-002"]
    assert world["auditLog"] == [{"id": "AUD-0001"}]  # lists stay lists
    assert world["clock"] == {"now": "2026-03-16T09:00:00Z"}
    world["users"]["USR-001"]["teamId"] = "changed"
    assert seed.clone()["users"]["USR-001"]["teamId"] == "T-1"


def test_seed_key_order(tmp_path: Path) -> None:
    directory = _seed_dir(tmp_path)
    assert list(w.Seed(directory).clone()) == [
        "auditLog", "clock", "orders", "sequences", "teams", "users"
    ]  # fmt: skip
    ordered = w.Seed(directory, order=["clock", "users"]).clone()
    assert list(ordered) == ["clock", "users", "auditLog", "orders", "sequences", "teams"]
    with pytest.raises(w.records.SeedError, match=r"No data/stock\.json"):
        w.Seed(directory, order=["stock"]).clone()


def test_seed_is_parsed_once_per_process(tmp_path: Path) -> None:
    calls: list[int] = []

    def build(world: dict[str, Any]) -> None:
        calls.append(1)
        world["derived"] = len(world["users"])

    directory = _seed_dir(tmp_path)
    first = w.Seed(directory, build=build)
    assert first.clone()["derived"] == 2
    first.clone()
    w.Seed(directory, build=build).clone()  # a re-imported module builds the same seed
    assert calls == [1]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"users": [{"id": "USR-001", "teamId": "T-9"}], "teams": [{"id": "T-1"}]},
         "data/users.json: USR-001.teamId names T-9, which is not in data/teams.json."),
        ({"users": [{"id": "USR-001", "teamId": None}], "teams": [{"id": "T-1",
          "memberIds": ["USR-404"]}]},
         "data/teams.json: T-1.memberIds names USR-404, which is not in data/users.json."),
        ({"users": [{"id": "USR-001"}, {"id": "USR-001"}], "teams": []},
         "data/users.json: id USR-001 appears twice."),
        ({"users": [{"id": "USR-007"}], "teams": [], "sequences": {"USR": 3}},
         "data/sequences.json: USR is 3 but data/users.json already uses USR-007."),
    ],
)  # fmt: skip
def test_broken_seeds_fail_naming_the_record(
    tmp_path: Path, files: dict[str, Any], message: str
) -> None:
    seed = w.Seed(_data(tmp_path, **files), references=REFS[:2])
    with pytest.raises(w.records.SeedError) as caught:
        seed.clone()
    assert str(caught.value) == message


def test_round_half_up_is_the_one_rounding() -> None:
    assert w.amounts.round_half_up(1.005) == 1.01
    assert w.amounts.round_half_up(2.675) == 2.68
    assert w.amounts.round_half_up(-2.5, 0) == -3
    assert w.amounts.round_half_up(0.125, 2) == 0.13
    assert w.amounts.round_half_up(12.25, 1) == 12.3
    assert w.amounts.round_half_up(1e300) == 1e300
    assert w.amounts.to_money(746500.0) == 746500
    assert type(w.amounts.to_money(746500.0)) is int
    assert w.amounts.sum_money([0.1] * 3) == 0.3
    assert 3 * 1.005 < 3.015  # why products are computed on the decimal texts
    assert w.amounts.multiply_money(1.005, 3) == 3.02
    assert w.amounts.multiply_money(19.99, 0.21) == 4.2
    assert w.amounts.multiply_money(2, 50) == 100
    assert type(w.amounts.multiply_money(2, 50)) is int
    assert w.amounts.percent(1, 3) == 33.3
    assert w.amounts.percent(1, 0) is None
    with pytest.raises(ValueError):
        w.amounts.round_half_up(float("nan"))


def _decimal_money(value: Any) -> Any:
    """to_money as it was before its fast path: always through the decimal text."""
    exact = Decimal(repr(value))
    if abs(exact) < 2**53:
        exact = exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    rounded = float(exact)
    return int(rounded) if rounded.is_integer() else rounded


def test_money_fast_path_agrees_with_the_decimal_texts() -> None:
    # Whole-cent amounts are summed and multiplied in integer cents; every result must be the
    # one the decimal texts give, type included (int for whole amounts).
    rng = random.Random(7)
    amounts: list[Any] = [0, -0.0, 0.1, 0.2, 0.3, 1.005, 2.675, -2.5, 19.99, 746500.0, 10**12,
                          0.1 + 0.2, 1e13, -1e13 + 0.01, 123456789.12, 2**53, 0.07]  # fmt: skip
    amounts += [rng.randint(-(10**8), 10**8) / 100 for _ in range(300)]
    amounts += [rng.randint(0, 10**9) / 1000 for _ in range(100)]
    amounts += [rng.randint(-500, 500) for _ in range(50)]
    for value in amounts:
        expected = _decimal_money(value)
        assert (w.amounts.to_money(value), type(w.amounts.to_money(value))) == (
            expected,
            type(expected),
        ), value
    for _ in range(300):
        group = rng.sample(amounts, rng.randint(1, 6))
        expected = _decimal_money(float(sum((Decimal(repr(v)) for v in group), Decimal(0))))
        got = w.amounts.sum_money(group)
        assert (got, type(got)) == (expected, type(expected)), group
        a, b = rng.choice(amounts), rng.choice([*amounts[:60], 3, 7, 0.21, 1.5, 12])
        exact = Decimal(repr(a)) * Decimal(repr(b))
        expected = _decimal_money(float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)))
        got = w.amounts.multiply_money(a, b)
        assert (got, type(got)) == (expected, type(expected)), (a, b)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("PO-204 is 1,250.50 USD, due 2026-03-16", [1250.5]),
        ("$48k and 1.2M and 3 million", [48000, 1_200_000, 3_000_000]),
        ("600 m of hose, two pallets", [600, 2]),
        ("STK-PRD-012-WH-001 holds -5 units", [-5]),
        ("1_000 and 2'500 and 3-5 days", [1000, 2500, 3, 5]),
        ("Twenty-one? no: twenty, or ninety nine", [21, 20, 99]),
    ],
)
def test_numbers_in(text: str, numbers: list[float]) -> None:
    assert w.grade.numbers_in(text) == numbers


def test_answer_helpers() -> None:
    text = "Cascade Électrique owes $12,150 on CINV-405; the last figure is 7."
    assert w.grade.states_number(text, 12150)
    assert not w.grade.states_number(text, 405)
    assert w.grade.final_number(text) == 7
    assert w.grade.final_number("nothing") is None
    assert (
        w.grade.few_numbers(text, 2)
        and not w.grade.few_numbers(text, 1)
        and not w.grade.few_numbers("", 3)
    )
    assert w.grade.mentions(text, "cascade electrique")
    assert not w.grade.mentions("Routing S10", "Routing S1")
    assert w.grade.mentions_id(text, "cinv-405")
    assert not w.grade.mentions_id("PO-2040", "PO-204")
    assert not w.grade.mentions_id("XPO-204", "PO-204")


def test_world_comparisons() -> None:
    initial: dict[str, Any] = {
        "a": {"A-1": {"id": "A-1", "v": 1}, "A-2": {"id": "A-2", "v": 2}},
        "log": [],
    }
    final = {
        "a": {"A-1": {"id": "A-1", "v": 1.0}, "A-3": {"id": "A-3", "v": 3}},
        "log": [{"id": "L-1", "v": 0}],
    }
    assert w.grade.changed_ids(final, initial, "a") == ["A-1", "A-2", "A-3"]
    assert w.grade.new_ids(final, initial, "a") == ["A-3"]
    assert w.grade.modified_ids(final, initial, "a") == ["A-1", "A-2"]
    assert w.grade.new_records(final, initial, "log") == [{"id": "L-1", "v": 0}]
    assert w.grade.unchanged(initial, json.loads(json.dumps(initial)))
    assert not w.grade.unchanged(final, initial)
    reordered = {
        "log": [],
        "a": {k: dict(reversed(list(v.items()))) for k, v in initial["a"].items()},
    }
    assert w.grade.unchanged(
        reordered, initial
    )  # key order aside (not byte-equal: compared by value)
    assert not w.grade.unchanged({**initial, "log": [{"v": 1}]}, initial)
    assert not w.grade.unchanged(
        {"a": {**initial["a"], "A-1": {"id": "A-1", "v": 1.0}}, "log": []}, initial
    )
    assert w.grade.find_by(initial, "a", "v", "2") == {"id": "A-2", "v": 2}
    assert w.grade.find_by(initial, "a", "v", "9") is None
