"""Build a fresh project-tracker world from ``data/*.json`` on every call.

:class:`~silo_async.world.Seed` indexes each collection by id, parses the files once per
process and checks every reference below and the id counters, so a broken seed fails at import,
naming the record.
"""

from __future__ import annotations

from pathlib import Path

from silo_async import world as w

from .state import State

__all__ = ["SEED", "create_state"]

# (collection, field, target collection): every non-null value must name an existing record.
_REFERENCES: list[w.records.Reference] = [
    ("teams", "leadId", "members"),
    ("members", "teamId", "teams"),
    ("projects", "leadId", "members"),
    ("projects", "teamId", "teams"),
    ("sprints", "projectId", "projects"),
    ("workItems", "projectId", "projects"),
    ("workItems", "sprintId", "sprints"),
    ("workItems", "statusId", "workflowStates"),
    ("workItems", "assigneeId", "members"),
    ("workItems", "reporterId", "members"),
    ("dependencies", "blockerId", "workItems"),
    ("dependencies", "blockedId", "workItems"),
    ("comments", "workItemId", "workItems"),
    ("comments", "authorId", "members"),
    ("timeLogs", "workItemId", "workItems"),
    ("timeLogs", "memberId", "members"),
]

# Master data first, then the records people work on, then the log: state-diff.json reads best.
_ORDER = (
    "clock", "teams", "members", "projects", "sprints", "workflowStates", "workItems",
    "dependencies", "comments", "timeLogs", "auditLog", "sequences",
)  # fmt: skip

SEED = w.Seed(Path(__file__).parent / "data", references=_REFERENCES, order=_ORDER)


def create_state() -> State:
    """Return a fresh, independent copy of the seed world."""
    world: State = SEED.clone()
    return world
