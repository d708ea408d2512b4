"""Input readers: the rules a JSON Schema states poorly, checked with one house style of message.

Every reader takes the tool's ``input`` and a key and returns a clean Python value, or raises
``invalid_input`` worded the same way everywhere::

    "quantity" must be a whole number; received 2.5.
    "dueDate" must be a real calendar date in YYYY-MM-DD form; received "2026-02-30".
    "name" is required.

with details ``{"field", "received", ...the rule}``. A reader given ``default`` returns it when
the key is absent or null; without one the key is required. Readers never raise anything but
:class:`~silo_async.ToolError`, whatever JSON value they get (NaN, ``1e400``, an integer of ten
thousand digits, a list where a string belongs): every number reader has a finite range by
default, so a value that passes is safe to compute with and to write as JSON.

Each reader is one *rule* (``rule(name, value, **options)``, applied to a value that is there)
behind :func:`take`, which settles absent and null keys the same way for all of them; typed
fields (:mod:`silo_async.world._fields`) apply the same rules.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload

from .._errors import ToolError
from ._values import quoted, shown

__all__ = [
    "REQUIRED",
    "Rule",
    "absent",
    "bool_rule",
    "date_rule",
    "enum_rule",
    "field_name",
    "invalid",
    "objects_rule",
    "read_bool",
    "read_date",
    "read_enum",
    "read_objects",
    "read_string",
    "read_strings",
    "string_rule",
    "strings_rule",
    "take",
]

T = TypeVar("T")
R = TypeVar("R")

#: ``rule(name, value, **options)``: the clean value of a ``value`` that is there (not null), or
#: ``invalid_input`` naming ``name``.
Rule = Callable[..., R]

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of a reader whose key is required.
REQUIRED: Any = _Required()


def invalid(name: str, rule: str, value: Any, **details: Any) -> ToolError:
    """The ``invalid_input`` error of the house style: ``"<name>" <rule>; received <value>.``."""
    return ToolError(
        "invalid_input",
        f'"{name}" {rule}; received {quoted(value)}.',
        {"field": name, "received": shown(value), **details},
    )


def field_name(key: str, path: str | None) -> str:
    """How messages name ``key`` of the object at ``path`` (``lines[2].quantity``)."""
    return f"{path}.{key}" if path else key


def absent(name: str, default: Any) -> Any:
    """``default`` for a key that is absent or null, or ``"<name>" is required.``."""
    if default is REQUIRED:
        raise ToolError("invalid_input", f'"{name}" is required.', {"field": name})
    return default


def take(
    input: Mapping[str, Any],
    key: str,
    default: Any,
    path: str | None,
    rule: Rule[Any],
    **options: Any,
) -> Any:
    """``rule`` applied to ``input[key]``; ``default`` (or "is required") when absent or null.

    An absent key and a null one are the same: "not given" (what a strict-mode model sends for a
    property it leaves out).
    """
    value = input.get(key)
    if value is None:
        return absent(field_name(key, path), default)
    return rule(field_name(key, path), value, **options)


def string_rule(name: str, value: Any) -> str:
    """A non-empty string, stripped of surrounding white space."""
    if not isinstance(value, str):
        raise invalid(name, "must be a string", value)
    text = value.strip()
    if not text:
        raise invalid(name, "must not be empty", value)
    return text


def bool_rule(name: str, value: Any) -> bool:
    """``true`` or ``false`` (not ``1``, not ``"yes"``)."""
    if not isinstance(value, bool):
        raise invalid(name, "must be true or false", value)
    return value


def enum_rule(name: str, value: Any, allowed: Sequence[str]) -> str:
    """One of ``allowed`` (exact match); the details list the allowed values."""
    if not isinstance(value, str) or value not in allowed:
        raise invalid(name, f"must be one of: {', '.join(allowed)}", value, allowed=list(allowed))
    return value


def date_rule(name: str, value: Any) -> str:
    """A real calendar date written exactly ``YYYY-MM-DD`` (not ``20260511``, not 02-30)."""
    rule = "must be a real calendar date in YYYY-MM-DD form"
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        raise invalid(name, rule, value)
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise invalid(name, rule, value) from None
    return value


def strings_rule(name: str, value: Any, unique: bool = True) -> list[str]:
    """A non-empty list of non-empty strings (stripped); with ``unique``, no repeats."""
    rule = "must be a non-empty list of non-empty strings"
    if not isinstance(value, list) or not value:
        raise invalid(name, rule, value)
    if not all(isinstance(item, str) and item.strip() for item in value):
        raise invalid(name, rule, value)
    items = [item.strip() for item in value]
    if unique and len(set(items)) != len(items):
        repeated = sorted({item for item in items if items.count(item) > 1})
        raise invalid(name, f"must not repeat {', '.join(repeated)}", value)
    return items


def objects_rule(name: str, value: Any) -> list[dict[str, Any]]:
    """A non-empty list of objects."""
    if not isinstance(value, list) or not value or not all(isinstance(i, dict) for i in value):
        raise invalid(name, "must be a non-empty list of objects", value)
    return list(value)


@overload
def read_string(input: Mapping[str, Any], key: str, *, path: str | None = None) -> str: ...
@overload
def read_string(
    input: Mapping[str, Any], key: str, default: T, *, path: str | None = None
) -> str | T: ...
def read_string(
    input: Mapping[str, Any], key: str, default: Any = REQUIRED, *, path: str | None = None
) -> Any:
    """A non-empty string, stripped of surrounding white space.

    Args:
        input: the tool's input (or one nested object of it).
        key: the key to read.
        default: returned when the key is absent or null; without it the key is required.
        path: where ``input`` sits in the tool's input, for messages (``lines[2]``).
    """
    return take(input, key, default, path, string_rule)


@overload
def read_bool(input: Mapping[str, Any], key: str, *, path: str | None = None) -> bool: ...
@overload
def read_bool(
    input: Mapping[str, Any], key: str, default: T, *, path: str | None = None
) -> bool | T: ...
def read_bool(
    input: Mapping[str, Any], key: str, default: Any = REQUIRED, *, path: str | None = None
) -> Any:
    """``true`` or ``false`` (not ``1``, not ``"yes"``)."""
    return take(input, key, default, path, bool_rule)


@overload
def read_enum(
    input: Mapping[str, Any], key: str, allowed: Sequence[str], *, path: str | None = None
) -> str: ...
@overload
def read_enum(
    input: Mapping[str, Any],
    key: str,
    allowed: Sequence[str],
    default: T,
    *,
    path: str | None = None,
) -> str | T: ...
def read_enum(
    input: Mapping[str, Any],
    key: str,
    allowed: Sequence[str],
    default: Any = REQUIRED,
    *,
    path: str | None = None,
) -> Any:
    """One of ``allowed`` (exact match); the details list the allowed values."""
    return take(input, key, default, path, enum_rule, allowed=allowed)


@overload
def read_date(input: Mapping[str, Any], key: str, *, path: str | None = None) -> str: ...
@overload
def read_date(
    input: Mapping[str, Any], key: str, default: T, *, path: str | None = None
) -> str | T: ...
def read_date(
    input: Mapping[str, Any], key: str, default: Any = REQUIRED, *, path: str | None = None
) -> Any:
    """A real calendar date written exactly ``YYYY-MM-DD`` (not ``20260511``, not 02-30)."""
    return take(input, key, default, path, date_rule)


@overload
def read_strings(
    input: Mapping[str, Any], key: str, *, unique: bool = True, path: str | None = None
) -> list[str]: ...
@overload
def read_strings(
    input: Mapping[str, Any],
    key: str,
    default: T,
    *,
    unique: bool = True,
    path: str | None = None,
) -> list[str] | T: ...
def read_strings(
    input: Mapping[str, Any],
    key: str,
    default: Any = REQUIRED,
    *,
    unique: bool = True,
    path: str | None = None,
) -> Any:
    """A non-empty list of non-empty strings (stripped); with ``unique``, no repeats."""
    return take(input, key, default, path, strings_rule, unique=unique)


@overload
def read_objects(
    input: Mapping[str, Any], key: str, *, path: str | None = None
) -> list[dict[str, Any]]: ...
@overload
def read_objects(
    input: Mapping[str, Any], key: str, default: T, *, path: str | None = None
) -> list[dict[str, Any]] | T: ...
def read_objects(
    input: Mapping[str, Any], key: str, default: Any = REQUIRED, *, path: str | None = None
) -> Any:
    """A non-empty list of objects (read their fields with ``path=f"{key}[{i}]"``)."""
    return take(input, key, default, path, objects_rule)
