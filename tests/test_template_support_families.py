"""The support template's task families: conversations, each with its own scripted customer.

Every instance is a chat: the customer (built from the instance) knows their PIN and acts on
their own phone only when asked; the gold agent plays the family's ``solve``. The tests show the
gold solution passes with the customer, doing nothing fails, every instance plays on a varied
world (new names and PINs), and one realistic mistake per family fails.
"""

from __future__ import annotations

import json
from functools import partial

import pytest

import silo_async as silo
import silo_async.templates.support as support
from silo_async.testing import ScriptedAgent, ScriptedCall, gold_agent

from .template_support import idle, instance_params, seed_where, template_environment

pytestmark = pytest.mark.anyio

ENV = template_environment("support", support)
FAMILIES = ("bill-balance", "lost-phone", "switch-plan", "roaming-trip", "goodwill-credit")


params = partial(instance_params, ENV)
seed_of = partial(seed_where, ENV)


def test_the_registry_lists_conversational_families() -> None:
    assert [f.id for f in support.families] == list(FAMILIES)
    assert {f.difficulty for f in support.families} == {"easy", "medium"}
    assert all(f.user is not None and f.solve is not None for f in support.families)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_seed_is_a_distinct_instance(family: str) -> None:
    seen = {json.dumps(params(f"{family}#{seed}"), sort_keys=True) for seed in range(1000)}
    assert len(seen) >= 990  # five families: 5,000 distinct instances among seeds 0-999


@pytest.mark.parametrize("family", FAMILIES)
async def test_the_gold_agent_passes_with_the_customer_and_doing_nothing_fails(
    family: str,
) -> None:
    for task in ENV.instances(family, 3, split="test"):
        assert task.user_script is not None and "User: " in task.prompt
        gold = await silo.run(ENV, task.id, gold_agent)
        assert gold.passed and gold.reward == 1.0, [c for c in gold.checks if not c.passed]
        assert gold.user_turns >= 2
        nothing = await silo.run(ENV, task.id, idle)
        assert not nothing.passed and nothing.reward_valid


def test_the_customer_knows_the_varied_pin_and_the_seed_is_untouched() -> None:
    task = ENV.task("switch-plan#3")
    p = params("switch-plan#3")
    world = ENV.initial_world(task)
    customer = world["customers"][p["customerId"]]
    seed_customer = support.create_state()["customers"][p["customerId"]]
    assert p["pin"] == customer["securityPin"] and p["pin"] in json.dumps(task.user)
    assert customer["firstName"] != seed_customer["firstName"]
    assert p["customer"].endswith(customer["lastName"])
    # The couple on two accounts keep one surname in every varied world.
    assert world["customers"]["CUS-009"]["lastName"] == world["customers"]["CUS-010"]["lastName"]
    # A hand-written task's customer still gives the seed's PIN.
    assert "2958" in json.dumps(ENV.task("TASK-001").user)


def calls_of(task_id: str) -> list[ScriptedCall]:
    family = next(f for f in support.families if task_id.startswith(f.id + "#"))
    return [ScriptedCall(c.tool, dict(c.input)) for c in family.gold(params(task_id))]


async def failed(task_id: str, calls: list[ScriptedCall], answer: str = "") -> list[str]:
    result = await silo.run(ENV, task_id, ScriptedAgent(calls, answer=answer))
    return [c.label for c in result.checks if not c.passed]


async def test_a_change_without_verifying_the_caller_is_refused() -> None:
    task_id = "switch-plan#0"
    opened, _verify, change, resolve = calls_of(task_id)
    labels = await failed(task_id, [opened, change, resolve])
    assert f"{params(task_id)['caseId']} matches the gold solution" in labels
    assert f"{params(task_id)['lineId']} matches the gold solution" in labels


async def test_a_barred_line_still_needs_its_replacement_sim() -> None:
    task_id = "lost-phone#0"
    *first, _order, resolve = calls_of(task_id)
    labels = await failed(task_id, [*first, resolve])
    assert labels == [f"{params(task_id)['orderId']} matches the gold solution"]


async def test_the_phone_side_of_roaming_is_the_customers_to_switch() -> None:
    # The agent lifts nothing on the network but forgets the phone: the customer was never
    # asked, so the phone still would not roam.
    seed = seed_of("roaming-trip", lambda p: p["phone"] and not p["lift"] and not p["escalate"])
    task_id = f"roaming-trip#{seed}"
    agent_calls = [c for c in calls_of(task_id) if c.tool != "set_data_roaming"]
    labels = await failed(task_id, agent_calls)
    assert labels == [f"{params(task_id)['deviceId']} matches the gold solution"]


async def test_a_fraud_hold_is_escalated_not_worked_around() -> None:
    seed = seed_of("roaming-trip", lambda p: p["escalate"])
    task_id = f"roaming-trip#{seed}"
    p = params(task_id)
    opened, verify, *_rest = calls_of(task_id)
    resolve = ScriptedCall(
        "resolve_case", {"caseId": p["caseId"], "resolution": "Done.", "actorId": p["staffId"]}
    )
    labels = await failed(task_id, [opened, verify, resolve])
    assert f"{p['caseId']} matches the gold solution" in labels


async def test_a_goodwill_request_above_the_cap_gets_the_cap() -> None:
    seed = seed_of("goodwill-credit", lambda p: p["credit"] is not None and p["asked"] > 20)
    task_id = f"goodwill-credit#{seed}"
    p = params(task_id)
    opened, verify, credit, resolve = calls_of(task_id)
    asked = ScriptedCall(credit.tool, {**credit.input, "amount": p["asked"]})
    labels = await failed(task_id, [opened, verify, asked, resolve])
    assert labels == [f"{p['creditId']} matches the gold solution"]


async def test_the_balance_must_be_told_in_the_chat() -> None:
    task_id = "bill-balance#0"
    p = params(task_id)
    labels = await failed(task_id, calls_of(task_id), answer=f"The balance is {p['balance']}.")
    assert labels == [f"the customer was told {p['balance']}"]
