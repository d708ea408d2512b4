"""The tool contract: closed JSON Schemas, paging, and input readers with precise errors.

Every input schema is Draft 2020-12, ``type: object``, explicit properties with descriptions,
``required`` and ``additionalProperties: false``. The schema layer rejects wrong types and
unknown or missing keys before a tool runs; the readers here add the rules a schema states
poorly (calendar dates, page-size ceilings) with messages that name the rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from typing import Any

import silo_async as silo

from ..state import State

__all__ = [
    "ACTOR",
    "MAX_LIMIT",
    "PAGING",
    "Schema",
    "boolean",
    "date_string",
    "define",
    "enum",
    "integer",
    "number",
    "obj",
    "paginate",
    "read_date",
    "read_optional_date",
    "string",
    "string_array",
]

Schema = dict[str, Any]
ToolBody = Callable[[State, dict[str, Any]], Any]

DRAFT = "https://json-schema.org/draft/2020-12/schema"
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
_DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"


def string(description: str, *, pattern: str | None = None, min_length: int = 1) -> Schema:
    """A non-empty string property."""
    schema: Schema = {"type": "string", "description": description, "minLength": min_length}
    if pattern is not None:
        schema["pattern"] = pattern
    return schema


def date_string(description: str) -> Schema:
    """A ``YYYY-MM-DD`` string (the calendar check happens in :func:`read_date`)."""
    return string(f"{description} Format YYYY-MM-DD.", pattern=_DATE_PATTERN)


def enum(description: str, values: Sequence[str]) -> Schema:
    """A string restricted to ``values``."""
    return {"type": "string", "description": description, "enum": list(values)}


def integer(description: str, *, minimum: int | None = None, maximum: int | None = None) -> Schema:
    """An integer property with optional bounds."""
    schema: Schema = {"type": "integer", "description": description}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def number(description: str) -> Schema:
    """A number property (bounds are checked by the tool, with a domain message)."""
    return {"type": "number", "description": description}


def boolean(description: str) -> Schema:
    """A boolean property."""
    return {"type": "boolean", "description": description}


def string_array(description: str) -> Schema:
    """A non-empty array of distinct non-empty strings."""
    return {
        "type": "array",
        "description": description,
        "items": {"type": "string", "minLength": 1},
        "minItems": 1,
        "uniqueItems": True,
    }


def obj(properties: Mapping[str, Schema], required: Iterable[str] = ()) -> Schema:
    """A closed object schema: every key declared, unknown keys rejected."""
    required_list = list(required)
    missing = [key for key in required_list if key not in properties]
    if missing:
        raise ValueError(f"required keys without a property: {missing}")
    return {
        "$schema": DRAFT,
        "type": "object",
        "properties": dict(properties),
        "required": required_list,
        "additionalProperties": False,
    }


#: Paging properties shared by every list tool.
PAGING: dict[str, Schema] = {
    "limit": integer(
        f"Page size, default {DEFAULT_LIMIT}, at most {MAX_LIMIT}.",
        minimum=1,
    ),
    "offset": integer("How many results to skip, default 0.", minimum=0),
}

#: The acting member, required on every change.
ACTOR: dict[str, Schema] = {
    "actorId": string("Member id of the person making the change, e.g. MEM-001."),
}


def define(
    name: str,
    description: str,
    properties: Mapping[str, Schema] | None = None,
    required: Iterable[str] = (),
) -> Callable[[ToolBody], silo.Tool]:
    """Decorate ``fn(state, input)`` as a tool with a closed schema built from ``properties``."""
    return silo.tool(
        name=name, description=description, input_schema=obj(properties or {}, required)
    )


def paginate(items: Sequence[Any], input: Mapping[str, Any]) -> dict[str, Any]:
    """Slice ``items`` by ``limit``/``offset`` into ``{total, count, offset, results}``.

    Raises:
        ToolError: ``limit_exceeded`` when ``limit`` is above the page-size ceiling.
    """
    limit = int(input.get("limit", DEFAULT_LIMIT))
    offset = int(input.get("offset", 0))
    if limit > MAX_LIMIT:
        raise silo.tool_error(
            "limit_exceeded",
            f"limit {limit} is above the maximum page size of {MAX_LIMIT}; "
            "page through the results with offset instead.",
            {"limit": limit, "maximum": MAX_LIMIT},
        )
    page = list(items[offset : offset + limit])
    return {"total": len(items), "count": len(page), "offset": offset, "results": page}


def read_date(input: Mapping[str, Any], key: str) -> str:
    """Read a required calendar date.

    Raises:
        ToolError: ``invalid_input`` when it is not a real ``YYYY-MM-DD`` date.
    """
    raw = str(input[key])
    try:
        parsed: date | None = date.fromisoformat(raw)
    except ValueError:
        parsed = None
    # fromisoformat also takes the basic form 20260511; the contract promises YYYY-MM-DD only.
    if parsed is None or len(raw) != 10:
        raise silo.tool_error(
            "invalid_input",
            f'"{key}" must be a calendar date in YYYY-MM-DD form; received "{raw}".',
            {"field": key, "received": raw},
        )
    return parsed.isoformat()


def read_optional_date(input: Mapping[str, Any], key: str) -> str | None:
    """Read an optional calendar date (absent or null gives None)."""
    return None if input.get(key) is None else read_date(input, key)
