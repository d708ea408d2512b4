"""Tools: the only controlled access an agent has to the world.

A :class:`Tool` pairs a body ``fn(state, input)`` (``def`` or ``async def``) with a name, a
description and an explicit JSON Schema for its input. :func:`bind_tools` closes tools over one
world: a :class:`BoundTool` is the runtime tool, the one type a rollout calls. A call goes one
way: :meth:`Tool.check` (the checked copy of the input, or its ``invalid_input`` result), the
body on that copy, then the output copied (and a :class:`ToolError`'s details) so the agent never
holds a live handle into the world, and failures turned into values — a :class:`ToolOutcome`.
What an agent sees of a tool, :class:`ToolSpec`, hands out a fresh copy of the schema on every
access: one agent editing it changes nothing for the next.
"""

from __future__ import annotations

import functools
import inspect
import re
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, overload

import attrs

from ._errors import DefinitionError, ToolError
from ._input import InputRejectedError, copy_input, input_problems
from ._jsonutil import clone_json, compact_json
from ._schema import Invalid, SchemaValidator
from ._strict import strict_schema

__all__ = [
    "BoundTool",
    "Tool",
    "ToolFault",
    "ToolOutcome",
    "ToolResult",
    "ToolSpec",
    "bind_tools",
    "tool",
]

ToolFn = Callable[[Any, dict[str, Any]], Any]
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$")
_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


@attrs.frozen(init=False, repr=False)
class ToolSpec:
    """What an agent sees of a tool: feed ``to_dict()`` to a model.

    One spec is shared by every rollout of a tool, so it is immutable: ``input_schema`` is a
    fresh copy on every access (an agent may edit its copy, e.g. to adapt it to a provider,
    without changing what any other agent sees), and the spec keeps its own private copy of
    the schema it was made with.

    Args:
        name: the tool's name.
        description: what the agent reads.
        input_schema: the JSON Schema of the arguments (copied).
    """

    name: str
    description: str
    _schema: dict[str, Any] = attrs.field(alias="input_schema")

    def __init__(self, name: str, description: str, input_schema: dict[str, Any]) -> None:
        self.__attrs_init__(name, description, clone_json(input_schema))

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments: a fresh copy on every access."""
        schema: dict[str, Any] = clone_json(self._schema)
        return schema

    def __repr__(self) -> str:
        return (
            f"ToolSpec(name={self.name!r}, description={self.description!r}, "
            f"input_schema={self._schema!r})"
        )

    def to_dict(self, *, strict: bool = False) -> dict[str, Any]:
        """``{"name", "description", "inputSchema"}`` (a fresh copy).

        Args:
            strict: give the schema in strict form, for strict function calling (OpenAI's
                ``strict: true``): at every depth every property required, the optional ones
                nullable (an optional ``enum`` lists ``null`` too), ``additionalProperties:
                false``, other keywords kept. The tool takes ``null`` for an optional property
                as "not given", so a strict model's calls mean what they say.
        """
        schema = strict_schema(self._schema) if strict else self.input_schema
        return {"name": self.name, "description": self.description, "inputSchema": schema}


@attrs.frozen(init=False)
class ToolResult:
    """The outcome of a tool call. Rejected calls come back as values, never as exceptions.

    Attributes:
        output: the tool's (copied) return value, or ``{"code", "message", "details"?}``.
        is_error: True when the call was rejected or failed.
    """

    output: Any
    is_error: bool = False

    def __init__(self, output: Any, is_error: bool = False) -> None:
        # Written by hand: one is made per call, and attrs' frozen __init__ costs twice this.
        _set_output(self, output)
        _set_is_error(self, is_error)

    def to_dict(self) -> dict[str, Any]:
        """``{"output", "isError"}`` as in traces."""
        return {"output": self.output, "isError": self.is_error}


# The slots' own setters: a frozen class refuses setattr, its __init__ writes through these.
_set_output = ToolResult.__dict__["output"].__set__
_set_is_error = ToolResult.__dict__["is_error"].__set__


@attrs.frozen
class ToolFault:
    """An environment fault: a tool raised something other than :class:`ToolError`."""

    type: str
    message: str
    traceback: str

    def to_dict(self) -> dict[str, str]:
        """JSON form recorded in the trace."""
        return {"type": self.type, "message": self.message, "traceback": self.traceback}


class ToolOutcome(NamedTuple):
    """What one call of a :class:`BoundTool` gave: its result, and the fault behind it if any.

    A named pair, so ``result, fault = await tool.invoke(input)`` reads as it always did.

    Attributes:
        result: what the agent reads.
        fault: set when the body raised something other than :class:`ToolError` (the
            result is then ``internal_error``): what the trace records of it.
    """

    result: ToolResult
    fault: ToolFault | None = None


#: ``ToolOutcome(*pair)`` made in C: one is made per call, and the Python ``__new__`` a named
#: tuple gets costs as much as a small tool body's own work.
_outcome: Callable[[tuple[ToolResult, ToolFault | None]], ToolOutcome] = functools.partial(
    tuple.__new__, ToolOutcome
)


@attrs.frozen(eq=False)
class Tool:
    """A tool definition: ``fn(state, input)`` plus its name, description and input schema.

    Build one with :func:`tool`. The schema is checked against Draft 2020-12 here, once.
    With ``check_input=False`` the schema is published but not enforced: see :func:`tool`.

    Raises:
        DefinitionError: bad name, non-callable body or invalid schema.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    fn: ToolFn
    check_input: bool = attrs.field(default=True, kw_only=True)
    validator: SchemaValidator = attrs.field(init=False, repr=False)
    is_async: bool = attrs.field(init=False, repr=False)
    spec: ToolSpec = attrs.field(init=False, repr=False)
    """The agent-facing view of this tool."""
    name_json: str = attrs.field(init=False, repr=False)
    """The name as a JSON string, ready for trace lines."""
    check: Callable[[Any], Any] = attrs.field(init=False, repr=False, eq=False)
    """The one check of a call: ``check(input)`` is the checked copy of ``input`` the body
    receives, or an :class:`~silo_async._schema.Invalid` that :meth:`invalid` turns into the
    agent's ``invalid_input`` result. It is the schema's
    :meth:`~silo_async._schema.SchemaValidator.check`, held directly (no call in between on
    the hot path), or, with ``check_input=False``, only the JSON screen (``_json_screen``)."""

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise DefinitionError(
                f"Invalid tool name {self.name!r}: use letters, digits, '_', '-' or '.', "
                "starting with a letter, digit or '_' (at most 128 characters).",
                {"tool": self.name},
            )
        if not callable(self.fn):
            raise DefinitionError(f'Tool "{self.name}" has no callable body.', {"tool": self.name})
        validator = SchemaValidator(self.input_schema, self.name)
        object.__setattr__(self, "validator", validator)
        object.__setattr__(self, "check", validator.check if self.check_input else _json_screen)
        object.__setattr__(self, "is_async", inspect.iscoroutinefunction(self.fn))
        object.__setattr__(self, "spec", ToolSpec(self.name, self.description, self.input_schema))
        object.__setattr__(self, "name_json", compact_json(self.name))

    def __call__(self, state: Any, input: dict[str, Any]) -> Any:
        """Call the body directly (no validation): handy in unit tests of the body."""
        return self.fn(state, input)

    def invalid(self, refused: Invalid) -> ToolResult:
        """The ``invalid_input`` result of an input :attr:`check` refused, naming every problem."""
        problems = list(refused.problems)
        message = f'Invalid arguments for "{self.name}": {"; ".join(problems)}.'
        output = {"code": "invalid_input", "message": message, "details": {"problems": problems}}
        return ToolResult(output, True)

    def failure(self, exc: Exception) -> ToolOutcome:
        """What a body that raised ``exc`` gives: its :class:`ToolError` or an environment fault."""
        if not self.check_input and not isinstance(exc, ToolError):
            # A body that judges its own input answers with its exceptions: the agent's
            # mistakes or in-world refusals, not faults of the environment.
            output = {
                "code": "tool_error",
                "message": str(exc) or type(exc).__name__,
                "details": {"type": type(exc).__name__},
            }
            return ToolOutcome(ToolResult(output, True))
        if isinstance(exc, ToolError):
            try:
                # Copied like any output: details often hold the world's own lists and rules.
                return ToolOutcome(ToolResult(clone_json(exc.to_output()), True))
            except Exception as copy_failed:  # details that cannot be copied: the tool's bug
                return _fault_outcome(self.name, copy_failed)
        return _fault_outcome(self.name, exc)


@overload
def tool(fn: ToolFn, /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    check_input: bool = True,
) -> Callable[[ToolFn], Tool]: ...
def tool(
    fn: ToolFn | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    check_input: bool = True,
) -> Tool | Callable[[ToolFn], Tool]:
    """Define a tool from ``def`` or ``async def fn(state, input)``.

    Args:
        fn: the body, when used as a bare ``@silo.tool``.
        name: the name the agent calls (default: the function name).
        description: what the agent reads (default: the docstring's first paragraph, its
            lines joined by single spaces, so a long description can wrap in the source).
        input_schema: JSON Schema for the arguments (default: an object with no parameters).
        check_input: validate each input against ``input_schema`` before the body runs (the
            default). ``False`` is for a body that judges its input itself, such as a tool of
            another framework wrapped as it is: the schema is still published to agents, the
            body gets the input as sent once it passed the JSON screen (JSON values only, see
            ``silo_async._input``), and every exception it raises comes back to the agent as an
            error value (``tool_error``, or a :class:`ToolError`'s own code), never as an
            environment fault.

    Example::

        @silo.tool(name="get_customer", description="Read one customer.", input_schema={
            "type": "object", "properties": {"customerId": {"type": "string"}},
            "required": ["customerId"], "additionalProperties": False})
        def get_customer(state, input):
            return state["customers"][input["customerId"]]
    """

    def make(body: ToolFn) -> Tool:
        return Tool(
            name=name or body.__name__,
            description=description if description is not None else described(body),
            input_schema=_schema_dict(input_schema),
            fn=body,
            check_input=check_input,
        )

    return make(fn) if fn is not None else make


def _json_screen(value: Any) -> Any:
    """The check of a ``check_input=False`` tool: the JSON screen alone (``copy_input``).

    The input's copy (JSON values only, finite numbers, bounded nesting), or an
    :class:`~silo_async._schema.Invalid` saying what is not JSON; the schema is not enforced.
    """
    try:
        return copy_input(value)
    except InputRejectedError:
        return Invalid(tuple(input_problems(value) or ["the arguments are not JSON"]))


def described(fn: Callable[..., Any]) -> str:
    """The first paragraph of ``fn``'s docstring, its lines joined by single spaces."""
    return " ".join((inspect.getdoc(fn) or "").split("\n\n")[0].split())


def _schema_dict(schema: Any) -> Any:
    if schema is None:
        return dict(_NO_ARGS)
    # Anything else is passed through so SchemaValidator can explain what is wrong with it.
    return dict(schema) if isinstance(schema, Mapping) else schema


class BoundTool:
    """A tool closed over one world: the runtime tool, the one type a rollout calls.

    ``await invoke(input)`` checks the input, runs the body on the checked copy, copies the
    output and maps failures: schema violations to ``invalid_input`` (the body never runs),
    :class:`ToolError` to its code, anything else to ``internal_error`` plus a
    :class:`ToolFault` for the trace. For a ``def`` body, ``invoke_sync`` does the same without
    creating a coroutine (the runtime's fast path).

    Args:
        tool: the definition.
        world: the world its body is given.
    """

    __slots__ = ("is_async", "name", "name_json", "tool", "world")

    def __init__(self, tool: Tool, world: Any) -> None:
        self.tool = tool
        self.world = world
        self.name = tool.name
        self.name_json = tool.name_json
        self.is_async = tool.is_async

    @property
    def spec(self) -> ToolSpec:
        """The agent-facing view of this tool."""
        return self.tool.spec

    async def invoke(self, input: Any) -> ToolOutcome:
        """Run the tool on ``input``; never raises for a rejected or failing call."""
        tool = self.tool
        if not tool.is_async:
            return self.invoke_sync(input)
        args = tool.check({} if input is None else input)  # None: a call without arguments
        if type(args) is Invalid:
            return _outcome((tool.invalid(args), None))
        # The body gets the copy that was checked: never the agent's own objects.
        try:
            return _outcome((ToolResult(clone_json(await tool.fn(self.world, args)), False), None))
        except Exception as exc:
            return tool.failure(exc)

    def invoke_sync(self, input: Any) -> ToolOutcome:
        """:meth:`invoke` for a ``def`` body, without a coroutine."""
        tool = self.tool
        args = tool.check({} if input is None else input)  # None: a call without arguments
        if type(args) is Invalid:
            return _outcome((tool.invalid(args), None))
        try:
            return _outcome((ToolResult(clone_json(tool.fn(self.world, args)), False), None))
        except Exception as exc:
            return tool.failure(exc)


def _fault_outcome(name: str, exc: Exception) -> ToolOutcome:
    fault = ToolFault(
        type=type(exc).__name__,
        message=str(exc),
        traceback="".join(traceback.format_exception(exc)),
    )
    message = (
        f'Tool "{name}" failed with an internal error ({fault.type}). '
        "This is a fault in the environment, not in your arguments."
    )
    return ToolOutcome(ToolResult({"code": "internal_error", "message": message}, True), fault)


def _listed(tools: Any, where: str) -> list[Any]:
    # A registry that says ``tools = 5`` (or a dict, or one tool) is a definition mistake to
    # name, not a TypeError from deep inside a run.
    if isinstance(tools, Iterable) and not isinstance(tools, str | bytes | Mapping | Tool):
        return list(tools)
    raise DefinitionError(
        f"{where} got {type(tools).__name__} {tools!r} where a list of tools made with "
        "@silo.tool belongs (the `tools` list of a registry such as tools/__init__.py).",
        {"item": repr(tools)},
    )


def check_tools(tools: Iterable[Tool | BoundTool], where: str = "bind_tools()") -> list[Tool]:
    """The definitions behind ``tools``, checked: every entry a tool, every name used once.

    Raises:
        DefinitionError: ``tools`` is not a list, two tools share a name, or an entry is not a
            tool.
    """
    definitions: list[Tool] = []
    seen: set[str] = set()
    for item in _listed(tools, where):
        definition = item.tool if isinstance(item, BoundTool) else item
        if not isinstance(definition, Tool):
            raise DefinitionError(
                f"{where} got {type(item).__name__} {item!r}; expected tools made with @silo.tool.",
                {"item": repr(item)},
            )
        if definition.name in seen:
            raise DefinitionError(
                f'Tool name "{definition.name}" is registered more than once.',
                {"tool": definition.name},
            )
        seen.add(definition.name)
        definitions.append(definition)
    return definitions


def bind_tools(state: Any, tools: Iterable[Tool | BoundTool]) -> list[BoundTool]:
    """Close ``tools`` over ``state``: the runtime tools an environment's ``bind_tools`` returns.

    Raises:
        DefinitionError: ``tools`` is not a list, two tools share a name, or an entry is not a
            tool.
    """
    items = _listed(tools, "bind_tools()")
    bound: list[BoundTool] = []
    for item, definition in zip(items, check_tools(items), strict=True):
        # A tool already bound to this very world (an environment's bind() built with
        # bind_tools) is kept as it is: binding 50 tools twice per rollout adds up.
        if isinstance(item, BoundTool) and item.world is state:
            bound.append(item)
        else:
            bound.append(BoundTool(definition, state))
    return bound
