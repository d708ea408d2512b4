"""Tools as Python methods: a real signature, type hints and a Google docstring per tool.

Trainers that take Python callables as tools (TRL, through ``transformers.utils.
get_json_schema``) read a tool's name, parameters, types and descriptions back from the method:
its ``inspect.Signature`` (required parameters have no default), its type hints (built from the
JSON Schema's types, as ``typing`` objects every version of that reader understands) and its
docstring's ``Args:`` section (one line per parameter; an ``enum`` as a trailing ``(choices:
[...])``). Names that are not Python identifiers get safe ones, mapped back on each call.
"""

from __future__ import annotations

import inspect
import json
import keyword
import re
from collections.abc import Callable, Iterable
from typing import Any, Union

import attrs

from .._tools import ToolSpec

__all__ = ["MethodSpec", "Param", "annotation", "method_specs", "safe_name"]

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


def annotation(schema: Any) -> Any:
    """The Python type of a JSON Schema: ``str``, ``int``, ``list[str]``, ``Optional[int]``..."""
    if not isinstance(schema, dict):
        return Any
    kind = schema.get("type")
    if isinstance(kind, str):
        return _one(kind, schema)
    if isinstance(kind, list) and kind:
        return _union([_one(str(k), schema) for k in kind])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _union([annotation(s) for s in schema[key]])
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values:
        return _union([_value_type(v) for v in values])
    return Any


def _one(kind: str, schema: dict[str, Any]) -> Any:
    if kind == "array":
        return list[annotation(schema.get("items"))]  # type: ignore[misc]
    if kind == "object":
        return dict[str, Any]
    if kind == "null":
        return type(None)
    return _SCALARS.get(kind, Any)


def _value_type(value: Any) -> Any:
    if value is None:
        return type(None)
    for kind in (bool, int, float, str):  # bool first: True is an int too
        if isinstance(value, kind):
            return kind
    return dict[str, Any] if isinstance(value, dict) else list[Any]


def _union(members: list[Any]) -> Any:
    unique = list(dict.fromkeys(members))
    if Any in unique:
        return Any
    # typing.Union, not `X | Y`: older readers of type hints only understand typing.Union.
    return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007


def _taken(name: str, used: set[str]) -> str:
    candidate, n = name, 2
    while candidate in used:
        candidate, n = f"{name}_{n}", n + 1
    used.add(candidate)
    return candidate


def safe_name(name: str, used: set[str], reserved: Iterable[str] = ()) -> str:
    """A public Python identifier for ``name``, unique among ``used`` (which it joins)."""
    # Leading underscores would make the method private: trainers skip those.
    base = re.sub(r"\W", "_", name).lstrip("_") or "tool"
    if base[0].isdigit():
        base = f"n{base}"
    if keyword.iskeyword(base) or keyword.issoftkeyword(base) or base in reserved:
        base = f"{base}_"
    return _taken(base, used)


@attrs.frozen
class Param:
    """One parameter of a tool method: its Python name, the property it fills, its type."""

    name: str
    prop: str
    required: bool
    annotation: Any
    description: str


@attrs.frozen
class MethodSpec:
    """A tool as a method: its name, the tool it calls, its parameters and docstring."""

    name: str
    tool: str
    params: tuple[Param, ...]
    doc: str

    def signature(self) -> inspect.Signature:
        """``(self, *, required: T, optional: T | None = None)``: keyword-only, schema order."""
        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        for p in self.params:
            default = inspect.Parameter.empty if p.required else None
            params.append(
                inspect.Parameter(
                    p.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=p.annotation
                )
            )
        return inspect.Signature(params)

    def tool_input(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The tool's input for a call: properties by their schema names, unset optionals left out.

        A keyword the method does not declare is passed on under its own name, for the tool's
        validation to explain (an observation, not a ``TypeError``).
        """
        by_name = {p.name: p for p in self.params}
        out: dict[str, Any] = {}
        for key, value in kwargs.items():
            param = by_name.get(key)
            if param is None:
                out[key] = value
            elif value is not None or param.required:
                out[param.prop] = value
        return out

    def bind(self, call: Callable[..., Any], owner: str) -> Callable[..., Any]:
        """The method: ``call(self, tool, input)`` behind this spec's signature and docstring."""
        tool, spec = self.tool, self

        def method(self: Any, **kwargs: Any) -> Any:
            return call(self, tool, spec.tool_input(kwargs))

        method.__name__ = self.name
        method.__qualname__ = f"{owner}.{self.name}"
        method.__doc__ = self.doc
        method.__signature__ = self.signature()  # type: ignore[attr-defined]
        method.__annotations__ = {p.name: p.annotation for p in self.params}
        return method


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _describe(prop: str, schema: Any) -> str:
    schema = schema if isinstance(schema, dict) else {}
    text = _one_line(str(schema.get("description") or "")) or f"The {prop}."
    values = schema.get("enum")
    if (
        isinstance(values, list)
        and values
        and all(isinstance(v, str | int | float) for v in values)
    ):
        text += f" (choices: {json.dumps(values, ensure_ascii=False)})"
    return text


def _params(schema: dict[str, Any]) -> tuple[Param, ...]:
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    required = set(schema.get("required") or ())
    used: set[str] = {"self"}
    params = []
    for prop, sub in props.items():
        kind = annotation(sub)
        is_required = prop in required
        params.append(
            Param(
                name=safe_name(prop, used, ("self",)),
                prop=prop,
                required=is_required,
                annotation=kind if is_required else Union[kind, None],  # noqa: UP007
                description=_describe(prop, sub),
            )
        )
    return tuple(params)


def _doc(spec: ToolSpec, params: tuple[Param, ...]) -> str:
    summary = inspect.cleandoc(spec.description or "") or f"Call the {spec.name} tool."
    args = [f"    {p.name}: {p.description}" for p in params] or [
        "    This tool takes no arguments."
    ]
    returns = "    The tool's output, or the error message of a rejected call."
    return "\n".join([summary, "", "Args:", *args, "", "Returns:", returns])


def method_specs(tools: Iterable[ToolSpec], reserved: Iterable[str]) -> list[MethodSpec]:
    """One :class:`MethodSpec` per tool, with method names unique and clear of ``reserved``."""
    used: set[str] = set()
    keep = tuple(reserved)
    specs = []
    for tool in tools:
        params = _params(tool.input_schema)
        name = safe_name(tool.name, used, keep)
        specs.append(MethodSpec(name=name, tool=tool.name, params=params, doc=_doc(tool, params)))
    return specs
