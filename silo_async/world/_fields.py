"""Typed input fields: one declaration gives a property's schema, its parsed value and its message.

A tool's input is declared once, as a class of fields (in the spirit of attrs)::

    class Claim(w.Input):
        employeeId = w.fields.string("Who spent the money.")
        category = w.fields.enum("Kind of expense.", CATEGORIES)
        amount = w.fields.money("Amount incl. VAT.")
        note = w.fields.string("Anything to add.", default=None)

The class gives the tool's input schema (each field's property, in declaration order, and
``required`` naming the fields without a default) and, for each call, a typed view of the input:
``args.amount`` is the amount rounded to cents, or ``invalid_input`` in the house style
(``"amount" must be a positive amount; received 0.``). A field is read when the tool first asks
for it (then kept), so a tool settles who acts and on which record before it judges the details,
and an absent key and a null one both mean "not given".
"""

from __future__ import annotations

import copy
import keyword
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar, cast, overload

from .._errors import DefinitionError, ToolError
from ._builders import Schema, closed_object
from ._readers import REQUIRED, absent

__all__ = [
    "Field",
    "Input",
    "Reader",
    "fields_of",
    "given",
    "input_of",
    "read",
    "require_some",
    "schema_of",
    "value_of",
]

T = TypeVar("T")

#: ``read(input, key, default, *, path, **options)``: a reader such as ``read_money``.
Reader = Callable[..., Any]


class Field(Generic[T]):
    """One input property: its JSON Schema, whether it is required, and how its value is read.

    Build fields with the kinds of :mod:`silo_async.world.fields` (``string``, ``enum``,
    ``integer``...) or :func:`~silo_async.world.fields.field`, as attributes of an
    :class:`Input` class; the attribute's name is the property's key (a Python keyword takes a
    trailing underscore: ``from_`` is the key ``from``).

    Attributes:
        schema: the property's schema (what the agent reads).
        default: the value when the key is absent or null; ``REQUIRED`` makes the key required.
        reader: ``reader(input, key, default, path=..., **options)``; ``None`` takes the value
            as the schema admitted it.
        options: the reader's rules (bounds, allowed values...).
        rule: ``rule(name, value, **options)``, the reader's rule for a value that is there
            (a kind's fast path; ``None``: call ``reader``).
        key: the input key, once the field belongs to an :class:`Input` class ("" before).
    """

    __slots__ = ("attr", "default", "fresh", "key", "options", "reader", "rule", "schema")

    def __init__(
        self,
        schema: Schema,
        reader: Reader | None = None,
        default: Any = REQUIRED,
        options: Mapping[str, Any] | None = None,
        rule: Callable[..., Any] | None = None,
    ) -> None:
        self.schema = schema
        self.reader = reader
        self.default = default
        self.options: Mapping[str, Any] = options or {}
        self.rule = rule
        # A list or dict default is copied for each call: it is often stored in the world.
        self.fresh = isinstance(default, list | dict)
        self.attr = ""
        self.key = ""

    @property
    def required(self) -> bool:
        """Whether the key must be given (the field has no default)."""
        return self.default is REQUIRED

    def read(self, input: Mapping[str, Any], key: str, path: str | None = None) -> T:
        """The value of ``input[key]`` (``path``: where ``input`` sits, for messages).

        Raises:
            ToolError: ``invalid_input`` in the house style.
        """
        rule = self.rule
        if rule is None and self.reader is not None:
            return cast(T, self.reader(input, key, self._default(), path=path, **self.options))
        value = input.get(key)
        if value is None:
            value = absent(f"{path}.{key}" if path else key, self._default())
        elif rule is not None:  # (without a rule: the value as the schema admitted it)
            name = f"{path}.{key}" if path else key
            options = self.options
            value = rule(name, value, **options) if options else rule(name, value)
        return cast(T, value)

    def _default(self) -> Any:
        default = self.default
        return default.copy() if self.fresh else default

    def key_for(self, attr: str) -> str:
        """The input key the attribute ``attr`` reads: its name (``from_`` reads ``from``)."""
        return attr[:-1] if attr.endswith("_") and keyword.iskeyword(attr[:-1]) else attr

    def bound(self, attr: str, key: str) -> Field[T]:
        """This field as the attribute ``attr`` of an :class:`Input` class, reading ``key``."""
        bound = copy.copy(self)
        bound.attr, bound.key = attr, key
        return bound

    def stored(self, args: Input) -> Any:
        """The value this field puts under its key: what an update sets, a list filter compares.

        The value read, for most fields (a ref: the id of the record it read).
        """
        return getattr(args, self.attr)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Field[T]: ...
    @overload
    def __get__(self, obj: Input, owner: type[Any]) -> T: ...
    def __get__(self, obj: Input | None, owner: type[Any]) -> Field[T] | T:
        if obj is None:
            return self
        value = self.read(obj._input, self.key, obj._path)
        # Kept in the instance: later reads of the attribute do not reach this descriptor.
        obj.__dict__[self.attr] = value
        return value

    def __repr__(self) -> str:
        state = "required" if self.required else f"default={self.default!r}"
        return f"<Field {self.key or '?'} {self.schema.get('type', '')} {state}>"


class Input:
    """A tool's input, declared as fields; an instance is the typed view of one call's input.

    Subclass it with :class:`Field` attributes; hand the class to ``define_tool`` or
    ``Actor.write_tool``, whose body then gets an instance (``args``) whose attributes are the
    parsed values. Subclasses inherit fields (a field redeclared keeps its place);
    :func:`fields_of` lists them.

    Args:
        input: the input (already checked against the schema when a tool built it).
        path: where ``input`` sits in a larger input, for messages (``lines[2]``).
        state: the world, where a field looks a record up (:func:`~silo_async.world.fields.ref`);
            ``define_tool`` and ``write_tool`` give it.
    """

    _fields: ClassVar[Mapping[str, Field[Any]]] = {}

    _input: Mapping[str, Any]
    _path: str | None
    _state: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, Field[Any]] = {}
        for base in reversed(cls.__mro__[1:]):
            found.update(getattr(base, "_fields", {}))
        for attr, value in list(vars(cls).items()):
            if isinstance(value, Field):
                bound = value.bound(attr, value.key_for(_checked(cls, attr)))
                setattr(cls, attr, bound)
                found[bound.key] = bound
        cls._fields = found

    def __init__(
        self, input: Mapping[str, Any], path: str | None = None, state: Any = None
    ) -> None:
        self._input = input
        self._path = path
        self._state = state

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self._input)!r})"


def _checked(cls: type, attr: str) -> str:
    if attr.startswith("_"):
        raise DefinitionError(
            f"{cls.__name__}.{attr}: a field's name is its input key; it may not start with '_'.",
            {"field": attr},
        )
    return attr


def fields_of(cls: type[Input]) -> Mapping[str, Field[Any]]:
    """The fields an :class:`Input` class declares, by key, in order (inherited ones first)."""
    return cls._fields


def schema_of(cls: type[Input]) -> Schema:
    """The closed input schema an :class:`Input` class declares (``required``: no default)."""
    return closed_object(
        {key: f.schema for key, f in cls._fields.items()},
        [key for key, f in cls._fields.items() if f.required],
    )


def input_of(args: Input | Mapping[str, Any]) -> Mapping[str, Any]:
    """The input an :class:`Input` views (a mapping is returned as it is)."""
    return args._input if isinstance(args, Input) else args


def read(args: Input, key: str, **changes: Any) -> Any:
    """Read the field ``key`` of ``args`` again, with rules only known at call time.

    For a default or bound computed from the world, e.g. ``read(item, "amount",
    default=owed, maximum=owed)``, or ``default=REQUIRED`` where this call needs a field the
    schema leaves optional; the message names the field as ``args`` does.

    Raises:
        ToolError: ``invalid_input`` in the house style.
        KeyError: ``args`` declares no field ``key``.
    """
    field = type(args)._fields[key]
    default = changes.pop("default", field._default())
    if field.reader is None:
        raise TypeError(f'field "{key}" is read as given: it has no rules to change')
    options = {**field.options, **changes}
    return field.reader(args._input, key, default, path=args._path, **options)


def given(args: Input) -> list[str]:
    """The keys of ``args``'s fields the input gives, in declaration order, none of them read.

    An absent key and a null one are not given. For "at least one of these" checks and for
    updates that change only what is given, before any value is judged.
    """
    present = args._input
    return [key for key in args._fields if present.get(key) is not None]


def value_of(args: Input | Mapping[str, Any], key: str) -> Any:
    """The value of ``key``: read by the field an :class:`Input` declares for it, else as given."""
    if isinstance(args, Input):
        field = args._fields.get(key)
        if field is not None:
            return field.stored(args)
        return args._input.get(key)
    return args.get(key)


def require_some(input: Input | Mapping[str, Any], keys: Sequence[str]) -> None:
    """An update must give at least one of ``keys`` (a null counts as not given).

    Only whether each is given counts here: the values are read where the tool uses them.

    Raises:
        ToolError: ``invalid_input`` listing the keys that could be given.
    """
    present = input_of(input)
    if not any(present.get(key) is not None for key in keys):
        raise ToolError(
            "invalid_input",
            f"Nothing to change: give at least one of {', '.join(keys)}.",
            {"fields": list(keys)},
        )
