"""Verifiers for sprint work: capacity relief, budget split and turnover."""

from __future__ import annotations

from typing import Any

import silo_async as silo
from silo_async.world import every

from ..state import (
    PRIORITY_RANK,
    Record,
    State,
    active_sprint_ids,
    is_closed,
    member_load,
    over_capacity_by,
    sprint_over_budget_by,
)
from .seed import acting, needs_seed, seed_record

__all__ = ["expected_capacity_relief", "ver_003", "ver_004", "ver_005"]

NOT_STARTED = frozenset({"backlog", "ready"})


def expected_capacity_relief(state: State, member_id: str) -> list[str]:
    """Not-started active-sprint items to drop, lowest priority first, until the member fits.

    Ties within a priority go to the smaller estimate first, then the lower id, so the rule
    removes as little as possible and always gives one answer.
    """
    active = set(active_sprint_ids(state))
    candidates = sorted(
        (
            i
            for i in state["workItems"].values()
            if i["assigneeId"] == member_id
            and i["sprintId"] in active
            and i["statusId"] in NOT_STARTED
        ),
        key=lambda i: (PRIORITY_RANK[i["priority"]], i["points"], i["id"]),
    )
    capacity = int(state["members"][member_id]["sprintCapacityPoints"])
    load = member_load(state, member_id)
    chosen: list[str] = []
    for item in candidates:
        if load <= capacity:
            break
        chosen.append(item["id"])
        load -= int(item["points"])
    return chosen


@silo.verifier(id="VER-003", task_id="TASK-003")
@needs_seed("Wen Zhao exists in the seed")
def ver_003(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Wen Zhao fits her capacity, by dropping exactly the lowest-priority unstarted items."""
    wen = seed_record(initial, "members", "name", "Wen Zhao")
    drop = expected_capacity_relief(initial, wen["id"])
    mine = [i for i in initial["workItems"].values() if i["assigneeId"] == wen["id"]]
    items = final["workItems"]
    # "Out of the sprint": back to the backlog or into a later sprint both count.
    dropped = [i for i in drop if items[i]["sprintId"] != initial["workItems"][i]["sprintId"]]
    staying = [i["id"] for i in mine if i["id"] not in drop]
    kept = [i for i in staying if items[i]["sprintId"] == initial["workItems"][i]["sprintId"]]
    same_owner = all(items[i["id"]]["assigneeId"] == wen["id"] for i in mine)
    same_points = all(items[i["id"]]["points"] == i["points"] for i in mine)
    others_moved = sorted(
        i
        for i, item in initial["workItems"].items()
        if item["assigneeId"] != wen["id"] and items[i]["sprintId"] != item["sprintId"]
    )
    capacity_same = (
        final["members"][wen["id"]]["sprintCapacityPoints"] == wen["sprintCapacityPoints"]
    )
    return [
        acting(final, initial, "Ines Okafor"),
        silo.check(
            "Wen Zhao is within capacity",
            over_capacity_by(final, wen["id"]) == 0 and over_capacity_by(initial, wen["id"]) > 0,
            f"load {member_load(final, wen['id'])} of {wen['sprintCapacityPoints']}",
        ),
        every(
            "her lowest-priority unstarted items left the sprint",
            dropped,
            drop,
            "removed",
            listed=True,
        ),
        every("the rest of her work stayed in its sprint", kept, staying, "kept", allow_empty=True),
        silo.check("nothing of hers was reassigned", same_owner),
        silo.check("her capacity was not raised", capacity_same),
        silo.optional("no estimate changed", same_points),
        silo.optional(
            "nobody else's items moved sprint", not others_moved, f"moved: {others_moved}"
        ),
    ]


def _t4(final: State, project: Record) -> Record | None:
    return next(
        (
            s
            for s in final["sprints"].values()
            if s["projectId"] == project["id"] and s["name"].strip().lower() == "telemetry t4"
        ),
        None,
    )


@silo.verifier(id="VER-004", task_id="TASK-004")
@needs_seed("the telemetry project and T3 exist in the seed")
def ver_004(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Telemetry T4 is planned as asked and T3's unowned, unstarted work moved into it."""
    project = seed_record(initial, "projects", "key", "TELE")
    t3 = seed_record(initial, "sprints", "name", "Telemetry T3")
    movers = sorted(
        i["id"]
        for i in initial["workItems"].values()
        if i["sprintId"] == t3["id"] and i["assigneeId"] is None and i["statusId"] in NOT_STARTED
    )
    t4 = _t4(final, project)
    t4_id = t4["id"] if t4 else None
    items = final["workItems"]
    arrived = [i for i in movers if items[i]["sprintId"] == t4_id]
    extra = sorted(
        i for i, item in items.items() if t4_id and item["sprintId"] == t4_id and i not in movers
    )
    stayers = [
        i["id"]
        for i in initial["workItems"].values()
        if i["sprintId"] == t3["id"] and i["id"] not in movers
    ]
    shape: dict[str, Any] = (
        {k: t4[k] for k in ("startDate", "endDate", "pointBudget", "status")} if t4 else {}
    )
    wanted = {
        "startDate": "2026-05-18",
        "endDate": "2026-05-29",
        "pointBudget": 20,
        "status": "planned",
    }
    return [
        acting(final, initial, "Leila Farouk"),
        silo.check("a sprint named Telemetry T4 exists in the project", t4 is not None),
        silo.check(
            "T4 has the requested dates, budget and is planned", shape == wanted, str(shape)
        ),
        every(
            "every unassigned, unstarted T3 item moved to T4", arrived, movers, "moved", listed=True
        ),
        silo.check(
            "T3 is now within its budget, which was not raised",
            sprint_over_budget_by(final, t3["id"]) == 0
            and final["sprints"][t3["id"]]["pointBudget"] == t3["pointBudget"],
            f"over by {sprint_over_budget_by(final, t3['id'])}",
        ),
        silo.optional(
            "assigned or started T3 work stayed in T3",
            all(items[i]["sprintId"] == t3["id"] for i in stayers),
        ),
        silo.optional("nothing else was put into T4", not extra, f"extra: {extra}"),
        silo.optional(
            "the moved items kept their estimates",
            all(items[i]["points"] == initial["workItems"][i]["points"] for i in movers),
        ),
    ]


@silo.verifier(id="VER-005", task_id="TASK-005")
@needs_seed("Portal P5 and P6 exist in the seed")
def ver_005(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Portal P5 is completed with its unfinished work carried into a running Portal P6."""
    p5 = seed_record(initial, "sprints", "name", "Portal P5")
    p6 = seed_record(initial, "sprints", "name", "Portal P6")
    in_p5 = [i for i in initial["workItems"].values() if i["sprintId"] == p5["id"]]
    unfinished = [i["id"] for i in in_p5 if not is_closed(initial, i)]
    finished = [i["id"] for i in in_p5 if is_closed(initial, i)]
    items = final["workItems"]
    carried = [i for i in unfinished if items[i]["sprintId"] == p6["id"]]
    portal_active = [
        s for s in active_sprint_ids(final) if final["sprints"][s]["projectId"] == p5["projectId"]
    ]
    statuses_kept = all(
        items[i]["statusId"] == initial["workItems"][i]["statusId"] for i in unfinished
    )
    return [
        silo.check("Portal P5 is completed", final["sprints"][p5["id"]]["status"] == "completed"),
        silo.check("Portal P6 is active", final["sprints"][p6["id"]]["status"] == "active"),
        every("P5's unfinished work is now in P6", carried, unfinished, "carried", listed=True),
        silo.check(
            "P5's finished work stayed in P5",
            all(items[i]["sprintId"] == p5["id"] for i in finished),
        ),
        silo.optional("exactly one Portal sprint is active", len(portal_active) == 1),
        silo.optional("carried items kept their status", statuses_kept),
    ]
