"""The crm template's task families: real work, graded against the gold world.

``hand-over-account`` is the reference family the others copy: names in the instruction, ids
found by the agent, open deals told from closed ones, the audit log left out of the comparison
and checked by the family's own check instead.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import silo_async as silo
import silo_async.templates.crm as crm
from silo_async.testing import ScriptedAgent, ScriptedCall, gold_agent

from .template_support import template_environment

pytestmark = pytest.mark.anyio

ENV = template_environment("crm", crm)
FAMILY = "hand-over-account"


async def idle(ctx: silo.AgentContext) -> str:
    return ""


def params(seed: int) -> dict[str, Any]:
    return dict(ENV.task(f"{FAMILY}#{seed}").params or {})


def test_the_registry_lists_the_families() -> None:
    assert FAMILY in [f.id for f in crm.families]
    assert all(isinstance(f, silo.TaskFamily) for f in crm.families)


def test_instances_are_many_distinct_and_worded_by_name() -> None:
    seen = {json.dumps(params(seed), sort_keys=True) for seed in range(400)}
    assert len(seen) >= 300
    task = ENV.task(f"{FAMILY}#0")
    p = params(0)
    assert p["account"] in task.instruction and p["newOwner"] in task.instruction
    assert p["accountId"] not in task.instruction and p["newOwnerId"] not in task.instruction


@pytest.mark.parametrize("seed", range(0, 40, 7))
async def test_the_gold_agent_passes_and_doing_nothing_fails(seed: int) -> None:
    task_id = f"{FAMILY}#{seed}"
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
