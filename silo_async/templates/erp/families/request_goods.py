"""request-goods: a requisition raised, costed and sent to someone who may approve it.

An employee needs products, named as the catalogue names them. The requisition goes on their
department's open budget, priced at standard cost, and is submitted to their manager — unless
its estimated net is above the manager's requisition limit, in which case it goes to the
purchasing manager (when that covers it) or else the CFO. The requester never approves their
own.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.clock import add_days, today
from silo_async.world.tools import sorted_by_id

from ..state import Record, State, is_authorised
from ._common import as_actor, name_of

__all__ = ["family"]


def _approver(world: State, requester: Record, net: float) -> Record | None:
    """The manager when authorised, else the purchasing manager, else the CFO."""
    users = sorted_by_id(world["users"])
    manager: Record | None = world["users"].get(requester["managerId"] or "")
    candidates = [manager]
    candidates += [u for u in users if u["roleId"] == "purchasing_manager"]
    candidates += [u for u in users if u["roleId"] == "cfo"]
    for user in candidates:
        if (
            user is not None
            and user["active"]
            and user["id"] != requester["id"]
            and is_authorised(world, user, "requisition", net)
        ):
            found: Record = user
            return found
    return None


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A requester, one to three products and quantities, the budget and the approver."""
    users = [u for u in sorted_by_id(world["users"]) if u["active"] and u["managerId"]]
    requester = rng.choice(users)
    budgets = [
        b
        for b in sorted_by_id(world["budgets"])
        if b["departmentId"] == requester["departmentId"] and b["status"] == "open"
    ]
    if not budgets:
        raise silo.NoInstance(f"{requester['departmentId']} has no open budget")
    products = [p for p in sorted_by_id(world["products"]) if p["status"] == "active"]
    picked = rng.sample(products, rng.randint(1, 3))
    lines = [[p["id"], rng.randint(1, 40)] for p in picked]
    net = sum(world["products"][pid]["standardCost"] * qty for pid, qty in lines)
    approver = _approver(world, requester, net)
    if approver is None:
        raise silo.NoInstance(f"nobody may approve {net}")
    return {
        "requester": name_of(requester),
        "requesterId": requester["id"],
        "departmentId": requester["departmentId"],
        "budgetId": budgets[0]["id"],
        "lines": lines,
        "goods": [f"{qty} × {world['products'][pid]['name']}" for pid, qty in lines],
        "neededBy": add_days(today(world), rng.randint(7, 60)),
        "approver": name_of(approver),
        "approverId": approver["id"],
        "actor": name_of(requester),
        "actorId": requester["id"],
        # The id the requisition gets: the world numbers them (the submission names it).
        "requisitionId": f"REQ-{world['sequences']['REQ'] + 1:04d}",
    }


def instruction(p: Mapping[str, Any]) -> str:
    """What the requester needs, in the catalogue's words."""
    return (
        f"I'm {p['requester']}. I need {', '.join(p['goods'])} by {p['neededBy']}. Raise a "
        "requisition for me on my department's budget (standard cost is fine) and submit it to "
        "my manager for approval — or, if it is more than my manager may approve, to the "
        "purchasing manager, or failing that the CFO. Do it as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """The draft, then its submission."""
    actor = p["actorId"]
    lines = [{"productId": pid, "quantity": qty} for pid, qty in p["lines"]]
    return [
        silo.Call(
            "create_requisition",
            {
                "requesterId": p["requesterId"],
                "departmentId": p["departmentId"],
                "budgetId": p["budgetId"],
                "justification": "Needed for daily work",
                "neededBy": p["neededBy"],
                "lines": lines,
                "actorId": actor,
            },
        ),
        silo.Call(
            "submit_requisition",
            {"requisitionId": p["requisitionId"], "approverId": p["approverId"], "actorId": actor},
        ),
    ]


family = silo.TaskFamily(
    id="request-goods",
    title="Raise and submit a requisition to the right approver",
    difficulty="hard",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD", "requisitions.*.justification"),
)
