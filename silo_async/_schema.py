"""Tool input schemas: checked once at definition, validated fast on every call.

Every schema is checked against JSON Schema Draft 2020-12 when a tool is defined. At call time a
compiled predicate answers "is this input valid?" for the keywords tools actually use (types,
properties, required, additionalProperties, enum, const, items, numeric and length bounds,
pattern); schemas with other keywords use jsonschema's own compiled validator. Only when the
input is invalid does jsonschema walk it to produce the problems, which are then phrased in
Silo's format: ``"<path>" is required``, ``"<key>" is not a parameter; expected one of: ...``,
``"<path>" must be <type>, received <kind>``, ``"<path>" must be one of: ...``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from ._errors import DefinitionError
from ._jsonutil import compact_json, json_equal

__all__ = ["SchemaValidator", "json_kind"]

Predicate = Callable[[Any], bool]

# Keywords that never constrain a value (annotations): ignored by the fast path.
_ANNOTATIONS = frozenset(
    {
        "$schema", "$id", "$comment", "$anchor", "title", "description", "default",
        "examples", "deprecated", "readOnly", "writeOnly", "format", "contentMediaType",
        "contentEncoding", "$defs", "definitions",
    }
)  # fmt: skip


class _Unsupported(Exception):
    """The fast path cannot express this schema; use jsonschema's validator instead."""


def json_kind(value: Any) -> str:
    """The JSON kind of a Python value as an agent would name it (Silo's ``received`` words)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _is_integer(v: Any) -> bool:
    t = type(v)
    return t is int or (t is float and v.is_integer())


_TYPE_TESTS: dict[str, Predicate] = {
    "string": lambda v: type(v) is str,
    "integer": _is_integer,
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "null": lambda v: v is None,
}


def _compile(schema: Any) -> Predicate:
    """Compile a schema into a predicate, or raise _Unsupported."""
    if schema is True or schema == {}:
        return lambda v: True
    if schema is False:
        return lambda v: False
    if not isinstance(schema, dict):
        raise _Unsupported
    checks: list[Predicate] = []
    for key, val in schema.items():
        if key in _ANNOTATIONS:
            continue
        builder = _BUILDERS.get(key)
        if builder is None:
            raise _Unsupported
        check = builder(val, schema)
        if check is not None:
            checks.append(check)
    if len(checks) == 1:
        return checks[0]
    checks_t = tuple(checks)
    return lambda v: all(c(v) for c in checks_t)


def _type(val: Any, _schema: dict[str, Any]) -> Predicate:
    names = [val] if isinstance(val, str) else list(val)
    tests = tuple(_TYPE_TESTS[n] for n in names)
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(t(v) for t in tests)


def _properties(val: dict[str, Any], schema: dict[str, Any]) -> Predicate:
    props = tuple((name, _compile(sub)) for name, sub in val.items())
    extra = schema.get("additionalProperties", True)
    names = frozenset(val)
    if extra is False:

        def check_closed(v: Any) -> bool:
            if type(v) is not dict:
                return True
            if not names.issuperset(v):
                return False
            return all(c(v[n]) for n, c in props if n in v)

        return check_closed

    extra_check = _compile(extra) if extra is not True else None

    def check_open(v: Any) -> bool:
        if type(v) is not dict:
            return True
        if not all(c(v[n]) for n, c in props if n in v):
            return False
        if extra_check is not None:
            return all(extra_check(x) for k, x in v.items() if k not in names)
        return True

    return check_open


def _additional(val: Any, schema: dict[str, Any]) -> Predicate | None:
    if "properties" in schema:
        return None  # handled together with properties
    if val is True:
        return None
    if val is False:
        return lambda v: type(v) is not dict or not v
    sub = _compile(val)
    return lambda v: type(v) is not dict or all(sub(x) for x in v.values())


def _required(val: list[str], _schema: dict[str, Any]) -> Predicate:
    names = tuple(val)
    return lambda v: type(v) is not dict or all(n in v for n in names)


def _enum(val: list[Any], _schema: dict[str, Any]) -> Predicate:
    if all(type(x) is str for x in val):
        options = frozenset(val)
        return lambda v: type(v) is str and v in options
    members = tuple(val)
    return lambda v: any(json_equal(v, m) for m in members)


def _const(val: Any, _schema: dict[str, Any]) -> Predicate:
    return lambda v: json_equal(v, val)


def _items(val: Any, _schema: dict[str, Any]) -> Predicate:
    sub = _compile(val)
    return lambda v: type(v) is not list or all(sub(x) for x in v)


def _number_bound(op: Callable[[Any, Any], bool]) -> Callable[[Any, dict[str, Any]], Predicate]:
    def build(limit: Any, _schema: dict[str, Any]) -> Predicate:
        def check(v: Any) -> bool:
            if type(v) is bool or not isinstance(v, int | float):
                return True
            return op(v, limit)

        return check

    return build


def _length(
    kind: type, op: Callable[[int, int], bool]
) -> Callable[[Any, dict[str, Any]], Predicate]:
    def build(limit: int, _schema: dict[str, Any]) -> Predicate:
        def check(v: Any) -> bool:
            return type(v) is not kind or op(len(v), limit)  # type: ignore[arg-type]

        return check

    return build


def _pattern(val: str, _schema: dict[str, Any]) -> Predicate:
    regex = re.compile(val)
    return lambda v: type(v) is not str or regex.search(v) is not None


_BUILDERS: dict[str, Callable[[Any, dict[str, Any]], Predicate | None]] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional,
    "required": _required,
    "enum": _enum,
    "const": _const,
    "items": _items,
    "minimum": _number_bound(lambda v, n: v >= n),
    "maximum": _number_bound(lambda v, n: v <= n),
    "exclusiveMinimum": _number_bound(lambda v, n: v > n),
    "exclusiveMaximum": _number_bound(lambda v, n: v < n),
    "minLength": _length(str, lambda n, m: n >= m),
    "maxLength": _length(str, lambda n, m: n <= m),
    "minItems": _length(list, lambda n, m: n >= m),
    "maxItems": _length(list, lambda n, m: n <= m),
    "pattern": _pattern,
}


class SchemaValidator:
    """A tool's input schema, checked once and compiled for fast validation.

    Args:
        schema: a JSON Schema (Draft 2020-12) describing the tool's arguments.
        owner: the tool name, used in error messages.

    Raises:
        DefinitionError: the schema is not a valid Draft 2020-12 schema.
    """

    __slots__ = ("_fast", "_validator", "schema")

    def __init__(self, schema: Mapping[str, Any], owner: str) -> None:
        if not isinstance(schema, Mapping):
            raise DefinitionError(
                f'Tool "{owner}" has an input schema of type {type(schema).__name__}; '
                'it must be a JSON Schema object such as {"type": "object", "properties": {}}.',
                {"tool": owner},
            )
        self.schema: dict[str, Any] = dict(schema)
        try:
            Draft202012Validator.check_schema(self.schema)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(root)"
            raise DefinitionError(
                f'Tool "{owner}" has an invalid input schema at {where}: {exc.message}.',
                {"tool": owner, "path": where},
            ) from None
        self._validator = Draft202012Validator(self.schema)
        try:
            self._fast: Predicate = _compile(self.schema)
        except (_Unsupported, KeyError, TypeError, re.error):
            self._fast = self._validator.is_valid

    def is_valid(self, value: Any) -> bool:
        """True when ``value`` satisfies the schema (fast path)."""
        return self._fast(value)

    def problems(self, value: Any) -> list[str]:
        """Every violation in ``value``, phrased for an agent; empty when valid."""
        if self._fast(value):
            return []
        errors = sorted(self._validator.iter_errors(value), key=_error_rank)
        out: list[str] = []
        for error in errors:
            for problem in _describe(error):
                if problem not in out:
                    out.append(problem)
        return out or ["the arguments do not match the tool's input schema"]


_RANK = {"type": 0, "required": 1, "additionalProperties": 2, "unevaluatedProperties": 2}


def _error_rank(error: ValidationError) -> int:
    head = error.relative_schema_path[0] if error.relative_schema_path else ""
    return _RANK.get(str(head), 3)


def _path(parts: Iterable[Any]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _quoted(path: str) -> str:
    return f'"{path}"' if path else "arguments"


def _join(values: Iterable[Any]) -> str:
    return ", ".join(v if isinstance(v, str) else compact_json(v) for v in values)


def _describe(error: ValidationError) -> list[str]:
    """Phrase one jsonschema error as one or more Silo-style problems."""
    keyword = str(error.validator)
    rule: Any = error.validator_value
    instance = error.instance
    where = _path(error.absolute_path)
    prefix = f"{where}." if where else ""
    if keyword == "required":
        missing = [n for n in rule if isinstance(instance, dict) and n not in instance]
        return [f'"{prefix}{name}" is required' for name in missing]
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, dict):
        return _unknown_keys(error, instance, prefix)
    if keyword == "type":
        wanted = rule if isinstance(rule, str) else " or ".join(rule)
        article = "an " if not where and wanted == "object" else ""
        return [f"{_quoted(where)} must be {article}{wanted}, received {json_kind(instance)}"]
    if keyword == "enum":
        return [f"{_quoted(where)} must be one of: {_join(rule)}"]
    if keyword == "const":
        return [f"{_quoted(where)} must be {_join([rule])}"]
    return [_bound_message(keyword, rule, instance, where) or f"{_quoted(where)}: {error.message}"]


def _unknown_keys(error: ValidationError, instance: dict[str, Any], prefix: str) -> list[str]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    declared = list(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    extras = [k for k in instance if k not in declared and not any(p.search(k) for p in patterns)]
    tail = f"; expected one of: {', '.join(declared)}" if declared else "; this takes no parameters"
    if error.validator == "additionalProperties" and error.validator_value not in (False, None):
        return [f'"{prefix}{k}" is not allowed: {error.message}' for k in extras] or [error.message]
    return [f'"{prefix}{k}" is not a parameter{tail}' for k in extras]


_BOUND_WORDS = {
    "minimum": "must be >= {rule}",
    "maximum": "must be <= {rule}",
    "exclusiveMinimum": "must be > {rule}",
    "exclusiveMaximum": "must be < {rule}",
    "minLength": "must be at least {rule} characters long",
    "maxLength": "must be at most {rule} characters long",
    "minItems": "must have at least {rule} items",
    "maxItems": "must have at most {rule} items",
    "uniqueItems": "must not contain duplicate items",
    "pattern": "must match the pattern {rule}",
    "multipleOf": "must be a multiple of {rule}",
    "minProperties": "must have at least {rule} properties",
    "maxProperties": "must have at most {rule} properties",
}


def _bound_message(keyword: str, rule: Any, instance: Any, where: str) -> str | None:
    words = _BOUND_WORDS.get(keyword)
    if words is None:
        if keyword in ("anyOf", "oneOf"):
            return f"{_quoted(where)} does not match any of the allowed forms"
        return None
    shown = compact_json(instance)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{_quoted(where)} {words.format(rule=rule)}, received {shown}"
