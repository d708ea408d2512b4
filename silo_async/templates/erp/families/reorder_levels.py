"""reorder-levels: one category's stock lines in one warehouse get new reorder levels.

The agent is told a category in words and a warehouse by city; it must find every stock line
of that category there (products are categorised, stock lines are not) and set both levels on
each — skipping a line that already has them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import silo_async as silo
from silo_async.world.tools import sorted_by_id

from ..state import State
from ._common import as_actor, name_of, users_who

__all__ = ["family"]


def sample(world: State, rng: random.Random) -> dict[str, Any]:
    """A warehouse, a category stocked there, new levels and a warehouse user."""
    pairs = sorted(
        {
            (s["warehouseId"], world["products"][s["productId"]]["category"])
            for s in world["stock"].values()
        }
    )
    if not pairs:
        raise silo.NoInstance("nothing is stocked")
    warehouse_id, category = rng.choice(pairs)
    point = rng.randrange(10, 150, 5)
    quantity = rng.randrange(point, point + 200, 10)
    lines = [
        s["id"]
        for s in sorted_by_id(world["stock"])
        if s["warehouseId"] == warehouse_id
        and world["products"][s["productId"]]["category"] == category
        and (s["reorderPoint"], s["reorderQuantity"]) != (point, quantity)
    ]
    if not lines:
        raise silo.NoInstance("every line already has these levels")
    actor = rng.choice(users_who(world, "warehouse"))
    return {
        "warehouse": world["warehouses"][warehouse_id]["city"],
        "warehouseId": warehouse_id,
        "category": category,
        "point": point,
        "quantity": quantity,
        "lines": [[world["stock"][i]["productId"], i] for i in lines],
        "actor": name_of(actor),
        "actorId": actor["id"],
    }


def instruction(p: Mapping[str, Any]) -> str:
    """The category as the catalogue writes it."""
    category = p["category"].replace("_", " ")
    return (
        f"I'm {p['actor']}. In our {p['warehouse']} warehouse, every product in the {category} "
        f"category should be reordered at {p['point']} units, {p['quantity']} at a time. Set "
        "those reorder levels on each of them. Do it as me."
    )


def gold(p: Mapping[str, Any]) -> list[silo.Call]:
    """Both levels on each stock line of the category."""
    return [
        silo.Call(
            "set_reorder_levels",
            {
                "productId": product,
                "warehouseId": p["warehouseId"],
                "reorderPoint": p["point"],
                "reorderQuantity": p["quantity"],
                "actorId": p["actorId"],
            },
        )
        for product, _line in p["lines"]
    ]


family = silo.TaskFamily(
    id="reorder-levels",
    title="Set a category's reorder levels in a warehouse",
    difficulty="easy",
    sample=sample,
    instruction=instruction,
    gold=gold,
    checks=as_actor,
    ignore=("auditLog", "sequences.AUD"),
)
