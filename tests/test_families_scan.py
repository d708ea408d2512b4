"""Splits and scans (DESIGN.md section 18): which instances an eval of a family plays.

A scan takes the first N distinct instances (distinct params) of a split from seed K upward,
skipping seeds without an instance, looking at no more than 100 x N seeds. Splits go by the
params' content, so train and test never share an instance.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import silo_async as silo

from .family_worlds import COUNT, SET_TIER, environment, sample_tier

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), JSON, max_size=4), st.randoms(use_true_random=False))
def test_splits_never_share_an_instance(params: dict[str, Any], rng: random.Random) -> None:
    """The split is a function of the params' content: key order, the seed and the family's
    wording cannot move an instance to the other split."""
    keys = list(params)
    rng.shuffle(keys)
    shuffled = {k: params[k] for k in keys}
    first = silo.TaskFamily(
        id="probe",
        title="t",
        sample=lambda world, r: params,
        instruction=lambda p: "a",
        gold=lambda p: [],
    )
    second = silo.TaskFamily(
        id="probe",
        title="t",
        sample=lambda world, r: shuffled,
        instruction=lambda p: "b",
        gold=lambda p: [],
    )
    one = silo.Environment(name="a", create_state=dict, families=[first]).task("probe#0")
    other = silo.Environment(name="b", create_state=dict, families=[second]).task(
        f"probe#{rng.randint(1, 99)}"
    )
    assert silo.split_of(one) == silo.split_of(other) in ("train", "test")


#: Many distinct instances, a few repeated params (seeds drawing the same number).
PICK = silo.TaskFamily(
    id="pick",
    title="Pick a number",
    sample=lambda world, rng: {"n": rng.randint(1, 40)},
    instruction=lambda p: f"Say {p['n']}.",
    gold=lambda p: [],
    answer=lambda p: str(p["n"]),
)


def test_a_scan_takes_the_first_distinct_instances_of_its_split() -> None:
    env = environment(PICK)
    test = env.instances("pick", 3, split="test")
    train = env.instances("pick", 5, split="train", start=4)
    assert [silo.split_of(t) for t in test] == ["test"] * 3
    assert [silo.split_of(t) for t in train] == ["train"] * 5
    assert all((t.seed or 0) >= 4 for t in train)
    params = [json.dumps(dict(t.params or {}), sort_keys=True) for t in train]
    assert len(set(params)) == 5
    # The first ones: no earlier seed of the split with new params was passed over.
    seen: set[str] = set()
    expected = []
    for seed in range(4, 200):
        task = env.task(f"pick#{seed}")
        key = json.dumps(dict(task.params or {}), sort_keys=True)
        if key not in seen:
            seen.add(key)
            if silo.split_of(task) == "train":
                expected.append(task.id)
    assert [t.id for t in train] == expected[:5]


def test_a_scan_skips_seeds_without_an_instance() -> None:
    def sample(world: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        if rng.random() < 0.5:
            raise silo.NoInstance("a coin said no")
        return sample_tier(world, rng)

    family = silo.TaskFamily(
        id="sometimes", title="t", sample=sample, instruction=lambda p: "x", gold=SET_TIER.gold
    )
    found = environment(family).instances("sometimes", 4, split="train")
    assert len(found) == 4
    assert len({t.params["customerId"] + t.params["tier"] for t in found if t.params}) == 4


def test_too_few_instances_is_task_not_found_naming_family_split_and_count() -> None:
    env = environment(COUNT)  # three tiers: three distinct instances at most
    with pytest.raises(silo.SiloError) as info:
        env.instances("count-tier", 4, split="train")
    assert info.value.code == "task_not_found"
    message = info.value.message
    assert (
        'Task family "count-tier"' in message
        and "train" in message
        and "the 4 asked for" in message
    )
    assert "among seeds 0 to 399" in message
    details = info.value.details
    assert (details["family"], details["split"], details["count"]) == ("count-tier", "train", 4)
    assert details["found"] < 4


def test_a_scan_of_an_unknown_family_or_with_bad_arguments_is_refused() -> None:
    env = environment()
    with pytest.raises(silo.SiloError, match='no task family "nope"'):
        env.instances("nope", 1)
    with pytest.raises(ValueError, match="split must be one of train, test"):
        env.instances("set-tier", 1, split="dev")
    with pytest.raises(ValueError, match="count must be a whole number >= 1"):
        env.instances("set-tier", 0)
    with pytest.raises(ValueError, match="start must be a whole number >= 0"):
        env.instances("set-tier", 1, start=-1)


def test_train_and_test_scans_never_share_an_instance_from_any_start() -> None:
    # A seeded loop over many starts and counts: a family with repeated params (seeds drawing
    # the same number) must still keep each params' every seed in one split.
    env = environment(PICK)
    split_by_params: dict[str, set[str | None]] = {}
    for seed in range(400):
        task = env.task(f"pick#{seed}")
        key = json.dumps(dict(task.params or {}), sort_keys=True)
        split_by_params.setdefault(key, set()).add(silo.split_of(task))
    assert all(len(splits) == 1 for splits in split_by_params.values())
    rng = random.Random(30)
    for _ in range(25):
        start, count = rng.randrange(0, 200), rng.randint(1, 3)
        test = env.instances("pick", count, split="test", start=start)
        train = env.instances("pick", rng.randint(1, 30), split="train", start=start)
        test_params = {json.dumps(dict(t.params or {}), sort_keys=True) for t in test}
        train_params = {json.dumps(dict(t.params or {}), sort_keys=True) for t in train}
        assert not test_params & train_params
        assert not {t.id for t in test} & {t.id for t in train}
