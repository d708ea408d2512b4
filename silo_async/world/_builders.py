"""Schema builders: the JSON Schemas (Draft 2020-12) world tools declare, built one way.

Every property carries a description (the agent reads it), objects are closed
(``additionalProperties: false``) and ``required`` only names declared properties. The schema
layer rejects wrong types and unknown or missing keys before a tool body runs; the readers in
:mod:`silo_async.world` then check what a schema states poorly, with the same wording everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from .._errors import DefinitionError
from .._tools import Tool, tool

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "PAGING",
    "Schema",
    "array",
    "boolean",
    "closed_object",
    "date",
    "define_tool",
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


@attrs.frozen
class ToolSpec:
    """What a tool declaration says: name and description (``None``: from the function), input.

    Attributes:
        name: the tool name; ``None`` takes the function's name.
        description: what the agent reads; ``None`` takes the first paragraph of the function's
            docstring (its lines joined by spaces, so it may wrap in the source).
        properties: the input properties.
        required: which of them are required.
    """

    name: str | None
    description: str | None
    properties: Mapping[str, Schema]
    required: Sequence[str]

    @classmethod
    def parse(
        cls,
        spec: tuple[Any, ...],
        properties: Mapping[str, Schema] | None = None,
        required: Sequence[str] | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> ToolSpec:
        """Read ``(properties, required)`` or ``(name, description, properties, required)``.

        Keywords given beside the positional form win.

        Raises:
            TypeError: more positional values than either form takes, or a name without a
                description.
        """
        if spec and isinstance(spec[0], str):
            if len(spec) < 2 or not isinstance(spec[1], str):
                raise TypeError("a tool declared with a name needs its description next to it")
            name, description = name or spec[0], description or spec[1]
            spec = spec[2:]
        if len(spec) > 2:
            raise TypeError(
                "a tool declaration takes (properties, required) or "
                "(name, description, properties, required)"
            )
        given = (*spec, None, None)
        props = properties if properties is not None else given[0]
        needed = required if required is not None else given[1]
        return cls(name, description, props or {}, needed or ())

    def build(self, body: Callable[[Any, dict[str, Any]], Any], schema: Schema) -> Tool:
        """The tool: ``body`` under this name and description (or the function's).

        Raises:
            DefinitionError: no description was given and the function has no docstring (the
                agent would read an empty one).
        """
        made = tool(name=self.name, description=self.description, input_schema=schema)(body)
        if not made.description:
            raise DefinitionError(
                f'Tool "{made.name}" has no description: give its function a docstring (its '
                "first paragraph is what the agent reads) or pass description=.",
                {"tool": made.name},
            )
        return made

    def schema(
        self, first: Mapping[str, Schema] | None = None, last: Mapping[str, Schema] | None = None
    ) -> Schema:
        """The closed input schema: ``first``, the properties, then ``last`` (those required)."""
        before, after = first or {}, last or {}
        props = {**before, **self.properties, **after}
        return closed_object(props, [*before, *self.required, *after])


def define_tool(
    *spec: Any,
    properties: Mapping[str, Schema] | None = None,
    required: Sequence[str] | None = None,
    name: str | None = None,
    description: str | None = None,
) -> Callable[[Callable[[Any, dict[str, Any]], Any]], Tool]:
    """Decorate ``fn(state, input)`` as a tool whose input schema is ``closed_object(...)``.

    Declared as ``define_tool(properties, required)``, the tool is named after the function and
    described by its docstring's first paragraph (what the agent reads, so it may wrap over
    lines); ``define_tool(name, description, properties, required)`` states both::

        @w.define_tool({"vendorId": w.string("The vendor, e.g. VEN-001.")}, ["vendorId"])
        def vendor_balance(state, input):  # the docstring is the description
            ...

    Args:
        spec: ``(properties, required)`` or ``(name, description, properties, required)``.
        properties: the input properties, when not given in ``spec``.
        required: which of them are required, when not given in ``spec``.
        name: the tool name, when not the function's.
        description: what the agent reads, when not the docstring's first paragraph.

    Raises:
        TypeError: ``spec`` is neither form (see :class:`ToolSpec`).
        DefinitionError: no description and no docstring.
    """
    declared = ToolSpec.parse(spec, properties, required, name, description)
    schema = declared.schema()
    return lambda fn: declared.build(fn, schema)
