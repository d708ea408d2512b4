"""The project tracker's task families: real planning work, graded against the gold world.

Each family reads the seed's board (capacity, budgets, blockers, overdue items are computed,
never stored) and asks by name; the tests show the gold solution passes, doing nothing fails,
and one realistic mistake per family fails on the record it gets wrong.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

import silo_async as silo
import silo_async.templates.project as project
from silo_async._family import canonical_params
from silo_async.templates.project.state import PRIORITY_RANK
from silo_async.testing import ScriptedAgent, ScriptedCall, gold_agent

from .template_support import idle, instance_params, seed_where, template_environment

pytestmark = pytest.mark.anyio

ENV = template_environment("project", project)
FAMILIES = (
    "file-bug",
    "push-overdue",
    "block-item",
    "carry-over",
    "hand-over-work",
    "points-question",
)


params = partial(instance_params, ENV)
seed_of = partial(seed_where, ENV)


def test_the_registry_lists_the_families() -> None:
    assert [f.id for f in project.families] == list(FAMILIES)
    assert {f.difficulty for f in project.families} == {"easy", "medium", "hard"}


def test_five_thousand_distinct_instances_among_ten_thousand_seeds() -> None:
    seen = {canonical_params(params(f"file-bug#{seed}")) for seed in range(10_000)}
    assert len(seen) >= 5000


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_has_the_two_hundred_train_instances_the_audit_asks(family: str) -> None:
    assert len(ENV.instances(family, 200, split="train")) == 200


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(0, 40, 13))
async def test_the_gold_agent_passes_and_doing_nothing_fails(family: str, seed: int) -> None:
    task_id = f"{family}#{seed_of(family, lambda p: True) + seed}"
    try:
        ENV.task(task_id)
    except silo.SiloError:
        pytest.skip("no instance for this seed")
    gold = await silo.run(ENV, task_id, gold_agent)
    assert gold.passed and gold.reward == 1.0, [c for c in gold.checks if not c.passed]
    nothing = await silo.run(ENV, task_id, idle)
    assert not nothing.passed and nothing.reward_valid


async def play(task_id: str, *calls: tuple[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """The failed checks of a scripted rollout, as (label, detail)."""
    agent = ScriptedAgent([ScriptedCall(tool, args) for tool, args in calls])
    result = await silo.run(ENV, task_id, agent)
    return [(c.label, c.detail) for c in result.checks if not c.passed]


async def test_a_bug_that_fits_goes_into_the_sprint() -> None:
    seed = seed_of("file-bug", lambda p: p["sprintId"] is not None)
    p = params(f"file-bug#{seed}")
    item = {
        "projectId": p["projectId"], "title": p["title"], "type": "bug",
        "points": p["points"], "priority": p["priority"], "assigneeId": p["assigneeId"],
        "dueDate": p["due"], "actorId": p["actorId"],
    }  # fmt: skip
    assert (
        await play(f"file-bug#{seed}", ("create_work_item", {**item, "sprintId": p["sprintId"]}))
        == []
    )
    failed = await play(f"file-bug#{seed}", ("create_work_item", item))
    assert [label for label, _ in failed] == ["WI-051 matches the gold solution"]
    assert f'sprintId: expected "{p["sprintId"]}", got null' in failed[0][1]


async def test_overdue_items_move_from_their_own_dates() -> None:
    seed = seed_of("push-overdue", lambda p: len(set(p["moves"].values())) >= 2)
    p = params(f"push-overdue#{seed}")
    one_date = max(p["moves"].values())
    calls = [
        ("set_due_date", {"workItemId": i, "dueDate": one_date, "actorId": p["actorId"]})
        for i in p["moves"]
    ]
    failed = await play(f"push-overdue#{seed}", *calls)
    wrong = [i for i, due in p["moves"].items() if due != one_date]
    assert [label for label, _ in failed] == [f"{i} matches the gold solution" for i in wrong]


async def test_a_dependency_recorded_the_wrong_way_round_fails() -> None:
    seed = seed_of("block-item", lambda p: not p["toBlocked"])
    p = params(f"block-item#{seed}")
    backwards = {"blockerId": p["blockedId"], "blockedId": p["blockerId"], "actorId": p["actorId"]}
    failed = await play(f"block-item#{seed}", ("add_dependency", backwards))
    assert len(failed) == 1 and failed[0][0].endswith("matches the gold solution")
    right = {"blockerId": p["blockerId"], "blockedId": p["blockedId"], "actorId": p["actorId"]}
    assert await play(f"block-item#{seed}", ("add_dependency", right)) == []


async def test_started_work_waiting_on_a_blocker_is_marked_blocked() -> None:
    seed = seed_of("block-item", lambda p: p["toBlocked"])
    p = params(f"block-item#{seed}")
    link = {"blockerId": p["blockerId"], "blockedId": p["blockedId"], "actorId": p["actorId"]}
    failed = await play(f"block-item#{seed}", ("add_dependency", link))
    assert [label for label, _ in failed] == [f"{p['blockedId']} matches the gold solution"]
    assert failed[0][1].startswith('statusId: expected "blocked", got "in_progress"')


def below_the_bar(p: dict[str, Any]) -> list[str]:
    """Unfinished items of the instance's members under its priority bar that would fit."""
    world: Any = project.create_state()
    sprint = next(s for s in world["sprints"].values() if s["name"] == p["sprint"])
    names = {m["id"]: m["name"] for m in world["members"].values()}
    room = world["sprints"][p["nextId"]]["pointBudget"] - sum(
        i["points"]
        for i in world["workItems"].values()
        if i["sprintId"] == p["nextId"] and i["statusId"] != "cancelled"
    )
    room -= sum(world["workItems"][i]["points"] for i in p["moving"])
    return [
        i["id"]
        for i in world["workItems"].values()
        if i["sprintId"] == sprint["id"]
        and names.get(i["assigneeId"]) in p["members"]
        and i["statusId"] not in ("done", "cancelled")
        and PRIORITY_RANK[i["priority"]] < PRIORITY_RANK[p["bar"]]
        and i["points"] <= room
    ]


async def test_carry_over_moves_only_what_clears_the_bar() -> None:
    seed = seed_of("carry-over", lambda p: p["moving"] and below_the_bar(p))
    p = params(f"carry-over#{seed}")
    extra = below_the_bar(p)[0]
    calls = [
        ("add_item_to_sprint", {"sprintId": p["nextId"], "workItemId": i, "actorId": p["actorId"]})
        for i in [*p["moving"], extra]
    ]
    failed = await play(f"carry-over#{seed}", *calls)
    assert failed == [
        ("nothing else changed", f"changed, and the gold solution leaves alone: {extra}")
    ]


async def test_handing_work_over_without_moving_the_member_fails() -> None:
    seed = seed_of("hand-over-work", lambda p: True)
    p = params(f"hand-over-work#{seed}")
    calls = [
        ("assign_work_item", {"workItemId": i, "memberId": p["heirId"], "actorId": p["actorId"]})
        for i in p["items"]
    ] + [
        ("set_due_date", {"workItemId": i, "dueDate": p["due"], "actorId": p["actorId"]})
        for i in p["undated"]
    ]
    failed = await play(f"hand-over-work#{seed}", *calls)
    assert [label for label, _ in failed] == [f"{p['memberId']} matches the gold solution"]


async def test_a_points_answer_must_be_the_computed_figure() -> None:
    seed = seed_of("points-question", lambda p: p["question"] == "blocked")
    task_id = f"points-question#{seed}"
    figure = params(task_id)["answer"]
    right = await silo.run(ENV, task_id, ScriptedAgent([], answer=f"{figure} items."))
    assert right.passed, [(c.label, c.detail) for c in right.checks if not c.passed]
    wrong = await silo.run(ENV, task_id, ScriptedAgent([], answer=f"{figure + 1} items."))
    assert not wrong.passed
