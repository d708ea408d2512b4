"""Tool input schemas: checked once at definition, validated fast on every call.

Every schema is checked against JSON Schema Draft 2020-12 when a tool is defined. At call time
one method, :meth:`SchemaValidator.check`, answers "is this input valid?" and gives the copy the
body receives: a compiled predicate decides for the keywords tools actually use (types,
properties, required, additionalProperties, enum, const, items, numeric and length bounds,
pattern); schemas with other keywords use jsonschema's own compiled validator. Only when the
input is invalid does jsonschema walk it to produce the problems, which are then phrased in
Silo's format: ``"<path>" is required``, ``"<key>" is not a parameter; expected one of: ...``,
``"<path>" must be <type>, received <kind>``, ``"<path>" must be one of: ...``.

Numbers are decided here, once, for every tool: an input reaches the schema only as the copy
``silo_async._input.copy_input`` makes (finite numbers of at most about 1.8e308, JSON values
only, bounded nesting), and ``integer`` also means "within ±(2**53 - 1)" — the integers every
JSON reader holds exactly (RFC 8259 section 6, JavaScript's safe integers). A tool body can
therefore do arithmetic on any ``number`` and ``integer`` it receives without NaN, infinities
or integers too long to print; domain ranges (a page size, a number of days) remain the
schema's ``minimum``/``maximum`` or the tool's own rules.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs
import jsonschema
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from ._errors import DefinitionError
from ._input import LARGEST_NUMBER, InputRejectedError, copy_input, input_problems
from ._jsonutil import compact_json, json_equal
from ._strict import NullPlan, null_plan

__all__ = ["MAX_SAFE_INTEGER", "Invalid", "SchemaValidator", "json_kind"]

#: The largest magnitude of a JSON Schema ``integer`` a tool accepts: 2**53 - 1.
MAX_SAFE_INTEGER = 2**53 - 1

Predicate = Callable[[Any], bool]
#: A flat input's checked copy, or ``NOT_FLAT`` (``False``).
Copier = Callable[[Any], Any]

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


_TYPE_TESTS = {
    "string": "type({v}) is str",
    "integer": (
        "((type({v}) is int or (type({v}) is float and {v}.is_integer()))"
        f" and -{MAX_SAFE_INTEGER} <= {{v}} <= {MAX_SAFE_INTEGER})"
    ),
    "number": "(type({v}) is int or type({v}) is float)",
    "boolean": "type({v}) is bool",
    "object": "type({v}) is dict",
    "array": "type({v}) is list",
    "null": "{v} is None",
}
_NUMBER = "(type({v}) is int or type({v}) is float)"
_BOUNDS = {
    "minimum": (_NUMBER, "{v} < {c}"),
    "maximum": (_NUMBER, "{v} > {c}"),
    "exclusiveMinimum": (_NUMBER, "{v} <= {c}"),
    "exclusiveMaximum": (_NUMBER, "{v} >= {c}"),
    "minLength": ("type({v}) is str", "len({v}) < {c}"),
    "maxLength": ("type({v}) is str", "len({v}) > {c}"),
    "minItems": ("type({v}) is list", "len({v}) < {c}"),
    "maxItems": ("type({v}) is list", "len({v}) > {c}"),
}
_MISSING = object()


class _Codegen:
    """Turns a schema into the source of one Python function ``check(v0) -> bool``.

    The generated code is straight-line ``if ...: return False`` tests — no per-keyword calls,
    no generators — which is what keeps the happy path well under a microsecond.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {"_json_equal": json_equal, "_MISSING": _MISSING}

    def const(self, value: Any) -> str:
        name = f"_c{len(self.consts)}"
        self.consts[name] = value
        return name

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def schema(self, schema: Any, v: str, indent: int, depth: int) -> None:
        if schema is True or schema == {}:
            return
        if schema is False:
            self.emit(indent, "return False")
            return
        if not isinstance(schema, dict):
            raise _Unsupported
        for key, val in schema.items():
            if key in _ANNOTATIONS or (key == "additionalProperties" and "properties" in schema):
                continue
            handler = getattr(self, "kw_" + key, None)
            if handler is not None:
                handler(val, schema, v, indent, depth)
            elif key in _BOUNDS:
                guard, fails = _BOUNDS[key]
                test = fails.format(v=v, c=self.const(val))
                self.emit(indent, f"if {guard.format(v=v)} and {test}: return False")
            else:
                raise _Unsupported

    def kw_type(self, val: Any, _s: dict[str, Any], v: str, indent: int, _d: int) -> None:
        names = [val] if isinstance(val, str) else list(val)
        test = " or ".join(_TYPE_TESTS[n].format(v=v) for n in names)
        self.emit(indent, f"if not ({test}): return False")

    def kw_required(self, val: Any, _s: dict[str, Any], v: str, indent: int, _d: int) -> None:
        if val:
            names = self.const(frozenset(val))
            self.emit(indent, f"if type({v}) is dict and not {names}.issubset({v}): return False")

    def kw_properties(self, val: Any, schema: dict[str, Any], v: str, indent: int, d: int) -> None:
        self.emit(indent, f"if type({v}) is dict:")
        self.emit(indent + 1, "pass")  # the block may otherwise be empty ({} properties)
        extra = schema.get("additionalProperties", True)
        known = self.const(frozenset(val))
        if extra is False:
            self.emit(indent + 1, f"if not {known}.issuperset({v}): return False")
        x = f"v{d + 1}"
        for name, sub in val.items():
            self.emit(indent + 1, f"{x} = {v}.get({name!r}, _MISSING)")
            self.emit(indent + 1, f"if {x} is not _MISSING:")
            self.emit(indent + 2, "pass")
            self.schema(sub, x, indent + 2, d + 1)
        if extra is not True and extra is not False:
            k = f"k{d + 1}"
            self.emit(indent + 1, f"for {k}, {x} in {v}.items():")
            self.emit(indent + 2, f"if {k} in {known}: continue")
            self.schema(extra, x, indent + 2, d + 1)

    def kw_additionalProperties(
        self, val: Any, _s: dict[str, Any], v: str, indent: int, d: int
    ) -> None:
        if val is False:
            self.emit(indent, f"if type({v}) is dict and {v}: return False")
        elif val is not True:
            self._each(f"{v}.values()", f"type({v}) is dict", val, indent, d)

    def kw_items(self, val: Any, _s: dict[str, Any], v: str, indent: int, d: int) -> None:
        self._each(v, f"type({v}) is list", val, indent, d)

    def _each(self, iterable: str, guard: str, sub: Any, indent: int, d: int) -> None:
        x = f"v{d + 1}"
        self.emit(indent, f"if {guard}:")
        self.emit(indent + 1, f"for {x} in {iterable}:")
        self.emit(indent + 2, "pass")
        self.schema(sub, x, indent + 2, d + 1)

    def kw_enum(self, val: Any, _s: dict[str, Any], v: str, indent: int, _d: int) -> None:
        if all(type(m) is str for m in val):
            options = self.const(frozenset(val))
            self.emit(indent, f"if type({v}) is not str or {v} not in {options}: return False")
            return
        members = self.const(tuple(val))
        self.emit(indent, f"for m in {members}:")
        self.emit(indent + 1, f"if _json_equal({v}, m): break")
        self.emit(indent, "else:")
        self.emit(indent + 1, "return False")

    def kw_const(self, val: Any, _s: dict[str, Any], v: str, indent: int, _d: int) -> None:
        self.emit(indent, f"if not _json_equal({v}, {self.const(val)}): return False")

    def kw_pattern(self, val: Any, _s: dict[str, Any], v: str, indent: int, _d: int) -> None:
        regex = self.const(re.compile(val))
        self.emit(indent, f"if type({v}) is str and {regex}.search({v}) is None: return False")


def _compile(schema: Any) -> Predicate:
    """Compile a schema into a fast predicate, or raise _Unsupported."""
    gen = _Codegen()
    gen.schema(schema, "v0", 1, 0)
    source = "def check(v0):\n" + "\n".join([*gen.lines, "    return True"]) + "\n"
    namespace = dict(gen.consts)
    exec(compile(source, "<silo_async schema>", "exec"), namespace)
    check: Predicate = namespace["check"]
    return check


#: JSON types whose values are never containers: a closed object of such properties is copied
#: by ``dict()`` once its check passed.
_SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "null"})
#: Keywords a property of a flat object may carry besides ``type`` / ``enum``.
_SCALAR_KEYWORDS = frozenset(
    {"type", "enum", "const", "pattern", *_ANNOTATIONS, *(k for k in _BOUNDS if "Items" not in k)}
)
#: A copier's answer when the input is not a flat, valid one: the caller takes the slow path.
NOT_FLAT = False


def _scalar_kinds(sub: Any) -> set[str] | None:
    """The JSON types a property schema admits, when they are all scalars; else None."""
    if not isinstance(sub, dict) or not set(sub) <= _SCALAR_KEYWORDS:
        return None
    kind = sub.get("type")
    kinds = {kind} if isinstance(kind, str) else set(kind) if isinstance(kind, list) else None
    if kinds is None:
        enum = sub.get("enum")
        if isinstance(enum, list) and enum and all(type(m) is str for m in enum):
            return {"string"}
        return None
    return kinds if kinds <= _SCALAR_TYPES else None


def _compile_copier(schema: Any) -> Copier | None:
    """One pass that checks a flat input and copies it, for the commonest tool schema.

    A closed object (``additionalProperties: false``) whose properties are all typed scalars
    needs no deep copy: once the compiled check has passed, every value is an exact ``str``,
    ``int``, ``float``, ``bool`` or ``None``, so ``dict(value)`` (in C) is a full copy. Numbers
    are held to copy_input's rule (finite, at most the largest double). The copier returns
    :data:`NOT_FLAT` for anything else, valid or not, and the caller then takes the general
    path (``copy_input`` + the predicate), so both give the same answers.
    """
    if not isinstance(schema, dict) or schema.get("additionalProperties") is not False:
        return None
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict):
        return None
    gen = _Codegen()
    head = "if type(v0) is not dict"
    head += f" or not {gen.const(frozenset(properties))}.issuperset(v0)"
    required = schema.get("required")
    if required:
        head += f" or not {gen.const(frozenset(required))}.issubset(v0)"
    gen.emit(1, head + ": return False")
    # `in` then a subscript, never .get(): no method call per property on the hot path.
    for name, sub in properties.items():
        kinds = _scalar_kinds(sub)
        if kinds is None:
            return None
        gen.emit(1, f"if {name!r} in v0:")
        gen.emit(2, f"v1 = v0[{name!r}]")
        gen.schema(sub, "v1", 2, 1)
        if "number" in kinds:  # copy_input's rule: finite, at most the largest double
            gen.emit(2, "if type(v1) is float and v1 - v1 != 0.0: return False")
            gen.emit(2, f"if type(v1) is int and not -{LARGEST_NUMBER} <= v1 <= {LARGEST_NUMBER}:")
            gen.emit(3, "return False")
    for key in schema:
        if key not in ("type", "properties", "required", "additionalProperties", *_ANNOTATIONS):
            return None  # a keyword about the object as a whole: the general path decides
    source = "def copy(v0):\n" + "\n".join([*gen.lines, "    return dict(v0)"]) + "\n"
    namespace = dict(gen.consts)
    exec(compile(source, "<silo_async schema copier>", "exec"), namespace)
    copier: Copier = namespace["copy"]
    return copier


def _is_integer(checker: Any, instance: Any) -> bool:
    base = Draft202012Validator.TYPE_CHECKER.is_type(instance, "integer")
    return bool(base and -MAX_SAFE_INTEGER <= instance <= MAX_SAFE_INTEGER)


#: Draft 2020-12 with this module's ``integer``: jsonschema explains what the fast path refused.
_Validator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


_Compiled = tuple[Draft202012Validator, Predicate, Copier | None]


def _build(schema: dict[str, Any]) -> _Compiled:
    """Check ``schema`` against the metaschema and compile it (the slow part of a definition)."""
    Draft202012Validator.check_schema(schema)
    validator = _Validator(schema)
    try:
        fast = _compile(schema)
    except (_Unsupported, KeyError, TypeError, ValueError, SyntaxError, re.error):
        fast = validator.is_valid
    try:
        copier = _compile_copier(schema)
    except (_Unsupported, KeyError, TypeError, ValueError, SyntaxError, re.error):
        copier = None
    return validator, fast, copier


@functools.lru_cache(maxsize=4096)
def _compiled(key: str) -> _Compiled:
    # Environments loaded again (every `env validate`, every handle.run) and tools sharing a
    # schema reuse one compiled validator instead of paying the metaschema check each time.
    return _build(json.loads(key))


class SchemaValidator:
    """A tool's input schema, checked once and compiled for fast validation.

    Args:
        schema: a JSON Schema (Draft 2020-12) describing the tool's arguments.
        owner: the tool name, used in error messages.

    Raises:
        DefinitionError: the schema is not a valid Draft 2020-12 schema.
    """

    __slots__ = ("_fast", "_nulls", "_validator", "copier", "schema")

    def __init__(self, schema: Mapping[str, Any], owner: str) -> None:
        if not isinstance(schema, Mapping):
            raise DefinitionError(
                f'Tool "{owner}" has an input schema of type {type(schema).__name__}; '
                'it must be a JSON Schema object such as {"type": "object", "properties": {}}.',
                {"tool": owner},
            )
        self.schema: dict[str, Any] = dict(schema)
        self._nulls: NullPlan | None = None  # built on first need (see drop_nulls)
        try:
            key = json.dumps(self.schema)  # order-sensitive: property order shapes messages
        except (TypeError, ValueError):
            key = None  # not JSON (e.g. a set inside): let jsonschema say what is wrong
        try:
            compiled = _compiled(key) if key is not None else _build(self.schema)
            self._validator, self._fast, self.copier = compiled
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(root)"
            raise DefinitionError(
                f'Tool "{owner}" has an invalid input schema at {where}: {exc.message}.',
                {"tool": owner, "path": where},
            ) from None

    copier: Copier | None
    """For a flat closed schema, ``copier(value)``: the checked copy in one pass, or
    :data:`NOT_FLAT` when the general path must decide (see :func:`_compile_copier`)."""

    def check(self, value: Any) -> Any:
        """The checked copy of ``value`` a tool's body receives, or :class:`Invalid` saying why.

        The one place that decides whether an input is valid. A flat input of a flat closed
        schema is checked and copied in one compiled pass; any other is copied by
        ``copy_input`` (which refuses what is not JSON) and checked by the compiled predicate.
        A copy the schema refuses is given one more chance without the ``null`` values that mean
        "not given" (strict function calling's way to leave an optional property out, see
        :meth:`drop_nulls`): the body never sees those keys, and valid inputs never pay for the
        second look. Only a refused input is walked again, once, to phrase its problems.
        """
        copier = self.copier
        if copier is not None:
            args = copier(value)
            if args is not NOT_FLAT:
                return args
        try:
            args = copy_input(value)
        except InputRejectedError:
            return Invalid(tuple(input_problems(value) or ["the arguments are not JSON"]))
        if self._fast(args) or (self.drop_nulls(args) and self._fast(args)):
            return args
        return Invalid(self._explain(args))

    def is_valid(self, value: Any) -> bool:
        """True when :meth:`check` accepts ``value``."""
        return not isinstance(self.check(value), Invalid)

    def problems(self, value: Any) -> list[str]:
        """Every violation in ``value``, phrased for an agent (empty: :meth:`check` accepts it)."""
        checked = self.check(value)
        return list(checked.problems) if isinstance(checked, Invalid) else []

    def drop_nulls(self, value: Any) -> bool:
        """Drop, in place, every ``null`` that means "not given"; True when any was dropped.

        That is a ``null`` for an optional property whose schema does not allow ``null``, at
        any depth (strict function calling sends one for each property it leaves out; see
        ``silo_async._strict``). ``value`` must be a copy made by ``copy_input``.
        """
        plan = self._nulls
        if plan is None:
            plan = self._nulls = null_plan(self.schema) or NullPlan()  # NullPlan(): none to drop
        return plan.apply(value)

    @property
    def predicate(self) -> Predicate:
        """The compiled schema check for a value already copied by ``copy_input``."""
        return self._fast

    def _explain(self, copy: Any) -> tuple[str, ...]:
        """The problems of a copy the schema refused, in Silo's words (jsonschema finds them)."""
        try:
            errors = sorted(self._validator.iter_errors(copy), key=_error_rank)
        except RecursionError:  # a recursive schema walked over a deep (but allowed) input
            return ("the arguments do not match the tool's input schema",)
        out: list[str] = []
        for error in errors:
            for problem in _describe(error):
                if problem not in out:
                    out.append(problem)
        return tuple(out) or ("the arguments do not match the tool's input schema",)


@attrs.frozen
class Invalid:
    """An input its schema refuses (what :meth:`SchemaValidator.check` gives instead of a copy).

    Attributes:
        problems: every violation, phrased for an agent (never empty).
    """

    problems: tuple[str, ...]


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
    if keyword == "type" and _unsafe_integer(rule, instance):
        return [
            f"{_quoted(where)} must be an integer between -{MAX_SAFE_INTEGER} and "
            f"{MAX_SAFE_INTEGER}, received {_shown(instance)}"
        ]
    if keyword == "type":
        wanted = rule if isinstance(rule, str) else " or ".join(rule)
        article = "an " if not where and wanted == "object" else ""
        return [f"{_quoted(where)} must be {article}{wanted}, received {json_kind(instance)}"]
    if keyword == "enum":
        return [f"{_quoted(where)} must be one of: {_join(rule)}"]
    if keyword == "const":
        return [f"{_quoted(where)} must be {_join([rule])}"]
    return [_bound_message(keyword, rule, instance, where) or f"{_quoted(where)}: {error.message}"]


def _unsafe_integer(rule: Any, instance: Any) -> bool:
    wanted = [rule] if isinstance(rule, str) else list(rule)
    return (
        "integer" in wanted
        and Draft202012Validator.TYPE_CHECKER.is_type(instance, "integer")
        and not _is_integer(None, instance)
    )


def _shown(instance: Any) -> str:
    shown = compact_json(instance)
    return shown if len(shown) <= 40 else shown[:37] + "..."


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
    return f"{_quoted(where)} {words.format(rule=rule)}, received {_shown(instance)}"
