"""``silo_async.world.records``: a world's state: seeding, lookups, ids, changes and the audit log.

A world keeps each collection as a map of id to record (``state["vendors"]["VEN-001"]``), with
last-used id counters in ``state["sequences"]`` and an audit log in ``state["auditLog"]``.

* **seeding**: :class:`Seed` (``data/*.json`` parsed once per process, references checked,
  cloned per rollout; a broken seed raises :class:`SeedError` naming the record), with
  :class:`Reference`;
* **lookups**: :func:`require_record` / :func:`not_found` (``Vendor "VEN-999" was not found.``,
  details ``{collection, id}``), :func:`require_status` (``invalid_state`` naming the current
  status and the ones needed), :func:`check_references`, :func:`label_of`;
* **ids and changes**: :func:`format_id`, :func:`next_id`, :func:`set_field` and
  :data:`Change` (``{field, from, to}``);
* **audit**: :func:`audit` appends ``{id, at, actorId, action, entityType, entityId, detail,
  changes}`` to ``state["auditLog"]``;
* **types**: :class:`WorldState` (the clock, audit log and id counters every world has, for a
  world's ``State`` to extend), :data:`Records` (a collection: a map of id to record) and
  :class:`AuditEntry`.
"""

from __future__ import annotations

from ._audit import audit as audit
from ._records import Change as Change
from ._records import check_references as check_references
from ._records import format_id as format_id
from ._records import label_of as label_of
from ._records import next_id as next_id
from ._records import not_found as not_found
from ._records import require_record as require_record
from ._records import require_status as require_status
from ._records import set_field as set_field
from ._seed import Reference as Reference
from ._seed import Seed as Seed
from ._seed import SeedError as SeedError
from ._types import AuditEntry as AuditEntry
from ._types import Records as Records
from ._types import WorldState as WorldState

__all__ = [
    "AuditEntry",
    "Change",
    "Records",
    "Reference",
    "Seed",
    "SeedError",
    "WorldState",
    "audit",
    "check_references",
    "format_id",
    "label_of",
    "next_id",
    "not_found",
    "require_record",
    "require_status",
    "set_field",
]
