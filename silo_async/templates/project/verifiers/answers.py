"""Verifiers for answer-producing tasks.

Each expected value is derived from the *initial* world with the helpers the tools use, never
hard-coded. Each also carries negative checks: the value a careless reading would give (the
qualifier trap) or names that should not appear, so listing everything in sight fails.
"""

from __future__ import annotations

from collections.abc import Callable

import silo_async as silo
from silo_async.world.grade import few_numbers, mentions, mentions_id, states_number, unchanged

from ..state import (
    Record,
    State,
    blocked_item_ids,
    hours_by_project,
    is_closed,
    is_departed,
    is_overdue,
    over_capacity_by,
    sprint_delivered_points,
    sprint_over_budget_by,
)
from .seed import needs_seed, seed_record

__all__ = ["ver_011", "ver_012", "ver_013", "ver_014", "ver_015", "ver_016", "ver_017"]


#: The most figures an answer may state: it commits to one, it does not list all it saw.
FEW = 3


def _untouched(final: State, initial: State) -> silo.Check:
    return silo.optional("the world was left unchanged", unchanged(final, initial))


def _commits(text: str) -> silo.Check:
    """The answer states at most :data:`FEW` figures (a dump of everything in sight fails)."""
    return silo.check(f"commits to an answer (at most {FEW} figures)", few_numbers(text, FEW))


def _figure(
    text: str, figure: float, stated: str, avoided: str, traps: list[float], named: str
) -> list[silo.Check]:
    """The answer states ``figure`` (check ``stated``) and none of ``traps`` (check ``avoided``).

    ``traps`` are what a careless reading gives (a dropped qualifier, another record's figure);
    the second check's detail lists them after ``named``.
    """
    return [
        silo.check(stated, states_number(text, figure)),
        silo.check(avoided, not any(states_number(text, v) for v in traps), f"{named} {traps}"),
        _commits(text),
    ]


def _the_one(
    text: str, name: str, figure: float, stated: str, others: list[str], kind: str
) -> list[silo.Check]:
    """The answer names ``name``, states ``figure`` (check label ``stated``), names no other."""
    return [
        silo.check(f"names {name}", mentions(text, name)),
        silo.check(stated, states_number(text, figure)),
        silo.check(f"names no other {kind}", not any(mentions(text, n) for n in others)),
        _commits(text),
    ]


@silo.verifier(id="VER-011", task_id="TASK-011")
def ver_011(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Count and name the items held up by an unfinished dependency (computed, not stored)."""
    text = ctx.agent_output
    expected = blocked_item_ids(initial)
    stale = [
        i["id"]
        for i in initial["workItems"].values()
        if i["statusId"] == "blocked" and i["id"] not in expected
    ]
    return [
        silo.check(f"states the count {len(expected)}", states_number(text, len(expected))),
        silo.check(
            "names every held-up item",
            all(mentions_id(text, i) for i in expected),
            f"expected {', '.join(expected)}",
        ),
        silo.check(
            "does not name an item whose blocker is already done",
            not any(mentions_id(text, i) for i in stale),
            f"stale Blocked status: {', '.join(stale)}",
        ),
        _commits(text),
        silo.optional("the seed has a stale Blocked item to trip over", bool(stale)),
        _untouched(final, initial),
    ]


@silo.verifier(id="VER-012", task_id="TASK-012")
@needs_seed("the project exists in the seed")
def ver_012(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """State the hours logged on the Warehouse Telemetry Pipeline."""
    text = ctx.agent_output
    project = seed_record(initial, "projects", "name", "Warehouse Telemetry Pipeline")
    totals = hours_by_project(initial)
    expected = totals[project["id"]]
    others = [h for p, h in totals.items() if p != project["id"] and abs(h - expected) > 0.01]
    avoided = "does not also state another project's total"
    return [
        *_figure(text, expected, f"states {expected:g} hours", avoided, others, "other totals"),
        _untouched(final, initial),
    ]


def _overdue_points(state: State, *, active_only: bool) -> int:
    members = state["members"]
    total = 0
    for item in state["workItems"].values():
        if not is_overdue(state, item):
            continue
        holder: Record | None = members.get(item["assigneeId"] or "")
        if active_only and (holder is None or is_departed(holder)):
            continue
        total += int(item["points"])
    return total


@silo.verifier(id="VER-013", task_id="TASK-013")
def ver_013(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Overdue points held by people still here: the departed and the unassigned excluded."""
    text = ctx.agent_output
    expected = _overdue_points(initial, active_only=True)
    everything = _overdue_points(initial, active_only=False)
    assigned = sum(
        int(i["points"])
        for i in initial["workItems"].values()
        if is_overdue(initial, i) and i["assigneeId"]
    )
    traps = sorted({float(everything), float(assigned)} - {float(expected)})
    avoided = "does not state a total that ignores the qualifier"
    return [
        *_figure(text, expected, f"states {expected} points", avoided, traps, "unqualified totals"),
        silo.optional("the qualifier changes the answer", bool(traps)),
        _untouched(final, initial),
    ]


def _over_the_line(
    number: str, collection: str, excess_of: Callable[[State, str], int], kind: str, what: str
) -> silo.Verifier:
    """VER-<number>: name the record furthest over its limit (``excess_of`` > 0) and by how much.

    The answer names that record and its excess, and no other record of ``collection``.
    """

    def verify(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
        records: list[Record] = list(initial[collection].values())  # type: ignore[literal-required]
        excess = {r["id"]: excess_of(initial, r["id"]) for r in records}
        over = [r for r in records if excess[r["id"]] > 0]
        if not over:
            return [silo.check(f"some {kind} is over {what} in the seed", False)]
        worst = max(over, key=lambda r: (excess[r["id"]], r["id"]))
        amount = excess[worst["id"]]
        others = [r["name"] for r in records if r["id"] != worst["id"]]
        label = f"states the {'overage' if kind == 'member' else 'excess'} of {amount} points"
        return [
            *_the_one(ctx.agent_output, worst["name"], amount, label, others, kind),
            silo.optional(f"exactly one {kind} is over {what}", len(over) == 1),
            _untouched(final, initial),
        ]

    name = _OVER_THE_LINE[kind]
    return silo.verifier(id=f"VER-{number}", task_id=f"TASK-{number}", name=name)(verify)


_OVER_THE_LINE = {
    "member": "Name the over-committed member and the overage.",
    "sprint": "The sprint committed beyond its budget, and by how much.",
}
ver_014 = _over_the_line("014", "members", over_capacity_by, "member", "capacity")
ver_016 = _over_the_line("016", "sprints", sprint_over_budget_by, "sprint", "budget")


@silo.verifier(id="VER-015", task_id="TASK-015")
def ver_015(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """The completed sprint that delivered the most points, and the points."""
    text = ctx.agent_output
    done = [s for s in initial["sprints"].values() if s["status"] == "completed"]
    if not done:
        return [silo.check("the seed has completed sprints", False)]
    scores = {s["id"]: sprint_delivered_points(initial, s["id"]) for s in done}
    best = max(done, key=lambda s: (scores[s["id"]], s["id"]))
    runners = [s["name"] for s in done if s["id"] != best["id"]]
    ties = [s for s in done if scores[s["id"]] == scores[best["id"]]]
    return [
        *_the_one(
            text,
            best["name"],
            scores[best["id"]],
            f"states {scores[best['id']]} points",
            runners,
            "sprint",
        ),
        silo.optional("the winner is unambiguous", len(ties) == 1),
        _untouched(final, initial),
    ]


@silo.verifier(id="VER-017", task_id="TASK-017")
@needs_seed("the project exists in the seed")
def ver_017(final: State, initial: State, ctx: silo.VerifierContext) -> list[silo.Check]:
    """Count Route Optimizer items in Backlog with no assignee."""
    text = ctx.agent_output
    project = seed_record(initial, "projects", "name", "Route Optimizer v3")
    items = [i for i in initial["workItems"].values() if i["projectId"] == project["id"]]
    expected = sum(1 for i in items if i["statusId"] == "backlog" and not i["assigneeId"])
    in_backlog = sum(1 for i in items if i["statusId"] == "backlog")
    unowned_open = sum(1 for i in items if not i["assigneeId"] and not is_closed(initial, i))
    everywhere = sum(
        1
        for i in initial["workItems"].values()
        if i["statusId"] == "backlog" and not i["assigneeId"]
    )
    traps = sorted({float(in_backlog), float(unowned_open), float(everywhere)} - {float(expected)})
    avoided = "does not state a count that drops a qualifier"
    return [
        *_figure(text, expected, f"states {expected}", avoided, traps, "traps"),
        _untouched(final, initial),
    ]
