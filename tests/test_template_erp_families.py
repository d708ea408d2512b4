"""The ERP template's task families: procure-to-pay, order-to-cash and stock work by the rules.

Each family asks by names (products, cities, customers, people) and leans on the world's rules —
what is available, who may approve how much, when a receipt is needed, when a hold applies; the
tests show the gold solution passes, doing nothing fails, and one realistic mistake per family
fails on the record it gets wrong.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

import silo_async as silo
import silo_async.templates.erp as erp
from silo_async._family import canonical_params
from silo_async.testing import ScriptedAgent, ScriptedCall, gold_agent

from .template_support import idle, instance_params, seed_where, template_environment

pytestmark = pytest.mark.anyio

ENV = template_environment("erp", erp)
FAMILIES = (
    "reorder-levels",
    "move-stock",
    "record-count",
    "chase-overdue",
    "credit-limit",
    "file-expense",
    "request-goods",
    "owed-question",
)


params = partial(instance_params, ENV)
seed_of = partial(seed_where, ENV)


def test_the_registry_lists_the_families() -> None:
    assert [f.id for f in erp.families] == list(FAMILIES)
    assert {f.difficulty for f in erp.families} == {"easy", "medium", "hard"}


def test_five_thousand_distinct_instances_among_ten_thousand_seeds() -> None:
    seen = {canonical_params(params(f"request-goods#{seed}")) for seed in range(10_000)}
    assert len(seen) >= 5000


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_has_the_two_hundred_train_instances_the_audit_asks(family: str) -> None:
    assert len(ENV.instances(family, 200, split="train")) == 200


@pytest.mark.parametrize("family", FAMILIES)
async def test_the_gold_agent_passes_and_doing_nothing_fails(family: str) -> None:
    for task in ENV.instances(family, 3, split="test"):
        gold = await silo.run(ENV, task.id, gold_agent)
        assert gold.passed and gold.reward == 1.0, [c for c in gold.checks if not c.passed]
        nothing = await silo.run(ENV, task.id, idle)
        assert not nothing.passed and nothing.reward_valid


async def play(task_id: str, *calls: tuple[str, dict[str, Any]]) -> list[str]:
    """The labels of the failed checks of a scripted rollout."""
    agent = ScriptedAgent([ScriptedCall(tool, args) for tool, args in calls])
    result = await silo.run(ENV, task_id, agent)
    return [c.label for c in result.checks if not c.passed]


def gold_calls(task_id: str) -> list[tuple[str, dict[str, Any]]]:
    family = next(f for f in erp.families if task_id.startswith(f.id + "#"))
    return [(c.tool, dict(c.input)) for c in family.gold(params(task_id))]


async def test_a_reorder_point_without_its_quantity_is_half_done() -> None:
    task_id = f"reorder-levels#{seed_of('reorder-levels', lambda p: len(p['lines']) == 1)}"
    [(tool, args)] = gold_calls(task_id)
    del args["reorderQuantity"]
    [line] = [line for _product, line in params(task_id)["lines"]]
    assert await play(task_id, (tool, args)) == [f"{line} matches the gold solution"]


async def test_stock_sent_but_not_booked_in_fails() -> None:
    task_id = f"move-stock#{seed_of('move-stock', lambda p: True)}"
    send, _receive = gold_calls(task_id)
    failed = await play(task_id, send)
    assert f"{params(task_id)['transferId']} matches the gold solution" in failed


async def test_a_count_below_reservations_needs_releases_first() -> None:
    task_id = f"record-count#{seed_of('record-count', lambda p: p['release'])}"
    *_releases, count = gold_calls(task_id)
    failed = await play(task_id, count)  # refused: the count is below what is reserved
    assert failed and failed[0].endswith("matches the gold solution")


async def test_a_final_reminder_puts_the_customer_on_hold() -> None:
    task_id = f"chase-overdue#{seed_of('chase-overdue', lambda p: p['hold'])}"
    *reminders, _hold = gold_calls(task_id)
    failed = await play(task_id, *reminders)
    assert failed == [f"{params(task_id)['customerId']} matches the gold solution"]


async def test_a_new_limit_that_covers_the_exposure_releases_the_hold() -> None:
    task_id = f"credit-limit#{seed_of('credit-limit', lambda p: p['release'])}"
    limit, _release = gold_calls(task_id)
    failed = await play(task_id, limit)
    assert failed == [f"{params(task_id)['customerId']} matches the gold solution"]


async def test_a_claim_the_rules_allow_is_approved_not_left() -> None:
    task_id = f"file-expense#{seed_of('file-expense', lambda p: p['decision'] == 'approve')}"
    submit, _approve = gold_calls(task_id)
    failed = await play(task_id, submit)
    assert f"{params(task_id)['expenseId']} matches the gold solution" in failed


async def test_a_requisition_above_the_managers_limit_goes_higher() -> None:
    def escalated(p: dict[str, Any]) -> bool:
        manager = erp.create_state()["users"][p["requesterId"]]["managerId"]
        return bool(p["approverId"] != manager)

    task_id = f"request-goods#{seed_of('request-goods', escalated)}"
    create, submit = gold_calls(task_id)
    manager = erp.create_state()["users"][params(task_id)["requesterId"]]["managerId"]
    failed = await play(task_id, create, (submit[0], {**submit[1], "approverId": manager}))
    assert f"{params(task_id)['requisitionId']} matches the gold solution" in failed


async def test_an_owed_amount_must_be_the_computed_one() -> None:
    task_id = f"owed-question#{seed_of('owed-question', lambda p: p['answer'] != '€0.00')}"
    figure = params(task_id)["answer"]
    right = await silo.run(ENV, task_id, ScriptedAgent([], answer=f"They owe {figure}."))
    assert right.passed, [(c.label, c.detail) for c in right.checks if not c.passed]
    wrong = await silo.run(ENV, task_id, ScriptedAgent([], answer="They owe €1.00."))
    assert not wrong.passed
