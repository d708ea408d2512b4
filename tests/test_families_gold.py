"""Gold grading (DESIGN.md section 18): the final world against the world the gold calls reach.

One required check per record the gold changed (``<record id> matches the gold solution``, its
detail naming the first differing fields), ``nothing else changed`` naming up to five records,
ignored paths left out, then the answer, then the family's checks. A gold call that errs is an
environment fault. The machinery is public: ``ctx.replay(calls)`` and ``world.grade.matches``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import silo_async as silo
from silo_async import world as w
from silo_async.testing import ScriptedAgent, ScriptedCall, gold_agent

from .family_worlds import COUNT, SET_TIER, TIER_AND_NOTE, environment, noop, sample_tier

pytestmark = pytest.mark.anyio


def labels(result: silo.RunResult) -> list[tuple[str, bool, str]]:
    """The checks as (label, passed, detail)."""
    return [(c.label, c.passed, c.detail) for c in result.checks]


def params_of(env: silo.Environment, task_id: str) -> dict[str, Any]:
    """An instance's params as a plain dict."""
    return dict(env.task(task_id).params or {})


async def test_the_gold_solution_passes_with_one_check_per_record_it_changed() -> None:
    env = environment()
    p = params_of(env, "tier-and-note#5")
    agent = ScriptedAgent(
        [
            ScriptedCall("lookup", {"name": p["name"]}),
            ScriptedCall("set_tier", {"customerId": p["customerId"], "tier": p["tier"]}),
            ScriptedCall(
                "add_note", {"customerId": p["customerId"], "text": "Asked by the owner."}
            ),
        ]
    )
    result = await silo.run(env, "tier-and-note#5", agent)
    # State-diff order: "sequences" is a collection here, after "customers" and "notes".
    assert labels(result) == [
        (f"{p['customerId']} matches the gold solution", True, ""),
        ("N-1 matches the gold solution", True, ""),
        ("N matches the gold solution", True, ""),
        ("nothing else changed", True, ""),
    ]
    assert (result.passed, result.reward, result.reward_valid) == (True, 1.0, True)
    assert result.task.id == "tier-and-note#5" and result.verifier_id == "tier-and-note"


async def test_a_wrong_record_names_its_first_differing_fields() -> None:
    env = environment(SET_TIER)
    p = params_of(env, "set-tier#2")
    wrong = next(t for t in ("bronze", "silver", "gold") if t != p["tier"])
    initial = env.fresh_world(env.task("set-tier#2"))[0]["customers"][p["customerId"]]["tier"]
    if wrong == initial:
        wrong = next(t for t in ("bronze", "silver", "gold") if t not in (p["tier"], initial))
    agent = ScriptedAgent(
        [ScriptedCall("set_tier", {"customerId": p["customerId"], "tier": wrong})]
    )
    result = await silo.run(env, "set-tier#2", agent)
    assert labels(result) == [
        (
            f"{p['customerId']} matches the gold solution",
            False,
            f'tier: expected "{p["tier"]}", got "{wrong}"',
        ),
        ("nothing else changed", True, ""),
    ]
    assert not result.passed and result.reward == 0.5


async def test_nothing_else_changed_names_up_to_five_records_the_gold_left_alone() -> None:
    env = environment(SET_TIER)
    p = params_of(env, "set-tier#0")
    world = env.fresh_world(env.task("set-tier#0"))[0]
    others = [c for c in sorted(world["customers"]) if c != p["customerId"]]
    calls = [ScriptedCall("set_tier", {"customerId": p["customerId"], "tier": p["tier"]})]
    for customer in others:
        tier = "gold" if world["customers"][customer]["tier"] != "gold" else "bronze"
        calls.append(ScriptedCall("set_tier", {"customerId": customer, "tier": tier}))
    result = await silo.run(env, "set-tier#0", ScriptedAgent(calls))
    last = result.checks[-1]
    assert (last.label, last.passed) == ("nothing else changed", False)
    assert last.detail == (
        f"changed, and the gold solution leaves alone: {', '.join(others[:5])} (and 1 more)"
    )
    assert result.checks[0].passed


async def test_doing_nothing_fails_every_changed_record() -> None:
    result = await silo.run(environment(), "tier-and-note#1", noop)
    assert [c.passed for c in result.checks] == [False, False, False, True]
    assert "missing; the gold solution has it" in result.checks[1].detail
    assert not result.passed and result.reward_valid


async def test_ignored_paths_are_left_out_on_both_sides() -> None:
    env = environment(TIER_AND_NOTE)
    p = params_of(env, "tier-and-note#3")
    agent = ScriptedAgent(
        [
            ScriptedCall("add_note", {"customerId": p["customerId"], "text": "Anything at all."}),
            ScriptedCall("set_tier", {"customerId": p["customerId"], "tier": p["tier"]}),
        ]
    )
    result = await silo.run(env, "tier-and-note#3", agent)
    assert result.passed, labels(result)


async def test_the_answer_is_compared_as_told_compares() -> None:
    env = environment(COUNT)
    count = params_of(env, "count-tier#0")["count"]
    right = await silo.run(env, "count-tier#0", ScriptedAgent([], answer=f"There are {count}."))
    assert labels(right) == [
        ("nothing else changed", True, ""),
        (f'the answer states "{count}"', True, ""),
    ]
    assert right.passed
    wrong = await silo.run(env, "count-tier#0", ScriptedAgent([], answer=f"{count}0 of them"))
    assert not wrong.passed and wrong.checks[1].label == f'the answer states "{count}"'


async def test_extra_checks_come_last_with_the_params() -> None:
    seen: list[Mapping[str, Any]] = []

    def checks(
        final: Any, initial: Any, ctx: silo.VerifierContext, p: Mapping[str, Any]
    ) -> list[silo.Check]:
        seen.append(p)
        return [
            silo.optional("the agent looked the customer up first", "lookup" in ctx.agent_output)
        ]

    family = silo.TaskFamily(
        id="checked",
        title="t",
        sample=sample_tier,
        instruction=lambda p: "Do it.",
        gold=SET_TIER.gold,
        checks=checks,
        answer=lambda p: p["tier"],
    )
    env = environment(family)
    result = await silo.run(env, "checked#0", gold_agent)
    assert [c.label for c in result.checks][-2:] == [
        f'the answer states "{params_of(env, "checked#0")["tier"]}"',
        "the agent looked the customer up first",
    ]
    assert result.passed and result.reward < 1.0
    assert seen == [params_of(env, "checked#0")]


async def test_a_gold_call_that_errs_is_an_environment_fault(tmp_path: Path) -> None:
    broken = silo.TaskFamily(
        id="broken",
        title="t",
        sample=sample_tier,
        instruction=lambda p: "Do it.",
        gold=lambda p: [silo.Call("set_tier", {"customerId": "C-404", "tier": "gold"})],
    )
    env = environment(broken)
    result = await silo.run(env, "broken#0", noop, runs_dir=tmp_path)
    assert (result.passed, result.reward, result.reward_valid) == (False, 0.0, False)
    assert result.invalid_reason == "environment_fault"
    assert result.error is not None
    assert "Replayed call 1 of 1, set_tier" in result.error and "not_found" in result.error
    run = json.loads((tmp_path / result.run_id / "run.json").read_text())
    assert run["rewardValid"] is False


async def test_a_gold_call_of_an_async_tool_is_awaited() -> None:
    env = environment(TIER_AND_NOTE)
    result = await silo.run(env, "tier-and-note#8", gold_agent)
    assert result.passed, labels(result)


async def test_k_runs_of_one_instance_replay_the_gold_once() -> None:
    played: list[int] = []

    def gold(p: Mapping[str, Any]) -> list[silo.Call]:
        played.append(1)
        return list(SET_TIER.gold(p))

    family = silo.TaskFamily(
        id="counted", title="t", sample=sample_tier, instruction=lambda p: "x", gold=gold
    )
    env = environment(family)
    results = await silo.run_many(env, ["counted#4"], gold_agent, runs=5)
    assert all(r.passed for r in results)
    assert len(played) == 1


# --- the public machinery ----------------------------------------------------------------------


async def test_a_hand_written_verifier_can_replay_and_match() -> None:
    @silo.verifier(id="VER-1", task_id="T-1")
    async def verify(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        gold = await ctx.replay([silo.Call("set_tier", {"customerId": "C-1", "tier": "gold"})])
        return w.grade.matches(final, gold, initial)

    task = silo.Task("T-1", "Promote Ada", "Move Ada Byrne to gold.", "VER-1")
    env = environment(SET_TIER, tasks=[task], verifiers=[verify])
    good = await silo.run(
        env, "T-1", ScriptedAgent([ScriptedCall("set_tier", {"customerId": "C-1", "tier": "gold"})])
    )
    assert labels(good) == [
        ("C-1 matches the gold solution", True, ""),
        ("nothing else changed", True, ""),
    ]
    bad = await silo.run(env, "T-1", noop)
    assert not bad.passed and bad.reward_valid


async def test_replay_raises_on_a_call_that_errs() -> None:
    @silo.verifier(id="VER-1", task_id="T-1")
    async def verify(final: Any, initial: Any, ctx: silo.VerifierContext) -> list[silo.Check]:
        await ctx.replay([silo.Call("lookup", {"name": "Nobody"})])
        return [silo.check("unreachable", True)]

    task = silo.Task("T-1", "t", "i", "VER-1")
    result = await silo.run(environment(tasks=[task], verifiers=[verify]), "T-1", noop)
    assert result.invalid_reason == "environment_fault"
    assert "No customer named Nobody" in (result.error or "")


async def test_replay_without_a_rollout_says_so() -> None:
    ctx = silo.VerifierContext(agent_output="", task=silo.Task("T-1", "t", "i", "v"))
    with pytest.raises(silo.SiloError, match="needs the rollout's environment"):
        await ctx.replay([])


def test_matches_on_plain_worlds_with_ignore_and_removed_records() -> None:
    initial = {
        "clock": "09:00",
        "items": [{"id": "I-1", "v": 1, "at": "x"}, {"id": "I-2", "v": 2, "at": "y"}],
        "log": {"L-1": {"id": "L-1"}},
    }
    expected = {
        "clock": "10:00",
        "items": [{"id": "I-1", "v": 5, "at": "z"}],
        "log": {"L-1": {"id": "L-1"}, "L-2": {"id": "L-2"}},
    }
    final = {
        "clock": "10:00",
        "items": [{"id": "I-1", "v": 5, "at": "q"}, {"id": "I-2", "v": 2, "at": "y"}],
        "log": {"L-1": {"id": "L-1"}},
    }
    checks = w.grade.matches(final, expected, initial, ignore=("items.*.at",))
    assert [(c.label, c.passed, c.detail) for c in checks] == [
        ("clock matches the gold solution", True, ""),
        ("I-2 matches the gold solution", False, "still present; the gold solution removes it"),
        ("I-1 matches the gold solution", True, ""),
        ("L-2 matches the gold solution", False, "missing; the gold solution has it"),
        ("nothing else changed", True, ""),
    ]
    assert all(c.required for c in checks)
    # A whole top-level key ignored: no check names it, on either side.
    checks = w.grade.matches(
        {**final, "clock": "11:00"}, expected, initial, ignore=("clock", "log")
    )
    assert [c.label for c in checks] == [
        "I-2 matches the gold solution",
        "I-1 matches the gold solution",
        "nothing else changed",
    ]


def test_matches_names_at_most_three_fields_then_how_many_more() -> None:
    initial = {"rows": {"R": {"a": 0, "b": 0, "c": 0, "d": 0, "e": 0}}}
    expected = {"rows": {"R": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1}}}
    [record, _] = w.grade.matches(initial, expected, initial)
    assert record.detail == (
        "a: expected 1, got 0; b: expected 1, got 0; c: expected 1, got 0 (and 2 more)"
    )


def test_records_created_in_another_order_match_by_what_they_hold() -> None:
    # Ids of new records follow the order of creation: an agent that schedules B's follow-up
    # before A's made the same records under swapped ids, and that is the gold solution too.
    initial: dict[str, Any] = {"acts": {}, "seq": 0}
    gold = {
        "acts": {"A-1": {"id": "A-1", "about": "A"}, "A-2": {"id": "A-2", "about": "B"}},
        "seq": 2,
    }
    swapped_acts = {"A-1": {"id": "A-1", "about": "B"}, "A-2": {"id": "A-2", "about": "A"}}
    swapped = {"acts": swapped_acts, "seq": 2}
    checks = w.grade.matches(swapped, gold, initial)
    assert [(c.label, c.passed, c.detail) for c in checks] == [
        ("seq matches the gold solution", True, ""),
        ("A-1 matches the gold solution", True, "as A-2"),
        ("A-2 matches the gold solution", True, "as A-1"),
        ("nothing else changed", True, ""),
    ]
    # Each created record stands for one gold record at most: twice A is not A and B.
    twice = {"acts": {"A-1": {"id": "A-1", "about": "A"}, "A-2": {"id": "A-2", "about": "A"}}}
    failed = [c.label for c in w.grade.matches({**twice, "seq": 2}, gold, initial) if not c.passed]
    assert failed == ["A-2 matches the gold solution"]
    # A record the gold does not create is not paired with anything: it is something else.
    extra = {"acts": {**swapped_acts, "A-3": {"id": "A-3", "about": "C"}}, "seq": 3}
    checks = w.grade.matches(extra, gold, initial)
    assert [(c.label, c.passed) for c in checks if not c.passed] == [
        ("seq matches the gold solution", False),
        ("nothing else changed", False),
    ]
    assert checks[-1].detail == "changed, and the gold solution leaves alone: A-3"
