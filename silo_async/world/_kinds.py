"""The kinds of field: each pairs a schema builder with the reader of the same rules.

``string("Lead id.")`` is the property ``{"type": "string", "minLength": 1, "description":
...}`` and reads a stripped, non-empty string; ``money("Amount.")`` is a number of at least 0
and reads an amount rounded half up to cents. Every kind takes ``default=`` (the field is then
optional: an absent or null key gives the default) and, where the reader checks more than the
schema states, ``raw=True`` (take the value exactly as the schema admitted it: not stripped, not
range-checked beyond the schema) for worlds whose rules were written against the raw input.
``ref("accounts", "Account id.")`` reads an id as ``string`` does and gives the record it names
(``not_found`` in the one shape of :func:`~silo_async.world.records.require_record`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, overload

from .._errors import DefinitionError
from . import _builders as schema
from ._fields import Field, Input, Reader, schema_of
from ._numbers import (
    MAX_AMOUNT,
    int_rule,
    money_rule,
    number_rule,
    read_int,
    read_money,
    read_number,
)
from ._readers import (
    REQUIRED,
    bool_rule,
    date_rule,
    enum_rule,
    objects_rule,
    read_bool,
    read_date,
    read_enum,
    read_string,
    read_strings,
    string_rule,
    strings_rule,
    take,
)
from ._records import require_record

__all__ = [
    "LIMIT",
    "OFFSET",
    "Ref",
    "boolean",
    "date",
    "enum",
    "field",
    "integer",
    "money",
    "number",
    "objects",
    "ref",
    "string",
    "strings",
]

T = TypeVar("T")
E = TypeVar("E", bound=str)
I = TypeVar("I", bound=Input)  # noqa: E741 (an Input type)


def field(schema: schema.Schema, *, read: Reader | None = None, default: Any = REQUIRED) -> Any:
    """A field of any schema, read by ``read`` (default: the value as the schema admitted it).

    ``read`` is called as ``read(input, key, default, path=...)``, the signature of every
    ``read_*`` reader: ``field(w.schema.number("Amount in USD."), read=read_money)``.
    """
    return Field(schema, read, default)


@overload
def string(description: str, *, pattern: str | None = None, raw: bool = False) -> Field[str]: ...
@overload
def string(
    description: str, *, default: T, pattern: str | None = None, raw: bool = False
) -> Field[str | T]: ...
def string(
    description: str, *, default: Any = REQUIRED, pattern: str | None = None, raw: bool = False
) -> Any:
    """A non-empty string, read stripped of surrounding white space (a blank one refused)."""
    prop = schema.string(description, pattern=pattern)
    if raw:
        return Field(prop, None, default)
    return Field(prop, read_string, default, rule=string_rule)


def _read_enum(
    input: Any, key: str, default: Any, *, path: str | None, allowed: Sequence[str]
) -> Any:
    return read_enum(input, key, allowed, default, path=path)


@overload
def enum(description: str, values: Sequence[E]) -> Field[E]: ...
@overload
def enum(description: str, values: Sequence[E], *, default: T) -> Field[E | T]: ...
def enum(description: str, values: Sequence[E], *, default: Any = REQUIRED) -> Any:
    """One of ``values`` (the message lists them).

    The field is typed as the values are: ``Literal`` values give a ``Literal`` field.
    """
    options = {"allowed": values}
    return Field(schema.enum(description, values), _read_enum, default, options, enum_rule)


def _bounds(
    minimum: float | None, maximum: float | None, bounds: tuple[Any, Any] | None
) -> dict[str, Any]:
    low, high = (minimum, maximum) if bounds is None else bounds
    return {"minimum": low, "maximum": high}


@overload
def integer(
    description: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
    bounds: tuple[int, int] | None = None,
    raw: bool = False,
) -> Field[int]: ...
@overload
def integer(
    description: str,
    *,
    default: T,
    minimum: int | None = None,
    maximum: int | None = None,
    bounds: tuple[int, int] | None = None,
    raw: bool = False,
) -> Field[int | T]: ...
def integer(
    description: str,
    *,
    default: Any = REQUIRED,
    minimum: int | None = None,
    maximum: int | None = None,
    bounds: tuple[int, int] | None = None,
    raw: bool = False,
) -> Any:
    """A whole number within ``[minimum, maximum]`` (stated in the schema and read).

    ``bounds=(low, high)``: the range the reader holds it to instead, when that differs from
    what the schema states (a sanity cap the agent need not read); by default the reader's
    finite range fills in a bound the schema leaves open.
    """
    prop = schema.integer(description, minimum=minimum, maximum=maximum)
    if raw:
        return Field(prop, None, default)
    return Field(prop, read_int, default, _bounds(minimum, maximum, bounds), int_rule)


@overload
def number(
    description: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    bounds: tuple[float, float] | None = None,
    raw: bool = False,
) -> Field[float]: ...
@overload
def number(
    description: str,
    *,
    default: T,
    minimum: float | None = None,
    maximum: float | None = None,
    bounds: tuple[float, float] | None = None,
    raw: bool = False,
) -> Field[float | T]: ...
def number(
    description: str,
    *,
    default: Any = REQUIRED,
    minimum: float | None = None,
    maximum: float | None = None,
    bounds: tuple[float, float] | None = None,
    raw: bool = False,
) -> Any:
    """A finite number within ``[minimum, maximum]`` (see :func:`integer` for ``bounds``)."""
    prop = schema.number(description, minimum=minimum, maximum=maximum)
    if raw:
        return Field(prop, None, default)
    return Field(prop, read_number, default, _bounds(minimum, maximum, bounds), number_rule)


@overload
def money(
    description: str, *, allow_zero: bool = False, maximum: float = MAX_AMOUNT
) -> Field[float]: ...
@overload
def money(
    description: str, *, default: T, allow_zero: bool = False, maximum: float = MAX_AMOUNT
) -> Field[float | T]: ...
def money(
    description: str,
    *,
    default: Any = REQUIRED,
    allow_zero: bool = False,
    maximum: float = MAX_AMOUNT,
) -> Any:
    """An amount in the world's currency, read rounded half up to cents.

    Positive unless ``allow_zero``; at most ``maximum`` (read, not stated in the schema).
    """
    options = {"allow_zero": allow_zero, "maximum": maximum}
    return Field(schema.money(description), read_money, default, options, money_rule)


@overload
def boolean(description: str) -> Field[bool]: ...
@overload
def boolean(description: str, *, default: T) -> Field[bool | T]: ...
def boolean(description: str, *, default: Any = REQUIRED) -> Any:
    """``true`` or ``false``."""
    return Field(schema.boolean(description), read_bool, default, rule=bool_rule)


@overload
def date(description: str, *, raw: bool = False) -> Field[str]: ...
@overload
def date(description: str, *, default: T, raw: bool = False) -> Field[str | T]: ...
def date(description: str, *, default: Any = REQUIRED, raw: bool = False) -> Any:
    """A ``YYYY-MM-DD`` date, read as a real calendar date (``2026-02-30`` refused)."""
    if raw:
        return Field(schema.date(description), None, default)
    return Field(schema.date(description), read_date, default, rule=date_rule)


@overload
def strings(
    description: str, item: str, *, unique: bool = False, raw: bool = False
) -> Field[list[str]]: ...
@overload
def strings(
    description: str, item: str, *, default: T, unique: bool = False, raw: bool = False
) -> Field[list[str] | T]: ...
def strings(
    description: str,
    item: str,
    *,
    default: Any = REQUIRED,
    unique: bool = False,
    raw: bool = False,
) -> Any:
    """A non-empty list of non-empty strings (``item`` describes one), read stripped.

    The reader refuses repeats; ``unique`` also states it in the schema.
    """
    prop = schema.array(description, schema.string(item), unique=unique)
    if raw:
        return Field(prop, None, default)
    return Field(prop, read_strings, default, rule=strings_rule)


def _items(name: str, value: Any, item: type[Input]) -> list[Input]:
    """A non-empty list of objects (``objects_rule``), each seen through ``item``."""
    given = objects_rule(name, value)
    return [item(each, f"{name}[{index}]") for index, each in enumerate(given)]


class _Objects(Field[Any]):
    """A list of objects, whose items see the world their input does (for their refs)."""

    __slots__ = ()

    def __get__(self, obj: Input | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        items = super().__get__(obj, owner)
        if isinstance(items, list):
            for item in items:
                if isinstance(item, Input):
                    item._state = obj._state
        return items


def _read_items(input: Any, key: str, default: Any, *, path: str | None, item: type[Input]) -> Any:
    return take(input, key, default, path, _items, item=item)


@overload
def objects(description: str, item: type[I]) -> Field[list[I]]: ...
@overload
def objects(description: str, item: type[I], *, default: T) -> Field[list[I] | T]: ...
def objects(description: str, item: type[I], *, default: Any = REQUIRED) -> Any:
    """A non-empty list of objects, each declared by the :class:`Input` class ``item``.

    Read as a list of ``item`` views whose messages name their place (``lines[2].quantity``).
    """
    prop = schema.array(description, schema_of(item))
    return _Objects(prop, _read_items, default, {"item": item}, _items)


class Ref(Field[Any]):
    """An id input that knows its collection: its value is the record the id names.

    Built by :func:`ref`. The id is read first (as :func:`string` reads it, or as given with
    ``raw=True``), then looked up in the world the :class:`Input` view was given; an id that
    names no record is ``not_found`` with :func:`~silo_async.world.records.require_record`'s
    message (``Account "ACC-999" was not found.``). An absent optional id gives the default,
    not looked up. :meth:`stored` (what an update sets, what a list filter compares) is the id.

    Attributes:
        collection: the state key of the collection, e.g. ``accounts``.
        label: names the record in ``not_found`` where ``label_of(collection)`` cannot.
        explicit_key: the input key, when not the attribute's name followed by ``Id``.
    """

    __slots__ = ("collection", "explicit_key", "label")

    def __init__(
        self,
        prop: schema.Schema,
        collection: str,
        default: Any,
        raw: bool,
        label: str | None,
        key: str | None,
    ) -> None:
        if raw:
            super().__init__(prop, None, default)
        else:
            super().__init__(prop, read_string, default, rule=string_rule)
        self.collection = collection
        self.label = label
        self.explicit_key = key

    def key_for(self, attr: str) -> str:
        """The input key: ``key=`` if given, else the attribute's name followed by ``Id``."""
        if self.explicit_key is not None:
            return self.explicit_key
        if attr.endswith("Id"):
            raise DefinitionError(
                f"ref field {attr!r}: a ref is named after its record and reads <name>Id "
                f"(account = w.fields.ref(...) reads accountId); name it {attr[:-2]!r} or pass "
                f"key={attr!r}.",
                {"field": attr},
            )
        return f"{attr}Id"

    def __get__(self, obj: Input | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        record_id = self.read(obj._input, self.key, obj._path)
        if obj._input.get(self.key) is None:  # absent or null: the default, not looked up
            value = record_id
        elif obj._state is None:
            raise TypeError(
                f"{owner.__name__}.{self.attr} looks its record up in the world: build the view "
                "with state= (define_tool and write_tool do)"
            )
        else:
            value = require_record(obj._state, self.collection, record_id, self.label)
        obj.__dict__[self.attr] = value
        return value

    def stored(self, args: Input) -> Any:
        """The id (once the record it names is found)."""
        getattr(args, self.attr)
        return self.read(args._input, self.key, args._path)


@overload
def ref(
    collection: str,
    description: str,
    *,
    raw: bool = False,
    label: str | None = None,
    key: str | None = None,
) -> Field[Any]: ...
@overload
def ref(
    collection: str,
    description: str,
    *,
    default: T,
    raw: bool = False,
    label: str | None = None,
    key: str | None = None,
) -> Field[Any | T]: ...
def ref(
    collection: str,
    description: str,
    *,
    default: Any = REQUIRED,
    raw: bool = False,
    label: str | None = None,
    key: str | None = None,
) -> Any:
    """The id of a record of ``collection``, read as the record itself.

    Named after the record, it reads the input key ``<name>Id``::

        class NewContact(w.Input):
            account = w.fields.ref("accounts", "Account id.")   # the key accountId

        args.account["name"]   # the account; "Account "ACC-9" was not found." when missing

    The schema is :func:`string`'s. In a list tool's ``filters`` it compares the records' field
    of its key with the id (an unknown id is ``not_found``, not an empty page).

    Args:
        collection: the state key of the collection the id names a record of.
        description: what the agent reads.
        default: the value when the key is absent or null (then the field is optional).
        raw: take the id exactly as given (not stripped).
        label: names the record in ``not_found`` where ``label_of(collection)`` cannot
            (``RFQ``, not ``Rfq``).
        key: the input key, when not ``<name>Id``.
    """
    return Ref(schema.string(description), collection, default, raw, label, key)


#: ``limit``: the page size of a list (1..MAX_LIMIT, default DEFAULT_LIMIT), as ``PAGING`` has it.
LIMIT: Field[int] = Field(
    schema.PAGING["limit"],
    read_int,
    schema.DEFAULT_LIMIT,
    {"minimum": 1, "maximum": schema.MAX_LIMIT},
    int_rule,
)
#: ``offset``: how many results a list skips (default 0), as ``PAGING`` has it.
OFFSET: Field[int] = Field(
    schema.PAGING["offset"], read_int, 0, {"minimum": 0, "maximum": None}, int_rule
)
