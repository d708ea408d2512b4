"""``silo_async.world.schema``: the JSON Schemas (Draft 2020-12) world tools declare.

Every property carries a description (the agent reads it), objects are closed
(``additionalProperties: false``) and ``required`` names only declared properties. Most tools
declare their input with typed fields (:mod:`silo_async.world.fields`), which build these
schemas; the builders are for what fields do not cover (a nested shape, a list filter compared
as given).

* :func:`string`, :func:`enum`, :func:`integer`, :func:`number`, :func:`money`,
  :func:`boolean`, :func:`date`, :func:`array`, :func:`closed_object`;
* :data:`PAGING` (``limit`` and ``offset`` of every list), :data:`DEFAULT_LIMIT`,
  :data:`MAX_LIMIT`, and :data:`Schema` (the type of a schema: a dict).
"""

from __future__ import annotations

from ._builders import DEFAULT_LIMIT as DEFAULT_LIMIT
from ._builders import MAX_LIMIT as MAX_LIMIT
from ._builders import PAGING as PAGING
from ._builders import Schema as Schema
from ._builders import array as array
from ._builders import boolean as boolean
from ._builders import closed_object as closed_object
from ._builders import date as date
from ._builders import enum as enum
from ._builders import integer as integer
from ._builders import money as money
from ._builders import number as number
from ._builders import string as string

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "PAGING",
    "Schema",
    "array",
    "boolean",
    "closed_object",
    "date",
    "enum",
    "integer",
    "money",
    "number",
    "string",
]
