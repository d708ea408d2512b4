"""Validating task families (DESIGN.md section 18): ``check_environment`` and ``env validate``.

Every family is checked on its first N distinct instances from seed 0; each way a family can be
wrong is one ``family_invalid`` finding naming the family and the first seed showing it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async.testing import check_environment

from .cli_support import cli
from .family_worlds import SET_TIER, environment, sample_tier

pytestmark = pytest.mark.anyio


def family(**overrides: Any) -> silo.TaskFamily:
    """A sound family (set-tier) with some fields replaced."""
    fields: dict[str, Any] = {
        "id": "probe",
        "title": "t",
        "sample": sample_tier,
        "instruction": lambda p: f"Move {p['name']} to {p['tier']}.",
        "gold": SET_TIER.gold,
    }
    return silo.TaskFamily(**{**fields, **overrides})


async def findings(probe: silo.TaskFamily, instances: int = 5) -> list[tuple[str, str, str]]:
    report = await check_environment(environment(probe), instances=instances)
    return [(f.level, f.code, f.message) for f in report.findings]


async def test_a_sound_family_has_no_finding() -> None:
    assert await findings(family()) == []
    report = await check_environment(environment(family()), instances=5)
    assert report.ok


def _raises(world: Any, rng: random.Random) -> dict[str, Any]:
    return {"customer": world["nobody"]}


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            {"sample": _raises},
            'Task family "probe" (seed 0): the instance does not build: Task family "probe" '
            "(seed 0) sample() raised KeyError: 'nobody'",
        ),
        (
            {"sample": lambda world, rng: {"when": {1, 2}}},
            'Task family "probe" (seed 0): the instance does not build: Task family "probe" '
            "(seed 0) sample() returned params that are not JSON values: params.when is a set, "
            "not a JSON value.",
        ),
        (
            {"gold": lambda p: [silo.Call("set_tier", {"customerId": "C-404", "tier": "gold"})]},
            'Task family "probe" (seed 0): a gold call fails: Replayed call 1 of 1, set_tier '
            '{"customerId":"C-404","tier":"gold"}, answered an error: not_found: No customer '
            "C-404.",
        ),
        (
            {"gold": lambda p: 1 / 0},
            'Task family "probe" (seed 0): gold() fails: Task family "probe" (seed 0) gold() '
            "raised ZeroDivisionError: division by zero",
        ),
        (
            {"gold": lambda p: []},
            'Task family "probe" (seed 0): the gold solution changes nothing the comparison reads '
            "and no answer is asked, so an agent that does nothing passes; change the world or "
            "give answer=.",
        ),
        (
            {"ignore": ("customers",)},
            'Task family "probe" (seed 0): the gold solution changes nothing the comparison reads '
            "and no answer is asked, so an agent that does nothing passes; change the world or "
            "give answer=.",
        ),
        (
            {"checks": lambda final, initial, ctx, p: [silo.check("never", False)]},
            'Task family "probe" (seed 0): the gold agent does not pass it (failed: never).',
        ),
    ],
)
async def test_each_way_a_family_is_wrong_is_a_finding(
    overrides: dict[str, Any], expected: str
) -> None:
    assert await findings(family(**overrides)) == [("error", "family_invalid", expected)]


async def test_alike_instructions_name_the_first_seed_repeating_another() -> None:
    found = await findings(family(instruction=lambda p: "Fix a customer's tier."))
    assert found == [
        (
            "error",
            "family_invalid",
            'Task family "probe" (seed 1): the instructions are alike: 1 distinct among 5 '
            "instances (at least 5 needed); seed 1 is worded as seed 0.",
        )
    ]


async def test_the_first_seed_showing_a_defect_is_named() -> None:
    def gold(p: dict[str, Any]) -> list[silo.Call]:
        if p["customerId"] == "C-3":
            return [silo.Call("set_tier", {"customerId": "C-3", "tier": "nope"})]
        return list(SET_TIER.gold(p))

    env = environment(family(gold=gold))
    first = next(
        seed
        for seed in range(100)
        if (env.task(f"probe#{seed}").params or {})["customerId"] == "C-3"
    )
    [(level, code, message)] = await findings(family(gold=gold), instances=14)
    assert (level, code) == ("error", "family_invalid")
    assert message.startswith(f'Task family "probe" (seed {first}): a gold call fails: ')


async def test_too_few_distinct_instances_is_a_warning() -> None:
    found = await findings(family(), instances=20)  # 7 customers x 2 other tiers: 14
    assert found == [
        (
            "warning",
            "family_invalid",
            'Task family "probe" has 14 distinct instances among seeds 0 to 1999, fewer than the '
            "20 checked (--instances).",
        )
    ]


async def test_instances_must_be_positive() -> None:
    with pytest.raises(ValueError, match="instances must be a whole number >= 1"):
        await check_environment(environment(), instances=0)


def test_env_validate_checks_the_families_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert cli("init", "crm", "--template", "crm").exit_code == 0
    good = cli("env", "validate", "--env", "crm", "--instances", "3", "--json")
    assert good.exit_code == 0, good.output
    registry = tmp_path / ".silo" / "environments" / "crm" / "families" / "__init__.py"
    registry.write_text(
        registry.read_text()
        + "\nfamilies.append(silo.TaskFamily(id='same', title='t', sample=lambda w, r: {'n': "
        "r.randint(1, 9**9)}, instruction=lambda p: 'Same words.', gold=lambda p: [], "
        "answer=lambda p: str(p['n'])))\n"
    )
    bad = cli("env", "validate", "--env", "crm", "--instances", "3")
    assert bad.exit_code == 1
    assert (
        'ERROR\tfamily_invalid\tTask family "same" (seed 1): the instructions are alike: 1 '
        "distinct among 3 instances (at least 3 needed); seed 1 is worded as seed 0."
    ) in bad.stdout.splitlines()


@pytest.mark.parametrize(
    ("vary", "fragment"),
    [
        (lambda world, rng: world["customers"].pop("C-7"), "customers: removes the record C-7"),
        (lambda world, rng: world.update(extra=1), "adds the key extra"),
        (
            lambda world, rng: world["customers"]["C-2"].pop("tier"),
            "customers.C-2: removes the field tier",
        ),
    ],
)
async def test_a_vary_that_changes_the_worlds_shape_is_a_finding(vary: Any, fragment: str) -> None:
    report = await check_environment(environment(family(), vary=vary), instances=3)
    messages = [f.message for f in report.findings if f.code == "family_invalid"]
    assert any(
        m.startswith("vary changes the world's shape for instance probe#0 (seed 0): ")
        and fragment in m
        for m in messages
    ), messages


async def test_a_vary_that_changes_values_only_passes() -> None:
    def vary(world: dict[str, Any], rng: random.Random) -> None:
        for customer in world["customers"].values():
            customer["name"] = f"{customer['name']} {rng.randint(1, 99)}"

    report = await check_environment(environment(family(), vary=vary), instances=5)
    assert report.ok, report.to_dict()
