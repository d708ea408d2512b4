"""Tool declarations: a name, a description and an input, turned into a :class:`~silo_async.Tool`.

A tool's input is declared by an :class:`~silo_async.world.Input` class (its body then gets the
typed view ``args``), or, as before typed fields, by schema properties and the keys required
(its body then gets the input as given).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, overload

import attrs

from .._errors import DefinitionError
from .._tools import Tool, tool
from ._builders import Schema, closed_object
from ._fields import Field, Input

__all__ = ["Declaration", "define_tool"]

I = TypeVar("I", bound=Input)  # noqa: E741 (an Input type)


@attrs.frozen
class Declaration:
    """What a tool declaration says: name and description (``None``: from the function), input.

    Attributes:
        name: the tool name; ``None`` takes the function's name.
        description: what the agent reads; ``None`` takes the first paragraph of the function's
            docstring (its lines joined by spaces, so it may wrap in the source).
        properties: the input properties.
        required: which of them are required.
        input: the :class:`Input` class that declared them, if one did.
    """

    name: str | None
    description: str | None
    properties: Mapping[str, Schema]
    required: Sequence[str]
    input: type[Input] | None = None

    @classmethod
    def parse(
        cls,
        spec: tuple[Any, ...],
        properties: Mapping[str, Schema] | type[Input] | None = None,
        required: Sequence[str] | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> Declaration:
        """Read ``([name, description,] input)`` or ``([name, description,] properties, required)``.

        ``input`` is an :class:`Input` class. Keywords given beside the positional form win.

        Raises:
            TypeError: more positional values than either form takes, a name without a
                description, ``required`` beside an Input class, or fields outside one.
        """
        if spec and isinstance(spec[0], str):
            if len(spec) < 2 or not isinstance(spec[1], str):
                raise TypeError("a tool declared with a name needs its description next to it")
            name, description = name or spec[0], description or spec[1]
            spec = spec[2:]
        if len(spec) > 2:
            raise TypeError(
                "a tool declaration takes an Input class, (properties, required) or "
                "(name, description, ...) before either"
            )
        given = (*spec, None, None)
        props = properties if properties is not None else given[0]
        needed = required if required is not None else given[1]
        if isinstance(props, type) and issubclass(props, Input):
            return cls._of_input(props, needed, name, description)
        if props is not None and not isinstance(props, Mapping):
            raise TypeError(f"a tool's input is an Input class or a mapping, not {props!r}")
        if props and any(isinstance(value, Field) for value in props.values()):
            raise TypeError("typed fields are declared as attributes of an Input class")
        return cls(name, description, props or {}, needed or ())

    @classmethod
    def _of_input(
        cls,
        input: type[Input],
        required: Sequence[str] | None,
        name: str | None,
        description: str | None,
    ) -> Declaration:
        if required is not None:
            raise TypeError(
                f"{input.__name__} says which fields are required (those without a default)"
            )
        fields = input._fields
        needed = [key for key, field in fields.items() if field.required]
        properties = {key: field.schema for key, field in fields.items()}
        return cls(name, description, properties, needed, input)

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
        """The closed input schema: ``first``, the properties, then ``last`` (those required).

        A key of ``first`` or ``last`` the properties also name keeps the properties' place.
        """
        before, after = first or {}, last or {}
        props = {**before, **self.properties, **after}
        own = [key for key in self.required if key not in before and key not in after]
        return closed_object(props, [*before, *own, *after])


def viewing(fn: Callable[[Any, I], Any], input: type[I]) -> Callable[[Any, dict[str, Any]], Any]:
    """``fn(state, args)`` as a tool body ``body(state, input)``: ``args`` views the input."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_body(state: Any, given: dict[str, Any]) -> Any:
            return await fn(state, input(given, state=state))

        return async_body

    @functools.wraps(fn)
    def body(state: Any, given: dict[str, Any]) -> Any:
        return fn(state, input(given, state=state))

    return body


@overload
def define_tool(
    input: type[I], /, *, name: str | None = None, description: str | None = None
) -> Callable[[Callable[[Any, I], Any]], Tool]: ...
@overload
def define_tool(
    name: str,
    description: str,
    input: type[I],
    /,
) -> Callable[[Callable[[Any, I], Any]], Tool]: ...
@overload
def define_tool(
    *spec: Any,
    properties: Mapping[str, Schema] | None = None,
    required: Sequence[str] | None = None,
    name: str | None = None,
    description: str | None = None,
) -> Callable[[Callable[[Any, dict[str, Any]], Any]], Tool]: ...
def define_tool(
    *spec: Any,
    properties: Mapping[str, Schema] | None = None,
    required: Sequence[str] | None = None,
    name: str | None = None,
    description: str | None = None,
) -> Callable[[Callable[[Any, Any], Any]], Tool]:
    """Decorate a function as a tool whose input schema is closed.

    Declared with an :class:`Input` class, the body is ``fn(state, args)`` and ``args`` is the
    typed view of the input; the class gives the schema::

        class Balance(w.Input):
            vendorId = w.fields.string("The vendor, e.g. VEN-001.")

        @w.define_tool(Balance)
        def vendor_balance(state, args: Balance):  # the docstring is the description
            vendor = w.records.require_record(state, "vendors", args.vendorId)

    The tool is named after the function and described by its docstring's first paragraph
    (what the agent reads, so it may wrap over lines); ``define_tool(name, description,
    Input)`` states both. The form from before typed fields, ``define_tool(properties,
    required)`` with ``w.schema`` properties, still works: its body is ``fn(state, input)``.

    Args:
        spec: ``([name, description,] input)`` or ``([name, description,] properties,
            required)``.
        properties: the input properties (or an Input class), when not given in ``spec``.
        required: which properties are required, when not given in ``spec``.
        name: the tool name, when not the function's.
        description: what the agent reads, when not the docstring's first paragraph.

    Raises:
        TypeError: ``spec`` is neither form (see :class:`Declaration`).
        DefinitionError: no description and no docstring.
    """
    declared = Declaration.parse(spec, properties, required, name, description)
    schema = declared.schema()
    input = declared.input
    if input is None:
        return lambda fn: declared.build(fn, schema)
    return lambda fn: declared.build(viewing(fn, input), schema)
