"""The tool contract of this template: schema builders, paging, list filters and input readers.

Every input schema is JSON Schema Draft 2020-12: ``type: object``, explicit properties that each
carry a description, ``required`` and ``additionalProperties: false``. The schema layer rejects
wrong types, unknown keys and missing keys before a tool body runs; the readers here add the rules
a schema states poorly (real calendar dates, positive money, page-size ceilings) and raise
``invalid_input`` or ``limit_exceeded`` with a message that names the rule and the value received.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import silo_async as silo

from ..state import State, today

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "PAGING",
    "Schema",
    "actor_property",
    "boolean",
    "by_id",
    "crm_tool",
    "date",
    "enum",
    "filters_match",
    "integer",
    "matches",
    "number",
    "object_schema",
    "paginate",
    "read_amount",
    "read_date",
    "read_future_date",
    "require_some",
    "string",
]

Schema = dict[str, Any]
ToolBody = Callable[[State, dict[str, Any]], Any]
T = TypeVar("T")
R = TypeVar("R", bound=Mapping[str, Any])

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
_DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


def string(description: str, *, pattern: str | None = None) -> Schema:
    """A non-empty string property."""
    schema: Schema = {"type": "string", "minLength": 1, "description": description}
    if pattern is not None:
        schema["pattern"] = pattern
    return schema


def date(description: str) -> Schema:
    """A ``YYYY-MM-DD`` string; :func:`read_date` also checks it is a real calendar date."""
    return string(f"{description} (YYYY-MM-DD)", pattern=_DATE_PATTERN)


def enum(description: str, values: Sequence[str]) -> Schema:
    """A string restricted to ``values``."""
    return {"type": "string", "enum": list(values), "description": description}


def integer(description: str, *, minimum: int | None = None) -> Schema:
    """An integer property (ceilings are checked by the tool with a domain message)."""
    schema: Schema = {"type": "integer", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    return schema


def number(description: str) -> Schema:
    """A number property (sign and size rules are checked by the tool)."""
    return {"type": "number", "description": description}


def boolean(description: str) -> Schema:
    """A boolean property."""
    return {"type": "boolean", "description": description}


def actor_property() -> Schema:
    """The ``actorUserId`` every write takes: who is doing it (must be an active user)."""
    return string("Id of the user performing this change, e.g. USR-002. Must be an active user.")


#: ``limit`` and ``offset``, shared by every list and search tool.
PAGING: dict[str, Schema] = {
    "limit": integer(
        f"Maximum results to return (default {DEFAULT_LIMIT}, at most {MAX_LIMIT}).", minimum=1
    ),
    "offset": integer("Number of results to skip (default 0).", minimum=0),
}


def object_schema(properties: Mapping[str, Schema], required: Sequence[str] = ()) -> Schema:
    """A closed object schema: unknown keys are rejected."""
    missing = [key for key in required if key not in properties]
    if missing:
        raise ValueError(f"required names undeclared properties: {', '.join(missing)}")
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(required),
        "additionalProperties": False,
    }


def crm_tool(
    name: str,
    description: str,
    properties: Mapping[str, Schema] | None = None,
    required: Sequence[str] = (),
) -> Callable[[ToolBody], silo.Tool]:
    """Define a tool of this template with a closed input schema built from ``properties``."""
    return silo.tool(
        name=name,
        description=description,
        input_schema=object_schema(properties or {}, required),
    )


def paginate(items: Sequence[T], input: Mapping[str, Any]) -> dict[str, Any]:
    """One page of ``items``: ``{total, count, offset, results}``.

    Raises:
        ToolError: ``limit_exceeded`` when ``limit`` is above the page-size ceiling.
    """
    limit = int(input.get("limit", DEFAULT_LIMIT))
    offset = int(input.get("offset", 0))
    if limit > MAX_LIMIT:
        raise silo.tool_error(
            "limit_exceeded",
            f"limit {limit} is above the maximum page size of {MAX_LIMIT}; "
            "page with offset instead.",
            {"limit": limit, "max": MAX_LIMIT},
        )
    page = list(items[offset : offset + limit])
    return {"total": len(items), "count": len(page), "offset": offset, "results": page}


def read_date(input: Mapping[str, Any], key: str) -> str:
    """The ``YYYY-MM-DD`` value at ``key``, checked to be a real calendar date.

    Raises:
        ToolError: ``invalid_input`` for a date such as 2026-02-30.
    """
    value = str(input[key])
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise silo.tool_error(
            "invalid_input",
            f'"{key}" must be a real calendar date in YYYY-MM-DD form; received "{value}".',
            {"field": key, "received": value},
        ) from None
    return value


def read_future_date(state: State, input: Mapping[str, Any], key: str) -> str:
    """Like :func:`read_date`, and the date must be today or later on the simulated clock.

    Raises:
        ToolError: ``invalid_input`` for an impossible date or one in the past.
    """
    value = read_date(input, key)
    if value < today(state):
        raise silo.tool_error(
            "invalid_input", f"{key} {value} is in the past (today is {today(state)})."
        )
    return value


def require_some(input: Mapping[str, Any], fields: Sequence[str]) -> None:
    """An update must name at least one of ``fields``.

    Raises:
        ToolError: ``invalid_input`` listing the fields that could be given.
    """
    if not any(field in input for field in fields):
        raise silo.tool_error(
            "invalid_input", f"Nothing to update: give at least one of {', '.join(fields)}."
        )


def read_amount(input: Mapping[str, Any], key: str) -> float:
    """A positive money amount in the company currency, rounded to cents.

    Raises:
        ToolError: ``invalid_input`` when the amount is zero or negative.
    """
    value = float(input[key])
    if value <= 0:
        raise silo.tool_error(
            "invalid_input",
            f'"{key}" must be a positive amount; received {input[key]}.',
            {"field": key, "received": input[key]},
        )
    value = round(value, 2)
    # Whole amounts stay integers so the world's JSON reads like the seed (48000, not 48000.0).
    return int(value) if value.is_integer() else value


def matches(needle: str, *haystacks: str | None) -> bool:
    """Case-insensitive substring search over several fields."""
    wanted = needle.strip().lower()
    return any(wanted in (text or "").lower() for text in haystacks)


def filters_match(input: Mapping[str, Any], record: Mapping[str, Any], keys: Sequence[str]) -> bool:
    """Whether ``record`` equals ``input`` on each of ``keys`` that the input gives."""
    return all(key not in input or input[key] == record[key] for key in keys)


def by_id(records: Mapping[str, R]) -> list[R]:
    """The records of one collection, sorted by id: the stable order every list uses."""
    return sorted(records.values(), key=lambda record: record["id"])
