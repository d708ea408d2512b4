"""``silo_async.world``: the toolkit every world is built from, tested once.

A world (an environment's state, tools and verifiers) keeps only its domain: state types, rules,
views, tools, tasks, verifiers and data. The plumbing lives here, so tools built with it behave
the same in every world, and a fix reaches every project that uses it:

* **schemas**: :func:`string`, :func:`enum`, :func:`integer`, :func:`number`, :func:`money`,
  :func:`boolean`, :func:`date`, :func:`array`, :func:`closed_object`, :data:`PAGING`, and
  :func:`define_tool` (a tool with a closed input schema);
* **input readers** raising ``invalid_input`` in one house style (``"quantity" must be a whole
  number; received 2.5.``): :func:`read_string`, :func:`read_int`, :func:`read_number`,
  :func:`read_money`, :func:`read_bool`, :func:`read_enum`, :func:`read_date`,
  :func:`read_strings`, :func:`read_objects`, :func:`require_some`;
* **lists**: :func:`paginate` (``{total, count, offset, results}``, the view applied to the page
  only), :func:`matches_text`, :func:`sorted_by_id`, the tool factories :func:`list_tool`,
  :func:`search_tool`, :func:`get_tool`, and :class:`Collection`, which names them after the
  collection (``list_sales_orders``, ``search_sales_orders``, ``get_sales_order``);
* **records**: :func:`require_record` / :func:`not_found` (``Vendor "VEN-999" was not found.``,
  details ``{collection, id}``), :func:`require_status` (``invalid_state`` naming the current
  status and the ones needed), :func:`check_references`, :func:`format_id`, :func:`next_id`,
  :func:`set_field`;
* **writes**: :class:`Actor` (the ``actorId`` every write takes, resolved before anything
  else) builds write tools with :meth:`Actor.write_tool`; a :class:`Target` names the record a
  tool acts on (looked up, then guarded); the body gets a :class:`Write` that tracks field
  changes and audits them under the tool's name;
* **time**: :func:`now`, :func:`today`, :func:`parse_date`, :func:`add_days`,
  :func:`days_between`, and the tools :data:`get_current_time` and :data:`advance_clock`;
* **audit**: :func:`audit`, the tools :data:`list_audit_entries` (oldest first) and
  :data:`get_audit_entry`, and :func:`new_audit_entries` for verifiers;
* **seeding**: :class:`Seed` (``data/*.json`` parsed once per process, references checked,
  cloned per rollout; a broken seed raises :class:`SeedError` naming the record);
* **money**: :func:`round_half_up` (the one rounding), :func:`to_money`, :func:`sum_money`,
  :func:`multiply_money`, :func:`percent`;
* **grading**: :func:`every` (a check that all of a list was done, ``2 of 3 moved`` as its
  detail), :func:`numbers_in`, :func:`states_number`, :func:`final_number`,
  :func:`few_numbers`, :func:`mentions`, :func:`mentions_id`, :func:`fold`, :func:`unchanged`,
  :func:`changed_ids`, :func:`modified_ids`, :func:`new_ids`, :func:`new_records`, :func:`find_by`;
* **types**: :class:`WorldState` (the clock, audit log and id counters every world has, for a
  world's ``State`` to extend), :class:`Clock`, :class:`AuditEntry`, and :data:`Records` (a
  collection: a map of id to record).

The conventions a world built on it follows: collections are maps of id to record, with
last-used id counters in ``state["sequences"]``; the clock is ``state["clock"]["now"]`` (an
ISO-8601 UTC timestamp) and nothing reads the wall clock; ``state["auditLog"]`` is a list of
entries ``{id, at, actorId, action, entityType, entityId, detail, changes}``; every write names
its actor with an ``actorId`` input.
"""

from __future__ import annotations

from ._audit import audit as audit
from ._audit import get_audit_entry as get_audit_entry
from ._audit import list_audit_entries as list_audit_entries
from ._audit import new_audit_entries as new_audit_entries
from ._builders import DEFAULT_LIMIT as DEFAULT_LIMIT
from ._builders import MAX_LIMIT as MAX_LIMIT
from ._builders import PAGING as PAGING
from ._builders import Schema as Schema
from ._builders import array as array
from ._builders import boolean as boolean
from ._builders import closed_object as closed_object
from ._builders import date as date
from ._builders import define_tool as define_tool
from ._builders import enum as enum
from ._builders import integer as integer
from ._builders import money as money
from ._builders import number as number
from ._builders import string as string
from ._checks import every as every
from ._clock import MAX_ADVANCE_DAYS as MAX_ADVANCE_DAYS
from ._clock import advance_clock as advance_clock
from ._clock import get_current_time as get_current_time
from ._collection import Collection as Collection
from ._dates import add_days as add_days
from ._dates import days_between as days_between
from ._dates import now as now
from ._dates import parse_date as parse_date
from ._dates import today as today
from ._grading import changed_ids as changed_ids
from ._grading import few_numbers as few_numbers
from ._grading import final_number as final_number
from ._grading import find_by as find_by
from ._grading import mentions as mentions
from ._grading import mentions_id as mentions_id
from ._grading import modified_ids as modified_ids
from ._grading import new_ids as new_ids
from ._grading import new_records as new_records
from ._grading import numbers_in as numbers_in
from ._grading import states_number as states_number
from ._grading import unchanged as unchanged
from ._lists import View as View
from ._lists import Where as Where
from ._lists import get_tool as get_tool
from ._lists import list_tool as list_tool
from ._lists import matches_text as matches_text
from ._lists import paginate as paginate
from ._lists import search_tool as search_tool
from ._lists import sorted_by_id as sorted_by_id
from ._money import multiply_money as multiply_money
from ._money import percent as percent
from ._money import round_half_up as round_half_up
from ._money import sum_money as sum_money
from ._money import to_money as to_money
from ._numbers import MAX_AMOUNT as MAX_AMOUNT
from ._numbers import MAX_INTEGER as MAX_INTEGER
from ._numbers import MAX_NUMBER as MAX_NUMBER
from ._numbers import read_int as read_int
from ._numbers import read_money as read_money
from ._numbers import read_number as read_number
from ._readers import invalid as invalid
from ._readers import read_bool as read_bool
from ._readers import read_date as read_date
from ._readers import read_enum as read_enum
from ._readers import read_objects as read_objects
from ._readers import read_string as read_string
from ._readers import read_strings as read_strings
from ._readers import require_some as require_some
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
from ._types import Clock as Clock
from ._types import Records as Records
from ._types import WorldState as WorldState
from ._values import fold as fold
from ._writes import Actor as Actor
from ._writes import Target as Target
from ._writes import Write as Write

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_ADVANCE_DAYS",
    "MAX_AMOUNT",
    "MAX_INTEGER",
    "MAX_LIMIT",
    "MAX_NUMBER",
    "PAGING",
    "Actor",
    "AuditEntry",
    "Change",
    "Clock",
    "Collection",
    "Records",
    "Reference",
    "Schema",
    "Seed",
    "SeedError",
    "Target",
    "View",
    "Where",
    "WorldState",
    "Write",
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
    "define_tool",
    "enum",
    "every",
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
