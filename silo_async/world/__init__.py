"""``silo_async.world``: the toolkit every world is built from, tested once.

A world (an environment's state, tools and verifiers) keeps only its domain: state types, rules,
views, tools, tasks, verifiers and data. The plumbing lives here, so tools built with it behave
the same in every world, and a fix reaches every project that uses it. It sits in seven
namespaces:

* :mod:`~silo_async.world.fields`: a tool's input declared once, as typed fields of an
  :class:`Input` class (the schema, the parsed values and the ``invalid_input`` messages come
  from it), and the readers behind them;
* :mod:`~silo_async.world.schema`: the JSON Schema builders fields are made of;
* :mod:`~silo_async.world.tools`: :func:`define_tool`, write tools (:class:`Actor`,
  :class:`Target`, :class:`Write`), list tools (:class:`Collection`, ``paginate``) and the
  ready-made clock and audit tools;
* :mod:`~silo_async.world.records`: seeding (:class:`Seed`), lookups with ``not_found``
  messages, ids, field changes, the audit log, and the state types (:class:`WorldState`,
  :data:`Records`);
* :mod:`~silo_async.world.clock`: the simulated clock (``now``, ``today``, ``add_days``...);
* :mod:`~silo_async.world.amounts`: money, rounded half up one way everywhere;
* :mod:`~silo_async.world.grade`: what verifiers need (:func:`every`, answer parsing,
  what changed in the world, :func:`told`: what the agent said to a task's user).

The names a world uses in nearly every file are here too: :class:`Input`, :class:`Seed`,
:class:`WorldState`, :data:`Records`, :class:`Collection`, :class:`Actor`, :class:`Target`,
:class:`Write`, :func:`define_tool`, :func:`every` and :func:`told`.

The conventions a world built on it follows: collections are maps of id to record, with
last-used id counters in ``state["sequences"]``; the clock is ``state["clock"]["now"]`` (an
ISO-8601 UTC timestamp) and nothing reads the wall clock; ``state["auditLog"]`` is a list of
entries ``{id, at, actorId, action, entityType, entityId, detail, changes}``; every write names
its actor with an ``actorId`` input.

Before the namespaces, every name sat here; those names still work until silo_async 0.2.0, with
a ``DeprecationWarning`` naming their new home (``silo_async.world.read_string`` ->
``silo_async.world.fields.read_string``); they are not in ``__all__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _deprecation
from . import amounts as amounts
from . import clock as clock
from . import fields as fields
from . import grade as grade
from . import records as records
from . import schema as schema
from . import tools as tools
from ._checks import every as every
from ._collection import Collection as Collection
from ._define import define_tool as define_tool
from ._fields import Input as Input
from ._grading import told as told
from ._seed import Seed as Seed
from ._types import Records as Records
from ._types import WorldState as WorldState
from ._writes import Actor as Actor
from ._writes import Target as Target
from ._writes import Write as Write

if TYPE_CHECKING:  # the moved names, typed (at run time they come through __getattr__)
    from .amounts import multiply_money as multiply_money
    from .amounts import percent as percent
    from .amounts import round_half_up as round_half_up
    from .amounts import sum_money as sum_money
    from .amounts import to_money as to_money
    from .clock import MAX_ADVANCE_DAYS as MAX_ADVANCE_DAYS
    from .clock import Clock as Clock
    from .clock import add_days as add_days
    from .clock import days_between as days_between
    from .clock import now as now
    from .clock import parse_date as parse_date
    from .clock import today as today
    from .fields import MAX_AMOUNT as MAX_AMOUNT
    from .fields import MAX_INTEGER as MAX_INTEGER
    from .fields import MAX_NUMBER as MAX_NUMBER
    from .fields import invalid as invalid
    from .fields import read_bool as read_bool
    from .fields import read_date as read_date
    from .fields import read_enum as read_enum
    from .fields import read_int as read_int
    from .fields import read_money as read_money
    from .fields import read_number as read_number
    from .fields import read_objects as read_objects
    from .fields import read_string as read_string
    from .fields import read_strings as read_strings
    from .fields import require_some as require_some
    from .grade import changed_ids as changed_ids
    from .grade import few_numbers as few_numbers
    from .grade import final_number as final_number
    from .grade import find_by as find_by
    from .grade import fold as fold
    from .grade import mentions as mentions
    from .grade import mentions_id as mentions_id
    from .grade import modified_ids as modified_ids
    from .grade import new_audit_entries as new_audit_entries
    from .grade import new_ids as new_ids
    from .grade import new_records as new_records
    from .grade import numbers_in as numbers_in
    from .grade import states_number as states_number
    from .grade import unchanged as unchanged
    from .records import AuditEntry as AuditEntry
    from .records import Change as Change
    from .records import Reference as Reference
    from .records import SeedError as SeedError
    from .records import audit as audit
    from .records import check_references as check_references
    from .records import format_id as format_id
    from .records import label_of as label_of
    from .records import next_id as next_id
    from .records import not_found as not_found
    from .records import require_record as require_record
    from .records import require_status as require_status
    from .records import set_field as set_field
    from .schema import DEFAULT_LIMIT as DEFAULT_LIMIT
    from .schema import MAX_LIMIT as MAX_LIMIT
    from .schema import PAGING as PAGING
    from .schema import Schema as Schema
    from .schema import array as array
    from .schema import boolean as boolean
    from .schema import closed_object as closed_object
    from .schema import date as date
    from .schema import enum as enum
    from .schema import integer as integer
    from .schema import money as money
    from .schema import number as number
    from .schema import string as string
    from .tools import View as View
    from .tools import Where as Where
    from .tools import advance_clock as advance_clock
    from .tools import get_audit_entry as get_audit_entry
    from .tools import get_current_time as get_current_time
    from .tools import get_tool as get_tool
    from .tools import list_audit_entries as list_audit_entries
    from .tools import list_tool as list_tool
    from .tools import matches_text as matches_text
    from .tools import paginate as paginate
    from .tools import search_tool as search_tool
    from .tools import sorted_by_id as sorted_by_id

_NAMESPACES = {
    "amounts": amounts,
    "clock": clock,
    "fields": fields,
    "grade": grade,
    "records": records,
    "schema": schema,
    "tools": tools,
}

#: The names that sat here before the namespaces (0.1), each now in one namespace.
_FLAT = [
    "AuditEntry",
    "Change",
    "Clock",
    "DEFAULT_LIMIT",
    "MAX_ADVANCE_DAYS",
    "MAX_AMOUNT",
    "MAX_INTEGER",
    "MAX_LIMIT",
    "MAX_NUMBER",
    "PAGING",
    "Reference",
    "Schema",
    "SeedError",
    "View",
    "Where",
    "add_days",
    "advance_clock",
    "array",
    "audit",
    "boolean",
    "changed_ids",
    "check_references",
    "closed_object",
    "date",
    "days_between",
    "enum",
    "few_numbers",
    "final_number",
    "find_by",
    "fold",
    "format_id",
    "get_audit_entry",
    "get_current_time",
    "get_tool",
    "integer",
    "invalid",
    "label_of",
    "list_audit_entries",
    "list_tool",
    "matches_text",
    "mentions",
    "mentions_id",
    "modified_ids",
    "money",
    "multiply_money",
    "new_audit_entries",
    "new_ids",
    "new_records",
    "next_id",
    "not_found",
    "now",
    "number",
    "numbers_in",
    "paginate",
    "parse_date",
    "percent",
    "read_bool",
    "read_date",
    "read_enum",
    "read_int",
    "read_money",
    "read_number",
    "read_objects",
    "read_string",
    "read_strings",
    "require_record",
    "require_some",
    "require_status",
    "round_half_up",
    "search_tool",
    "set_field",
    "sorted_by_id",
    "states_number",
    "string",
    "sum_money",
    "to_money",
    "today",
    "unchanged",
]

#: Each name that sat here before the namespaces, and the namespace it moved to.
_MOVED: dict[str, str] = {
    name: home for home, module in _NAMESPACES.items() for name in module.__all__ if name in _FLAT
}
_DEPRECATED = _deprecation.DeprecatedNames(
    __name__, {name: f"{__name__}.{home}.{name}" for name, home in _MOVED.items()}
)
#: The deprecated names and where each lives now: what a tool walking the surface reads.
__deprecated__ = _DEPRECATED.replacements

if not TYPE_CHECKING:  # mypy sees the moved names above; a typo stays an error there
    __getattr__ = _DEPRECATED.attribute


def __dir__() -> list[str]:
    """What a newcomer scans: the namespaces and the names used in every world."""
    return sorted(__all__)


#: The names of this release (the moved ones work without being listed, with a warning).
__all__ = [
    "Actor",
    "Collection",
    "Input",
    "Records",
    "Seed",
    "Target",
    "WorldState",
    "Write",
    "amounts",
    "clock",
    "define_tool",
    "every",
    "fields",
    "grade",
    "records",
    "schema",
    "told",
    "tools",
]
