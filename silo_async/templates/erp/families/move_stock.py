"""move-stock: units go from one warehouse to another and are booked in on arrival.

The agent is told a product by name and warehouses by city. Only available stock can travel
(on hand less what customer orders have reserved), so the amount asked always fits what is free
— but not always what is on hand. The transfer leaves the source now; the truck arrives today,
so the transfer is also received at the destination.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..domain.stock import available
from ..state import State
from ._common import as_actor, name_of, users_who

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A stock line with free units, another warehouse, an amount and a warehouse user."""
    lines = [
        s
        for s in sorted_by_id(world["stock"])
        if available(world, s) >= 2 and world["products"][s["productId"]]["status"] == "active"
    ]
    if not lines:
        raise silo.NoInstance("no active product has free stock anywhere")
    line = rng.choice(lines)
    others = [w for w in sorted_by_id(world["warehouses"]) if w["id"] != line["warehouseId"]]
    destination = rng.choice(others)
    actor = rng.choice(users_who(world, "warehouse"))
    source = world["warehouses"][line["warehouseId"]]
    return {
        "product": world["products"][line["productId"]]["name"],
        "productId": line["productId"],
        "from": source["city"],
        "fromId": source["id"],
        "to": destination["city"],
        "toId": destination["id"],
        "quantity": rng.randint(1, available(world, line)),
        "actor": name_of(actor),
        "actorId": actor["id"],
        # The id the new transfer gets: the world numbers them (the receipt names it).
        "transferId": f"TRF-{world['sequences']['TRF'] + 1:03d}",
    }


def instruction(p: Mapping[str, Any]) -> str:
    """Cities and a product name, as a warehouse lead says it."""
    return (
        f"I'm {p['actor']}. Send {p['quantity']} {p['product']} from our {p['from']} warehouse "
        f"to {p['to']}. The truck gets there today, so book them in at {p['to']} as well. Do it "
        "as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """The transfer out, then its receipt (the first transfer the world numbers)."""
    actor = p["actorId"]
    return [
        silo.Call(
            "create_transfer",
            {
                "productId": p["productId"],
                "fromWarehouseId": p["fromId"],
                "toWarehouseId": p["toId"],
                "quantity": p["quantity"],
                "reason": f"Rebalance stock to {p['to']}",
                "actorId": actor,
            },
        ),
        silo.Call("receive_transfer", {"transferId": p["transferId"], "actorId": actor}),
    ]


family = silo.TaskFamily(
    id="move-stock",
    title="Move stock between warehouses",
    difficulty="medium",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD", "transfers.*.reason", "stockMovements.*.reason"),
)
