"""record-count: a cycle count is recorded, and a shortfall below reservations is dealt with.

The counter reports units on the shelf for a product in a warehouse. Recording it posts the
variance; but a count below what customer orders have reserved is refused — the warehouse
must first release the newest reservations on that line until the count covers the rest, as a
lead would (oldest orders keep their goods).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..domain.stock import held, reserved
from ..state import State
from ._common import as_actor, name_of, users_who

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A stock line, a count near its on-hand, and a warehouse user."""
    line = rng.choice(sorted_by_id(world["stock"]))
    on_hand = int(line["onHand"])
    counted = max(0, on_hand + rng.randint(-max(5, on_hand // 3), max(5, on_hand // 5)))
    if counted == on_hand:
        counted += 1
    holding = [
        r
        for r in sorted_by_id(world["reservations"])
        if r["productId"] == line["productId"]
        and r["warehouseId"] == line["warehouseId"]
        and held(r) > 0
    ]
    release, still = [], reserved(world, line["productId"], line["warehouseId"])
    for reservation in reversed(holding):  # newest first
        if still <= counted:
            break
        release.append(reservation["id"])
        still -= held(reservation)
    actor = rng.choice(users_who(world, "warehouse"))
    return {
        "product": world["products"][line["productId"]]["name"],
        "productId": line["productId"],
        "warehouse": world["warehouses"][line["warehouseId"]]["city"],
        "warehouseId": line["warehouseId"],
        "counted": counted,
        "release": release,
        "actor": name_of(actor),
        "actorId": actor["id"],
    }


def instruction(p: Mapping[str, Any]) -> str:
    """What the counter found."""
    return (
        f"I'm {p['actor']}. The cycle count in {p['warehouse']} found {p['counted']} "
        f"{p['product']} on the shelf. Record the count. If it is less than what customer "
        "orders have reserved there, first release reservations on it, newest first, until "
        "the count covers what stays reserved. Do it as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Releases (newest first) when needed, then the count."""
    actor = p["actorId"]
    calls = [
        silo.Call(
            "release_reservation",
            {"reservationId": r, "reason": "Cycle count shortfall", "actorId": actor},
        )
        for r in p["release"]
    ]
    calls.append(
        silo.Call(
            "count_stock",
            {
                "productId": p["productId"],
                "warehouseId": p["warehouseId"],
                "countedQuantity": p["counted"],
                "actorId": actor,
            },
        )
    )
    return calls


family = silo.TaskFamily(
    id="record-count",
    title="Record a cycle count",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD", "stockMovements.*.reason"),
)
