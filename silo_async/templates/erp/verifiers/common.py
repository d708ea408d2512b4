"""Lookups the ERP verifiers share: records found by what they are, not by hard-coded id."""

from __future__ import annotations

from typing import Any

from silo_async import world as w

from ..domain.stock import find_stock
from ..state import Record, State, full_name

__all__ = ["approval_of", "stock_at", "unchanged_except", "user_named", "warehouse_in"]


def user_named(state: State, name: str) -> Record:
    """The user with this full name."""
    user: Record = next(u for u in w.tools.sorted_by_id(state["users"]) if full_name(u) == name)
    return user


def warehouse_in(state: State, city: str) -> Record:
    """The warehouse in ``city``."""
    found: Record = next(h for h in w.tools.sorted_by_id(state["warehouses"]) if h["city"] == city)
    return found


def approval_of(state: State, document_id: str, status: str) -> Record | None:
    """The latest approval of a document with this status, or None."""
    found = [a for a in w.tools.sorted_by_id(state["approvals"])
             if a["documentId"] == document_id and a["status"] == status]  # fmt: skip
    return found[-1] if found else None


def stock_at(state: State, product_id: str, warehouse_id: str) -> Record:
    """The stock line of a product in a warehouse (it must exist)."""
    record = find_stock(state, product_id, warehouse_id)
    if record is None:
        raise LookupError(f"No stock line for {product_id} at {warehouse_id}.")
    return record


def unchanged_except(final: State, initial: State, collection: str, allowed: Any) -> list[str]:
    """Ids of ``collection`` changed during the rollout other than ``allowed`` ones."""
    keep = set(allowed)
    return [i for i in w.grade.changed_ids(final, initial, collection) if i not in keep]
