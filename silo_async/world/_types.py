"""The shape every world on the toolkit shares, as types a world's ``State`` builds on.

The toolkit's conventions (see the package docstring) are facts about the state: a simulated
clock, an audit log, last-used id counters, and collections mapping id to record. Stating them
once as types lets a world declare only its own collections::

    class State(w.WorldState):
        vendors: w.Records[Vendor]
        invoices: w.Records[Invoice]

The types exist for the type checker only; at run time a world is plain JSON data.
"""

from __future__ import annotations

from typing import Any, TypeAlias, TypedDict, TypeVar

__all__ = ["AuditEntry", "Clock", "Records", "WorldState"]

R = TypeVar("R")

#: A collection: a map of id to record, e.g. ``state["vendors"]["VEN-001"]`` (in id order).
Records: TypeAlias = dict[str, R]


class Clock(TypedDict):
    """``state["clock"]``: ``now`` is an ISO-8601 UTC timestamp, the only "now" a world knows."""

    now: str
    timezone: str


class AuditEntry(TypedDict):
    """One entry of ``state["auditLog"]``, as :func:`audit` appends it (ids ``AUD-NNNN``)."""

    id: str
    at: str
    actorId: str
    action: str
    entityType: str
    entityId: str
    detail: str
    changes: list[dict[str, Any]]


class WorldState(TypedDict):
    """The keys every world has; a world's ``State`` extends it with its own collections.

    Attributes:
        clock: the simulated clock (:func:`now`, :func:`today`, the clock tools).
        auditLog: every write, oldest first (:func:`audit`, the audit tools).
        sequences: last-used id counters by prefix (:func:`next_id`).
    """

    clock: Clock
    auditLog: list[AuditEntry]
    sequences: dict[str, int]
