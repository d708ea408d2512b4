"""The crm template's task families: real work, graded against the gold world.

``hand-over-account`` is the reference family the others copy: names in the instruction, ids
found by the agent, open deals told from closed ones, the audit log left out of the comparison
and checked by the family's own check instead. Every instance plays on a world ``vary`` gave a
new surface (people, company names, amounts), its structure and messes kept.
"""

from __future__ import annotations

import json
import random
from functools import partial
from typing import Any

import pytest

import silo_async as silo
import silo_async.templates.crm as crm
from silo_async.templates.crm.state import full_name
from silo_async.testing import ScriptedAgent, ScriptedCall, gold_agent

from .template_support import idle, seed_where, template_environment

pytestmark = pytest.mark.anyio

ENV = template_environment("crm", crm)
FAMILY = "hand-over-account"


seed_of = partial(seed_where, ENV)


def params(seed: int) -> dict[str, Any]:
    return dict(ENV.task(f"{FAMILY}#{seed}").params or {})


FAMILIES = (
    "hand-over-account",
    "close-lost-deal",
    "chase-stale-deals",
    "win-lead",
    "pipeline-question",
)


def test_the_registry_lists_the_families() -> None:
    assert [f.id for f in crm.families] == list(FAMILIES)
    assert all(isinstance(f, silo.TaskFamily) for f in crm.families)
    assert {f.difficulty for f in crm.families} == {"easy", "medium", "hard"}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_seed_is_a_distinct_instance(family: str) -> None:
    # A thousand seeds, a thousand different questions: five families give 5,000 distinct
    # instances among seeds 0-999 already (the bar is 5,000 among 0-9,999).
    seen = {
        json.dumps(dict(ENV.task(f"{family}#{seed}").params or {}), sort_keys=True)
        for seed in range(1000)
    }
    assert len(seen) == 1000


def test_instances_are_many_distinct_and_worded_by_name() -> None:
    seen = {json.dumps(params(seed), sort_keys=True) for seed in range(400)}
    assert len(seen) >= 300
    task = ENV.task(f"{FAMILY}#0")
    p = params(0)
    assert p["account"] in task.instruction and p["newOwner"] in task.instruction
    assert p["accountId"] not in task.instruction and p["newOwnerId"] not in task.instruction


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(0, 40, 13))
async def test_the_gold_agent_passes_and_doing_nothing_fails(family: str, seed: int) -> None:
    task_id = f"{family}#{seed}"
    gold = await silo.run(ENV, task_id, gold_agent)
    assert gold.passed and gold.reward == 1.0, [c for c in gold.checks if not c.passed]
    nothing = await silo.run(ENV, task_id, idle)
    assert not nothing.passed and nothing.reward_valid


def moves(p: dict[str, Any], actor: str, deals: list[str]) -> list[ScriptedCall]:
    calls = [
        ScriptedCall(
            "reassign_account",
            {"accountId": p["accountId"], "newOwnerId": p["newOwnerId"], "actorId": actor},
        )
    ]
    for deal in deals:
        calls.append(
            ScriptedCall(
                "reassign_opportunity",
                {"opportunityId": deal, "newOwnerId": p["newOwnerId"], "actorId": actor},
            )
        )
    calls.append(
        ScriptedCall(
            "schedule_activity",
            {
                "type": "call",
                "subject": "Hello from your new account executive",
                "relatedType": "account",
                "relatedId": p["accountId"],
                "ownerId": p["newOwnerId"],
                "dueDate": p["due"],
                "actorId": actor,
                "notes": "Worded by the agent.",
            },
        )
    )
    return calls


def seed_with(predicate: Any) -> int:
    return next(seed for seed in range(500) if predicate(params(seed)))


async def test_any_order_and_its_own_words_pass() -> None:
    seed = seed_with(lambda p: len(p["moving"]) >= 2)
    p = params(seed)
    calls = moves(p, p["actorId"], list(reversed(p["moving"])))
    result = await silo.run(ENV, f"{FAMILY}#{seed}", ScriptedAgent(calls[::-1]))
    assert result.passed, [c for c in result.checks if not c.passed]


async def test_a_forgotten_open_deal_is_named() -> None:
    seed = seed_with(lambda p: len(p["moving"]) >= 2)
    p = params(seed)
    kept = p["moving"][-1]
    owner = crm.create_state()["opportunities"][kept]["ownerId"]
    agent = ScriptedAgent(moves(p, p["actorId"], p["moving"][:-1]))
    result = await silo.run(ENV, f"{FAMILY}#{seed}", agent)
    failed = [(c.label, c.detail) for c in result.checks if not c.passed]
    detail = f'ownerId: expected "{p["newOwnerId"]}", got "{owner}"'
    assert failed == [(f"{kept} matches the gold solution", detail)]


async def test_acting_as_someone_else_fails_the_familys_own_check() -> None:
    seed = seed_with(lambda p: p["actorId"] == "USR-001")
    p = params(seed)
    result = await silo.run(
        ENV, f"{FAMILY}#{seed}", ScriptedAgent(moves(p, "USR-008", p["moving"]))
    )
    failed = [(c.label, c.detail) for c in result.checks if not c.passed]
    assert failed == [(f"every change was made as {p['actor']}", "also made as USR-008")]


def varied(seed: int) -> Any:
    world = crm.create_state()
    crm.vary(world, random.Random(f"crm/x#{seed}"))
    return world


def shape(value: Any) -> Any:
    """The keys and ids of a world: what vary may never change."""
    if isinstance(value, dict):
        return {k: shape(v) if k != "id" and not k.endswith("Id") else v for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


@pytest.mark.parametrize("seed", range(5))
def test_vary_gives_new_names_and_amounts_and_keeps_structure_and_references(seed: int) -> None:
    seed_world: Any = crm.create_state()
    world = varied(seed)
    assert shape(world) == shape(seed_world)
    for key in ("stages", "clock", "policies", "company", "sequences"):
        assert world[key] == seed_world[key]
    assert not {full_name(u) for u in world["users"].values()} & {
        full_name(u) for u in seed_world["users"].values()
    }
    accounts = [a["name"] for a in world["accounts"].values()]
    assert not set(accounts) & {a["name"] for a in seed_world["accounts"].values()}
    assert len(set(accounts)) == len(accounts)
    amounts = [o["amount"] for o in world["opportunities"].values()]
    assert amounts != [o["amount"] for o in seed_world["opportunities"].values()]
    assert all(type(a) is int and a % 500 == 0 for a in amounts)
    # The messes stay: a duplicate contact shares an email (in another case) with the first,
    # and the qualified lead's company is an existing account's name with a suffix.
    emails = [c["email"].lower() for c in world["contacts"].values() if c["status"] == "active"]
    assert len(emails) - len(set(emails)) == 1
    lead = world["leads"]["LEAD-002"]
    assert lead["company"].startswith(world["accounts"]["ACC-001"]["name"] + " ")
    assert lead["email"].endswith("@" + world["accounts"]["ACC-001"]["website"].split("www.")[1])


async def test_an_instance_sees_its_varied_world_and_a_hand_written_task_the_seed() -> None:
    assert varied(3) == varied(3)
    look = ScriptedAgent([ScriptedCall("get_user", {"userId": "USR-002"})])
    seed_name = "Callum Ferreira"
    hand_written = await silo.run(ENV, "TASK-001", look)
    [result] = [e["output"] for e in hand_written.trace if e["type"] == "tool_result"]
    assert full_name(result) == seed_name
    instance = await silo.run(ENV, "win-lead#3", look)
    [result] = [e["output"] for e in instance.trace if e["type"] == "tool_result"]
    assert full_name(result) != seed_name
    world = ENV.initial_world(ENV.task("win-lead#3"))
    assert full_name(result) == full_name(world["users"]["USR-002"])


async def test_a_lost_deal_needs_the_reason_the_customer_gave() -> None:
    seed = seed_of("close-lost-deal", lambda p: p["reason"] == "no_budget" and p["followUps"])
    p = dict(ENV.task(f"close-lost-deal#{seed}").params or {})
    actor = p["ownerId"]
    completes = [
        ScriptedCall("complete_activity", {"activityId": a, "actorId": actor})
        for a in p["followUps"]
    ]
    close = {"opportunityId": p["dealId"], "actorId": actor}
    right = ScriptedAgent(
        [ScriptedCall("close_opportunity_lost", {**close, "reason": "no_budget"}), *completes]
    )
    assert (await silo.run(ENV, f"close-lost-deal#{seed}", right)).passed
    wrong = ScriptedAgent(
        [ScriptedCall("close_opportunity_lost", {**close, "reason": "price"}), *completes]
    )
    failed = [
        (c.label, c.detail)
        for c in (await silo.run(ENV, f"close-lost-deal#{seed}", wrong)).checks
        if not c.passed
    ]
    assert failed == [
        (
            f"{p['dealId']} matches the gold solution",
            'lostReason: expected "no_budget", got "price"',
        )
    ]


async def test_stuck_deals_may_be_chased_in_any_order_but_not_one_too_many() -> None:
    seed = seed_of("chase-stale-deals", lambda p: len(p["stuck"]) >= 2)
    p = dict(ENV.task(f"chase-stale-deals#{seed}").params or {})

    def follow_up(deal: str) -> ScriptedCall:
        return ScriptedCall(
            "schedule_activity",
            {
                "type": p["kind"], "subject": "Nudge", "relatedType": "opportunity",
                "relatedId": deal, "ownerId": p["repId"], "dueDate": p["due"],
                "actorId": p["managerId"],
            },
        )  # fmt: skip

    backwards = ScriptedAgent([follow_up(d) for d in reversed(p["stuck"])])
    result = await silo.run(ENV, f"chase-stale-deals#{seed}", backwards)
    assert result.passed, [(c.label, c.detail) for c in result.checks if not c.passed]
    fresh = next(
        o["id"]
        for o in crm.create_state()["opportunities"].values()
        if o["status"] == "open" and o["ownerId"] == p["repId"] and o["id"] not in p["stuck"]
    )
    more = ScriptedAgent([follow_up(d) for d in [*p["stuck"], fresh]])
    result = await silo.run(ENV, f"chase-stale-deals#{seed}", more)
    assert [c.label for c in result.checks if not c.passed] == ["nothing else changed"]


async def test_a_lead_of_an_existing_customer_joins_its_account() -> None:
    seed = seed_of("win-lead", lambda p: p["accountId"] is not None)
    p = dict(ENV.task(f"win-lead#{seed}").params or {})
    assert (p["leadId"], p["accountId"]) == ("LEAD-002", "ACC-001")
    conversion = {
        "leadId": p["leadId"], "amount": p["amount"], "expectedCloseDate": p["close"],
        "opportunityName": p["deal"], "ownerId": p["ownerId"], "actorId": p["ownerId"],
    }  # fmt: skip
    # The company name differs from the account's ("... GmbH"), so a new account can be
    # made — and is the duplicate the instruction forbids.
    duplicate = ScriptedAgent([ScriptedCall("convert_lead", conversion)])
    result = await silo.run(ENV, f"win-lead#{seed}", duplicate)
    assert not result.passed
    assert "nothing else changed" in [c.label for c in result.checks if not c.passed]
    joined = ScriptedAgent([ScriptedCall("convert_lead", {**conversion, "accountId": "ACC-001"})])
    assert (await silo.run(ENV, f"win-lead#{seed}", joined)).passed


async def test_a_pipeline_answer_commits_to_its_figure() -> None:
    seed = seed_of("pipeline-question", lambda p: p["question"] == "weighted")
    task_id = f"pipeline-question#{seed}"
    answer = dict(ENV.task(task_id).params or {})["answer"]
    said = await silo.run(ENV, task_id, ScriptedAgent([], answer=f"It comes to {answer}."))
    assert said.passed, [(c.label, c.detail) for c in said.checks if not c.passed]
    dump = await silo.run(ENV, task_id, ScriptedAgent([], answer=f"{answer}, $1, $2, $3, $4"))
    assert [c.label for c in dump.checks if not c.passed] == [
        "commits to an answer (at most 3 figures)"
    ]
    wrong = await silo.run(ENV, task_id, ScriptedAgent([], answer="$1"))
    assert not wrong.passed
