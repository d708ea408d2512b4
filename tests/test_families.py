"""Task families and their instances (DESIGN.md section 18): definitions, ids, the instance task.

An instance ``FAMILY#SEED`` is a pure function of environment, family and seed: one
``random.Random`` seeded with ``"<environment>/<family>#<seed>"`` serves ``vary`` then ``sample``.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

import pytest

import silo_async as silo

from .family_worlds import COUNT, SET_TIER, environment, sample_tier


def family(**overrides: Any) -> silo.TaskFamily:
    """``set-tier`` with some fields replaced."""
    fields: dict[str, Any] = {
        "id": "set-tier",
        "title": "Move a customer",
        "sample": sample_tier,
        "instruction": lambda p: f"Move {p['name']} to {p['tier']}.",
        "gold": lambda p: [
            silo.Call("set_tier", {"customerId": p["customerId"], "tier": p["tier"]})
        ],
    }
    return silo.TaskFamily(**{**fields, **overrides})


# --- definitions --------------------------------------------------------------------------------


def test_call_is_a_frozen_pair_with_its_own_copy_of_the_input() -> None:
    given = {"customerId": "C-1"}
    call = silo.Call("set_tier", given)
    given["customerId"] = "C-2"
    tool, input = call
    assert (tool, input) == ("set_tier", {"customerId": "C-1"})
    assert call == silo.Call("set_tier", {"customerId": "C-1"})
    assert call.to_dict() == {"tool": "set_tier", "input": {"customerId": "C-1"}}
    with pytest.raises(AttributeError):
        call.tool = "other"  # type: ignore[misc]


@pytest.mark.parametrize("bad", ["Set-Tier", "set_tier", "-x", "x-", "", "a b", "x#1"])
def test_a_family_id_is_lowercase_letters_digits_and_dashes(bad: str) -> None:
    with pytest.raises(silo.DefinitionError, match="lowercase letters, digits and '-'"):
        family(id=bad)


def test_a_family_needs_its_functions_and_dotted_ignore_paths() -> None:
    with pytest.raises(silo.DefinitionError, match="gold= must be a function"):
        family(gold=None)
    with pytest.raises(silo.DefinitionError, match="answer= must be a function"):
        family(answer="42")
    with pytest.raises(silo.DefinitionError, match="needs a non-empty title"):
        family(title=" ")
    with pytest.raises(silo.DefinitionError, match="not a dotted path"):
        family(ignore=("notes..text",))
    with pytest.raises(silo.DefinitionError, match="list of dotted paths"):
        family(ignore="notes")


def test_an_environment_refuses_duplicate_families_and_a_bad_vary() -> None:
    with pytest.raises(silo.DefinitionError, match='Task family id "set-tier" is declared twice'):
        environment(SET_TIER, family())
    with pytest.raises(silo.DefinitionError, match=r"not a silo\.TaskFamily"):
        environment(SET_TIER, "count-tier")  # type: ignore[arg-type]
    with pytest.raises(silo.DefinitionError, match="vary= must be a function"):
        environment(SET_TIER, vary=3)


def test_no_instance_is_an_exception_with_its_reason() -> None:
    exc = silo.NoInstance("no gold customer")
    assert isinstance(exc, Exception) and exc.reason == "no gold customer"


# --- instances ----------------------------------------------------------------------------------


def test_an_instance_is_a_task_of_its_environment() -> None:
    env = environment()
    task = env.task("set-tier#17")
    assert task.id == "set-tier#17"
    assert (task.family, task.seed, task.verifier_id) == ("set-tier", 17, "set-tier")
    assert (task.title, task.difficulty) == ("Move a customer to a tier", "easy")
    params = dict(task.params or {})
    assert task.instruction == f"Move {params['name']} to the {params['tier']} tier."
    assert task.to_dict() == {
        "id": "set-tier#17",
        "title": "Move a customer to a tier",
        "instruction": task.instruction,
        "verifierId": "set-tier",
        "difficulty": "easy",
        "family": "set-tier",
        "seed": 17,
        "params": params,
    }


def test_an_instance_is_a_pure_function_of_environment_family_and_seed() -> None:
    first, again = environment(), environment()
    ids = [f"set-tier#{seed}" for seed in range(40)]
    assert [first.task(i) for i in ids] == [again.task(i) for i in ids]
    assert len({first.task(i).instruction for i in ids}) > 5
    # The environment's name is part of the seed string: another name, other instances.
    other = environment(name="boutique")
    assert [first.task(i).params for i in ids] != [other.task(i).params for i in ids]


def test_the_rng_is_seeded_with_the_environment_family_and_seed_and_serves_vary_first() -> None:
    drawn: list[float] = []

    def vary(world: dict[str, Any], rng: random.Random) -> None:
        drawn.append(rng.random())

    probe = family(
        id="probe", sample=lambda world, rng: {"draw": rng.random()}, instruction=lambda p: "Draw."
    )
    env = environment(probe, vary=vary, name="shop")
    task = env.task("probe#3")
    expected = random.Random("shop/probe#3")
    assert drawn == [expected.random()]
    assert task.params == {"draw": expected.random()}


def test_vary_changes_the_instance_world_and_never_a_hand_written_task() -> None:
    def vary(world: dict[str, Any], rng: random.Random) -> None:
        for customer in world["customers"].values():
            customer["name"] = customer["name"].upper()

    hand = silo.Task("T-1", "Move Ada", "Move Ada Byrne to gold.", "VER-1")
    verifier = silo.verifier(id="VER-1", task_id="T-1")(
        lambda final, initial: [
            silo.check("Ada kept her name", final["customers"]["C-1"]["name"] == "Ada Byrne")
        ]
    )
    env = environment(SET_TIER, vary=vary, tasks=[hand], verifiers=[verifier])
    name = str((env.task("set-tier#0").params or {})["name"])
    assert name.isupper() and name in env.task("set-tier#0").instruction
    world, _ = env.fresh_world(env.task("set-tier#0"))
    assert all(c["name"].isupper() for c in world["customers"].values())
    plain, _ = env.fresh_world(hand)
    assert plain["customers"]["C-1"]["name"] == "Ada Byrne"


def test_params_are_read_only_and_kept_apart_from_the_callers() -> None:
    task = environment().task("set-tier#1")
    assert task.params is not None
    with pytest.raises(TypeError):
        task.params["tier"] = "x"  # type: ignore[index]
    with pytest.raises(AttributeError):
        task.seed = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    "task_id", ["set-tier#01", "set-tier#-1", "set-tier#x", "set-tier#", "set-tier#1.0"]
)
def test_a_malformed_seed_is_task_not_found(task_id: str) -> None:
    with pytest.raises(silo.SiloError) as info:
        environment().task(task_id)
    assert info.value.code == "task_not_found"
    assert "the seed 0 or digits without a leading zero" in info.value.message


def test_an_unknown_family_is_task_not_found_naming_the_families() -> None:
    with pytest.raises(silo.SiloError) as info:
        environment().task("nope#1")
    assert info.value.code == "task_not_found"
    assert (
        'no task family "nope". Families: count-tier, set-tier, tier-and-note.'
        in info.value.message
    )


def test_no_instance_is_task_not_found_naming_the_reason() -> None:
    def sample(world: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        raise silo.NoInstance("nobody is platinum")

    with pytest.raises(silo.SiloError) as info:
        environment(family(sample=sample)).task("set-tier#4")
    assert info.value.code == "task_not_found"
    assert 'family "set-tier" has no instance for seed 4 (nobody is platinum)' in info.value.message
    assert info.value.details["reason"] == "nobody is platinum"


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        (["C-1"], "returned a list"),
        ({"when": object()}, "params.when is a object"),
        ({"x": float("nan")}, "params.x is nan"),
        ({1: "a"}, "has the key 1"),
        ({"x": {"y": {1, 2}}}, "params.x.y is a set"),
    ],
)
def test_sample_must_return_a_dict_of_json_values(params: Any, fragment: str) -> None:
    env = environment(family(sample=lambda world, rng: params))
    with pytest.raises(silo.SiloError) as info:
        env.task("set-tier#2")
    assert info.value.code == "family_invalid"
    assert fragment in info.value.message
    assert info.value.details == {"family": "set-tier", "seed": 2}


def test_a_family_function_that_raises_is_family_invalid() -> None:
    env = environment(family(instruction=lambda p: p["missing"]))
    with pytest.raises(silo.SiloError) as info:
        env.task("set-tier#0")
    assert info.value.code == "family_invalid"
    assert "KeyError" in info.value.message


def test_a_hand_written_task_id_may_not_contain_a_hash() -> None:
    with pytest.raises(silo.SiloError) as info:
        silo.Task("TASK#1", "t", "i", "v")
    assert info.value.code == "task_invalid"
    with pytest.raises(silo.SiloError) as info:
        silo.Task.from_dict({"id": "a#b", "title": "t", "instruction": "i", "verifierId": "v"})
    assert info.value.code == "task_invalid"


def test_hand_written_tasks_keep_their_shape() -> None:
    task = silo.Task("T-1", "t", "i", "v")
    assert (task.family, task.seed, task.params) == (None, None, None)
    assert task.to_dict() == {
        "id": "T-1",
        "title": "t",
        "instruction": "i",
        "verifierId": "v",
        "difficulty": "unspecified",
    }


# --- splits -------------------------------------------------------------------------------------


def test_split_of_hashes_the_canonical_params() -> None:
    env = environment()
    seen = set()
    for seed in range(60):
        task = env.task(f"count-tier#{seed}")
        canonical = json.dumps(dict(task.params or {}), sort_keys=True, separators=(",", ":"))
        number = int.from_bytes(hashlib.sha256(canonical.encode("utf-8")).digest(), "big")
        assert silo.split_of(task) == ("test" if number % 10 == 0 else "train")
        seen.add(silo.split_of(task))
    assert silo.split_of(silo.Task("T-1", "t", "i", "v")) is None
    assert COUNT.id == "count-tier" and seen <= {"train", "test"}


# --- what is kept -------------------------------------------------------------------------------


@pytest.mark.parametrize(("compressed", "varied"), [(10**6, 5), (0, 15)])
def test_a_varied_world_let_go_is_inflated_or_rebuilt_the_same(
    monkeypatch: pytest.MonkeyPatch, compressed: int, varied: int
) -> None:
    import silo_async._instance as instances

    calls: list[int] = []

    def vary(world: dict[str, Any], rng: random.Random) -> None:
        calls.append(1)
        for customer in world["customers"].values():
            customer["name"] += f" {rng.randint(1, 10**6)}"

    monkeypatch.setattr(instances, "CACHED_WORLDS", 2)
    monkeypatch.setattr(instances, "COMPRESSED_WORLD_BYTES", compressed)
    env = environment(SET_TIER, vary=vary)
    tasks = [env.task(f"set-tier#{seed}") for seed in range(5)]
    first = [env.fresh_world(task)[0] for task in tasks]  # seeds 0-2 were let go meanwhile
    again = [env.fresh_world(task)[0] for task in tasks]
    assert first == again
    assert first[0] != first[1]
    # Kept compressed, a world is never built twice; with no room for it, it is built again.
    assert len(calls) == varied
    assert [(t.params or {})["name"] for t in tasks] == [
        w["customers"][(t.params or {})["customerId"]]["name"]
        for t, w in zip(tasks, first, strict=True)
    ]


def test_without_vary_every_instance_starts_from_one_world() -> None:
    made: list[int] = []

    def create_state() -> dict[str, Any]:
        made.append(1)
        world: dict[str, Any] = environment().create_state()
        return world

    env = silo.Environment(name="shop", create_state=create_state, families=[SET_TIER])
    for seed in range(20):
        env.fresh_world(env.task(f"set-tier#{seed}"))
    assert len(made) == 1
