"""The kinds of field: each pairs a schema builder with the reader of the same rules.

``string("Lead id.")`` is the property ``{"type": "string", "minLength": 1, "description":
...}`` and reads a stripped, non-empty string; ``money("Amount.")`` is a number of at least 0
and reads an amount rounded half up to cents. Every kind takes ``default=`` (the field is then
optional: an absent or null key gives the default) and, where the reader checks more than the
schema states, ``raw=True`` (take the value exactly as the schema admitted it: not stripped, not
range-checked beyond the schema) for worlds whose rules were written against the raw input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, overload

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

__all__ = [
    "LIMIT",
    "OFFSET",
    "boolean",
    "date",
    "enum",
    "field",
    "integer",
    "money",
    "number",
    "objects",
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
    return Field(prop, _read_items, default, {"item": item}, _items)


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
