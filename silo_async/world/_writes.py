"""Write tools: who acts, on which record, what changed, and the audit entry — stated once.

Every write in a world follows one convention: its input names the actor (``actorId``), the
actor is resolved (and may be refused) before anything else, the record it acts on is looked up
(``not_found``) and checked (a guard raising ``invalid_state`` when it may no longer change),
fields change with ``{field, from, to}`` tracking, and one audit entry names the tool as its
action. :class:`Actor` builds such tools: the body receives a :class:`Write` holding the world,
the typed input, the resolved actor and the record, and says only what is particular to the
tool::

    ACTOR = w.Actor(w.fields.string("Id of the user making this change."), acting_user)
    VENDOR = w.Target("vendors", "vendorId", w.fields.string("Vendor id."), "vendor")

    class Blocking(w.Input):
        reason = w.fields.string("Why.")

    @ACTOR.write_tool(Blocking, target=VENDOR.guarded(not_merged))
    def block_vendor(call: w.Write[Blocking]) -> dict[str, Any]:  # its docstring: the description
        call.set("status", "blocked")
        call.set("statusReason", call.args.reason)
        return {"updated": call.record, "auditId": call.audit("Blocked.")}
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, overload

import attrs

from .._tools import Tool
from ._audit import audit
from ._builders import Schema
from ._define import Declaration
from ._fields import Field, Input
from ._records import Change, require_record, set_field

__all__ = ["Actor", "Target", "Write"]

#: ``guard(state, record)``: raises ``ToolError`` when the record may not change.
Guard = Callable[[Any, Any], None]
#: ``read(input, key)``: the value of ``input[key]`` (e.g. a field's ``read``).
IdReader = Callable[[Mapping[str, Any], str], Any]

if TYPE_CHECKING:  # a default, so plain ``Write`` stays valid for type checkers (PEP 696)
    from typing_extensions import TypeVar

    #: The :class:`Input` a write tool declared (``Write`` alone: any, or none).
    A = TypeVar("A", default=Any)
else:  # at run time a plain type variable: the core needs nothing beyond its four packages
    A = typing.TypeVar("A")
I = typing.TypeVar("I", bound=Input)  # noqa: E741 (an Input type)


def _property(schema: Schema | Field[Any], read: IdReader | None) -> tuple[Schema, IdReader | None]:
    """A property given as a schema or a field: its schema, and how its value is read."""
    if isinstance(schema, Field):
        return schema.schema, read or schema.read
    return schema, read


@attrs.frozen(init=False)
class Target:
    """The record a write tool acts on: ``state[collection][input[key]]``.

    Attributes:
        collection: the state key of the collection, e.g. ``leads``.
        key: the input key holding the record's id, e.g. ``leadId``.
        schema: that input property (what the agent reads about it): a field (whose reader
            reads the id, e.g. ``w.fields.string(...)``: stripped, an empty id refused with
            ``invalid_input``), or a schema (the id is read as given).
        entity: the audit log's ``entityType`` for the record, e.g. ``lead``.
        guard: ``guard(state, record)``, run right after the lookup; raises ``ToolError`` when
            the record may not change any more (closed, merged, archived).
        label: names the record in ``not_found`` where ``label_of(collection)`` cannot.
        read: ``read(input, key)`` -> the id to look up, when not the field's reader.
    """

    collection: str
    key: str
    schema: Schema
    entity: str
    guard: Guard | None = None
    label: str | None = None
    read: IdReader | None = None

    def __init__(
        self,
        collection: str,
        key: str,
        schema: Schema | Field[Any],
        entity: str,
        guard: Guard | None = None,
        label: str | None = None,
        read: IdReader | None = None,
    ) -> None:
        prop, reader = _property(schema, read)
        self.__attrs_init__(collection, key, prop, entity, guard, label, reader)

    def find(self, state: Any, input: Mapping[str, Any]) -> Any:
        """The record ``input`` names, once its guard allows the write.

        Raises:
            ToolError: ``not_found`` with details ``{collection, id}``, the reader's error, or
                the guard's.
        """
        record_id = input[self.key] if self.read is None else self.read(input, self.key)
        record = require_record(state, self.collection, record_id, self.label)
        if self.guard is not None:
            self.guard(state, record)
        return record

    def guarded(self, guard: Guard) -> Target:
        """The same target with ``guard`` run after every lookup."""
        return attrs.evolve(self, guard=guard)


class Write(Generic[A]):
    """One call of a write tool: the world, the input, who acts and on what, and what changed.

    ``Write[Claim]`` is the call of a tool declared with the :class:`Input` class ``Claim``.

    Attributes:
        state: the world.
        args: the typed view of the input (an instance of the tool's :class:`Input` class;
            ``None`` for a tool declared with schema properties).
        input: the tool's input as given (already schema-checked).
        actor: the acting record, as ``Actor.resolve`` returned it.
        record: the target record (``None`` for a tool without a target).
        action: the tool's name: the ``action`` of its audit entries.
        changes: the field changes :meth:`set` made, in order.
    """

    __slots__ = ("action", "actor", "args", "changes", "input", "record", "state", "target")

    def __init__(
        self,
        state: Any,
        input: dict[str, Any],
        actor: Any,
        record: Any,
        action: str,
        target: Target | None = None,
        args: A = None,  # type: ignore[assignment]  # a tool without an Input class has none
    ) -> None:
        self.state = state
        self.input = input
        self.args: A = args
        self.actor = actor
        self.record = record
        self.action = action
        self.target = target
        self.changes: list[Change] = []

    def set(self, field: str, value: Any, record: Any = None) -> bool:
        """Set ``field`` of the target (or of ``record``), tracked in :attr:`changes`.

        Returns:
            Whether the value changed (an equal value is not a change).
        """
        return set_field(self.record if record is None else record, field, value, self.changes)

    def set_given(self, fields: Sequence[str]) -> None:
        """:meth:`set` each of ``fields`` the input gives, in that order.

        The value set is the field's (read by the tool's :class:`Input`, when it declares the
        field: a :func:`~silo_async.world.fields.ref` sets the id), else the value as given; a
        field not given (absent or null) is left alone.
        """
        args = self.args
        for field in fields:
            if isinstance(args, Input) and field in args._fields:
                value = args._fields[field].stored(args)
            else:
                value = self.input.get(field)
            if value is not None:
                self.set(field, value)

    def add(self, kind: Target, record: Any, detail: str) -> str:
        """Store a new ``record`` in ``kind.collection`` under its id and audit its creation.

        Returns:
            The audit entry's id.
        """
        self.state[kind.collection][record["id"]] = record
        return self.audit(detail, (), entity=kind.entity, entity_id=record["id"])

    def audit(
        self,
        detail: str,
        changes: Sequence[Change] | None = None,
        *,
        entity: str | None = None,
        entity_id: str | None = None,
    ) -> str:
        """Append this call's audit entry (action: the tool's name) and return its id.

        Args:
            detail: what happened, in a sentence.
            changes: the field changes to record (default: :attr:`changes`).
            entity: the ``entityType`` (default: the target's).
            entity_id: the ``entityId`` (default: the target record's id).

        Raises:
            ValueError: no entity given and the tool has no target.
        """
        if entity is None or entity_id is None:
            if self.target is None:
                raise ValueError(f"{self.action}: audit() needs entity and entity_id")
            entity = self.target.entity if entity is None else entity
            entity_id = self.record["id"] if entity_id is None else entity_id
        entry_changes = self.changes if changes is None else changes
        return audit(
            self.state, self.actor["id"], self.action, entity, entity_id, detail, entry_changes
        )


WriteFn = Callable[[Write[Any]], Any]


@attrs.frozen(init=False)
class Actor:
    """Who makes a change: the input property every write takes, and how it is resolved.

    Attributes:
        schema: the property (who may act, e.g. "Must be an active user."): a field, whose
            reader reads the id, or a schema (the id is read as given).
        resolve: ``resolve(state, actor_id)`` -> the acting record (a mapping with an ``id``);
            raises ``ToolError`` (``not_found``, ``not_allowed``) for someone who may not act.
        key: the input key, ``actorId`` by convention.
        first: list the property first in input schemas (default: last).
        read: ``read(input, key)`` -> the id, when not the field's reader.
    """

    schema: Schema
    resolve: Callable[[Any, str], Any]
    key: str = "actorId"
    first: bool = False
    read: IdReader | None = None

    def __init__(
        self,
        schema: Schema | Field[Any],
        resolve: Callable[[Any, str], Any],
        key: str = "actorId",
        first: bool = False,
        read: IdReader | None = None,
    ) -> None:
        prop, reader = _property(schema, read)
        self.__attrs_init__(prop, resolve, key, first, reader)

    def actor_of(self, state: Any, input: Mapping[str, Any]) -> Any:
        """The acting record ``input`` names (read, then resolved).

        Raises:
            ToolError: the reader's ``invalid_input``, or what ``resolve`` raises.
        """
        actor_id = input[self.key] if self.read is None else self.read(input, self.key)
        return self.resolve(state, actor_id)

    @overload
    def write_tool(
        self,
        input: type[I],
        /,
        *,
        target: Target | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> Callable[[Callable[[Write[I]], Any]], Tool]: ...
    @overload
    def write_tool(
        self,
        name: str,
        description: str,
        input: type[I],
        /,
        *,
        target: Target | None = None,
    ) -> Callable[[Callable[[Write[I]], Any]], Tool]: ...
    @overload
    def write_tool(
        self,
        *spec: Any,
        target: Target | None = None,
        properties: Mapping[str, Schema] | None = None,
        required: Sequence[str] | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> Callable[[WriteFn], Tool]: ...

    def write_tool(
        self,
        *spec: Any,
        target: Target | None = None,
        properties: Mapping[str, Schema] | None = None,
        required: Sequence[str] | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> Callable[[Callable[[Write[Any]], Any]], Tool]:
        """Decorate ``fn(call: Write)`` as a write tool.

        Declared as ``write_tool(Input, target=...)`` (an :class:`Input` class: ``call.args``
        is then its typed view of the input), the tool is named after the function and
        described by its docstring's first paragraph (what the agent reads, so it may wrap over
        lines); ``write_tool(name, description, Input, ...)`` states both. The name is also the
        ``action`` of its audit entries. The form from before typed fields, ``(properties,
        required)`` with schema properties, still works.

        The input schema is closed: the actor property, the target's id property, then the
        tool's own, with the actor's property first or last (see ``first``); all of the actor,
        the target id and the tool's required ones are required. A call resolves the actor,
        then looks the target up (``not_found``) and runs its guard, then runs ``fn``.

        Args:
            spec: ``([name, description,] Input)`` or ``([name, description,] properties,
                required)``: the tool's own input.
            target: the record the tool acts on, if any.
            properties: the properties (or an Input class), when not given in ``spec``.
            required: which properties are required, when not given in ``spec``.
            name: the tool name, when not the function's.
            description: what the agent reads, when not the docstring's first paragraph.

        Raises:
            TypeError: ``spec`` is neither form.
            DefinitionError: no description and no docstring (when the decorator is applied).
        """
        declared = Declaration.parse(spec, properties, required, name, description)
        ids = {} if target is None else {target.key: target.schema}
        mine = {self.key: self.schema}
        if self.first:
            schema = declared.schema({**mine, **ids})
        else:
            schema = declared.schema(ids, mine)
        view = declared.input

        def make(fn: WriteFn) -> Tool:
            action = declared.name or fn.__name__
            named = attrs.evolve(declared, name=action)

            @functools.wraps(fn)
            def body(state: Any, input: dict[str, Any]) -> Any:
                actor = self.actor_of(state, input)
                record = None if target is None else target.find(state, input)
                args = None if view is None else view(input, state=state)
                return fn(Write(state, input, actor, record, action, target, args))

            return named.build(body, schema)

        return make
