"""Schema builders: the JSON Schemas (Draft 2020-12) world tools declare, built one way.

Every property carries a description (the agent reads it), objects are closed
(``additionalProperties: false``) and ``required`` only names declared properties. The schema
layer rejects wrong types and unknown or missing keys before a tool body runs; the readers and
typed fields of :mod:`silo_async.world.fields` then check what a schema states poorly, with the
same wording everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

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

Schema = dict[str, Any]

#: Page size when a list call gives no ``limit``.
DEFAULT_LIMIT: Final = 50
#: The largest page a list call may ask for.
MAX_LIMIT: Final = 500

_DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


def string(description: str, *, pattern: str | None = None) -> Schema:
    """A non-empty string property."""
    schema: Schema = {"type": "string", "minLength": 1, "description": description}
    if pattern is not None:
        schema["pattern"] = pattern
    return schema


def enum(description: str, values: Sequence[str]) -> Schema:
    """A string restricted to ``values``."""
    return {"type": "string", "enum": list(values), "description": description}


def integer(description: str, *, minimum: int | None = None, maximum: int | None = None) -> Schema:
    """An integer property with optional bounds."""
    schema: Schema = {"type": "integer", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def number(
    description: str, *, minimum: float | None = None, maximum: float | None = None
) -> Schema:
    """A number property with optional bounds."""
    schema: Schema = {"type": "number", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def money(description: str) -> Schema:
    """An amount in the world's currency (``read_money`` rounds it to cents)."""
    return number(f"{description} Amount in the company currency, to the cent.", minimum=0)


def boolean(description: str) -> Schema:
    """A boolean property."""
    return {"type": "boolean", "description": description}


def date(description: str) -> Schema:
    """A ``YYYY-MM-DD`` date (``read_date`` also checks it is a real calendar date)."""
    return string(f"{description} (YYYY-MM-DD)", pattern=_DATE_PATTERN)


def array(description: str, items: Schema, *, min_items: int = 1, unique: bool = False) -> Schema:
    """A list of ``items`` (at least ``min_items`` of them)."""
    schema: Schema = {"type": "array", "items": items, "description": description}
    if min_items:
        schema["minItems"] = min_items
    if unique:
        schema["uniqueItems"] = True
    return schema


def closed_object(
    properties: Mapping[str, Schema], required: Sequence[str] = (), description: str | None = None
) -> Schema:
    """An object with exactly ``properties`` (unknown keys rejected).

    Raises:
        ValueError: ``required`` names a property that is not declared.
    """
    missing = [key for key in required if key not in properties]
    if missing:
        raise ValueError(f"required names undeclared properties: {', '.join(missing)}")
    schema: Schema = {
        "type": "object",
        "properties": dict(properties),
        "required": list(required),
        "additionalProperties": False,
    }
    if description is not None:
        schema["description"] = description
    return schema


#: ``limit`` and ``offset``, shared by every list and search tool (see ``paginate``).
PAGING: Final[dict[str, Schema]] = {
    "limit": integer(
        f"How many results to return (default {DEFAULT_LIMIT}, at most {MAX_LIMIT}).",
        minimum=1,
        maximum=MAX_LIMIT,
    ),
    "offset": integer("How many results to skip (default 0).", minimum=0),
}
