"""``silo_async.world.fields``: a tool's input, declared once and read in one house style.

An :class:`Input` class declares a tool's input as typed fields; the schema, the parsed values
and the messages of refused input all come from that one declaration::

    class Claim(w.Input):
        employeeId = w.fields.string("Who spent the money.")
        category = w.fields.enum("Kind of expense.", CATEGORIES)
        amount = w.fields.money("Amount incl. VAT.")
        incurredOn = w.fields.date("When")
        note = w.fields.string("Anything to add.", default=None)

    @ACTOR.write_tool(Claim)
    def submit_expense(call: w.Write[Claim]) -> dict[str, Any]:
        call.args.amount  # rounded to cents; 0 is "amount" must be a positive amount...

* **kinds**: :func:`string`, :func:`enum`, :func:`integer`, :func:`number`, :func:`money`,
  :func:`boolean`, :func:`date`, :func:`strings`, :func:`objects` (a list of objects, each an
  :class:`Input`), :func:`ref` (an id read as the record it names, a :class:`Ref`: ``account =
  ref("accounts", "Account id.")`` reads ``accountId`` and is ``not_found`` for a missing
  record), :func:`field` (any schema, any reader), and :data:`LIMIT` / :data:`OFFSET` (a list's
  paging, as ``paginate`` reads it). Every kind takes ``default=`` (then the field is optional:
  absent and null both give the default);
* **the input**: :class:`Input`, :class:`Field`, :func:`schema_of`, :func:`fields_of`,
  :func:`read` (a field read again with a bound or default known only at call time, or
  with ``default=REQUIRED`` where a call needs a field the schema leaves optional),
  :func:`given` (which fields the input gives, none of them read), :func:`input_of` (the
  input as given) and :func:`require_some` (an update gives at least one);
* **readers**, the rules fields apply, for reading a mapping directly: :func:`read_string`,
  :func:`read_int`, :func:`read_number`, :func:`read_money`, :func:`read_bool`,
  :func:`read_enum`, :func:`read_date`, :func:`read_strings`, :func:`read_objects`, and
  :func:`invalid` (the house style's ``invalid_input``: ``"quantity" must be a whole number;
  received 2.5.``), with their default bounds :data:`MAX_INTEGER`, :data:`MAX_NUMBER`,
  :data:`MAX_AMOUNT`.
"""

from __future__ import annotations

from ._fields import Field as Field
from ._fields import Input as Input
from ._fields import fields_of as fields_of
from ._fields import given as given
from ._fields import input_of as input_of
from ._fields import read as read
from ._fields import require_some as require_some
from ._fields import schema_of as schema_of
from ._kinds import LIMIT as LIMIT
from ._kinds import OFFSET as OFFSET
from ._kinds import Ref as Ref
from ._kinds import boolean as boolean
from ._kinds import date as date
from ._kinds import enum as enum
from ._kinds import field as field
from ._kinds import integer as integer
from ._kinds import money as money
from ._kinds import number as number
from ._kinds import objects as objects
from ._kinds import ref as ref
from ._kinds import string as string
from ._kinds import strings as strings
from ._numbers import MAX_AMOUNT as MAX_AMOUNT
from ._numbers import MAX_INTEGER as MAX_INTEGER
from ._numbers import MAX_NUMBER as MAX_NUMBER
from ._numbers import read_int as read_int
from ._numbers import read_money as read_money
from ._numbers import read_number as read_number
from ._readers import REQUIRED as REQUIRED
from ._readers import invalid as invalid
from ._readers import read_bool as read_bool
from ._readers import read_date as read_date
from ._readers import read_enum as read_enum
from ._readers import read_objects as read_objects
from ._readers import read_string as read_string
from ._readers import read_strings as read_strings

__all__ = [
    "LIMIT",
    "MAX_AMOUNT",
    "MAX_INTEGER",
    "MAX_NUMBER",
    "OFFSET",
    "REQUIRED",
    "Field",
    "Input",
    "Ref",
    "boolean",
    "date",
    "enum",
    "field",
    "fields_of",
    "given",
    "input_of",
    "integer",
    "invalid",
    "money",
    "number",
    "objects",
    "read",
    "read_bool",
    "read_date",
    "read_enum",
    "read_int",
    "read_money",
    "read_number",
    "read_objects",
    "read_string",
    "read_strings",
    "ref",
    "require_some",
    "schema_of",
    "string",
    "strings",
]
